"""A Spark Connect server with capture: what ``ol-subset connect-server`` runs.

The server is Spark's own (``SparkConnectPlugin``, started with the application's
SparkContext) in a classic application of this process, so that capture listens to it like
any other (``enable``): every client session's actions, each session a parent run of its own
(``spark/_connect.py``). Stopping it stops taking work first, then closes the capture (the
sessions still open end ABORT, every event is delivered or kept in the outbox), then stops
Spark.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from openlineage_subset.producer import is_loopback, scrubbed_logger
from openlineage_subset.spark._capture import CaptureHandle, enable
from openlineage_subset.spark._jvm import PLUGIN, connect_server_port, stop_connect_server
from openlineage_subset.spark._loopback import local_session_on_loopback

log = scrubbed_logger("openlineage_subset.spark")

CONNECT_ENVIRONMENT = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")
"""What would make PySpark build a Connect client instead of the server's classic session."""
DEFAULT_APP_NAME = "Spark Connect server"


@dataclass
class RunningServer:
    """A started Connect server, its capture, and where clients reach it."""

    spark: Any
    handle: CaptureHandle
    host: str
    port: int

    @property
    def url(self) -> str:
        """What a client passes to ``SparkSession.builder.remote(...)``."""
        return f"sc://{self.host}:{self.port}"

    def stop(self, timeout: float | None = None) -> bool:
        """Stop taking work, close the capture (delivering for at most ``timeout`` seconds),
        stop Spark; False when events stay in the outbox. Each step happens even when the one
        before failed (said in the log)."""
        # The actions done so far are attributed to their sessions while the server still
        # knows them; the sessions it closes from now on end ABORT (it stopped, not them).
        self.handle.flush(timeout=0)
        self.handle.connect.stopping()
        try:
            stop_connect_server(self.spark)
        except Exception as error:  # the capture is closed all the same
            self.handle.record_error("stopping the Spark Connect server", error)
        delivered = self.handle.close(timeout)
        try:
            self.spark.stop()
        except Exception:  # Spark's own shutdown hook may have stopped it first
            log.warning("Spark did not stop cleanly", exc_info=True)
        return delivered


def start_connect_server(
    *,
    host: str,
    port: int,
    master: str | None,
    conf: Mapping[str, str],
    jars: str | None,
    output: str | None,
    outbox: str | None,
    namespace: str | None,
) -> RunningServer:
    """Start Spark with a Connect server on ``host``:``port`` (0: a free port) and capture on.

    ``conf`` goes to Spark as ``--conf`` would (``spark.openlineage.*`` included); ``master``
    and ``jars`` as ``--master`` and ``--jars``. On a loopback ``host`` with a master of this
    machine, Spark's driver, block manager and web UI listen on loopback too
    (:mod:`._loopback`), unless ``conf`` says where. Raises what Spark raises when it cannot
    start.

    Example::

        server = start_connect_server(host="127.0.0.1", port=15002, master="local[4]",
                                      conf={}, jars=None, output="events.jsonl",
                                      outbox=None, namespace=None)
        print(server.url)      # sc://127.0.0.1:15002
        server.stop()
    """
    from pyspark.sql import SparkSession  # noqa: PLC0415  (the spark extra)

    for variable in CONNECT_ENVIRONMENT:
        os.environ.pop(variable, None)
    settings = dict(conf)
    plugins = [p for p in settings.pop("spark.plugins", "").split(",") if p.strip()]
    builder: Any = SparkSession.builder.master(master or "local[*]")
    builder = builder.appName(settings.pop("spark.app.name", DEFAULT_APP_NAME))
    for key, value in settings.items():
        builder = builder.config(key, value)
    builder = builder.config("spark.plugins", ",".join([*plugins, PLUGIN]))
    builder = builder.config("spark.connect.grpc.binding.address", host)
    builder = builder.config("spark.connect.grpc.binding.port", str(port))
    builder = builder.config("spark.api.mode", "classic")
    if jars:
        builder = builder.config("spark.jars", jars)
    # A Connect port on loopback, a Spark of this machine: its own sockets on loopback too.
    on_loopback = local_session_on_loopback(builder) if is_loopback(host) else nullcontext()
    with on_loopback:
        spark = builder.getOrCreate()
    try:
        handle = enable(spark, output=output, outbox=outbox, namespace=namespace)
        bound = connect_server_port(spark)
        if bound is None:
            raise RuntimeError("Spark started without its Spark Connect server")
    except BaseException:
        spark.stop()
        raise
    return RunningServer(spark, handle, host, bound)
