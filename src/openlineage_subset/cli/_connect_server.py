"""``ol-subset connect-server``: a Spark Connect server whose clients' actions are captured.

A drop-in for Spark's ``start-connect-server.sh`` in client mode, on any cluster manager
(``--master``), with Spark's options passed through (``--conf k=v``, ``--jars``) and capture's
(``--output``, ``--outbox``, ``--namespace``, the ``OPENLINEAGE_*`` variables,
``spark.openlineage.*`` confs). It prints ``ready: sc://HOST:PORT`` on standard output once
clients can connect; on SIGTERM or SIGINT it stops taking work, closes the capture, stops Spark
and exits 0. What cannot start (PySpark 3.5, no Java, a port in use, a bad setting) is one line
on standard error and exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import errno
import signal
import socket
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from openlineage_subset.cli._java import spark_ready
from openlineage_subset.cli._output import EXIT_OK, EXIT_UNUSABLE
from openlineage_subset.cli._run import add_capture_arguments

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 15002
DESCRIPTION = (
    "Start a Spark Connect server (Spark's own, from the installed PySpark 4) whose clients' "
    "actions are captured: each client session is a parent run of its own. Prints "
    "'ready: sc://HOST:PORT' when clients can connect; SIGTERM or SIGINT stops it (capture "
    "closed, events delivered), exit 0. Options not listed go to Spark with --conf."
)


def add_connect_server_parser(commands: Any) -> None:
    """Add ``connect-server`` to the ``ol-subset`` subcommands."""
    server = commands.add_parser(
        "connect-server", help="a Spark Connect server with capture", description=DESCRIPTION
    )
    server.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})"
    )
    server.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port to listen on, 0 for any free one (default: {DEFAULT_PORT})",
    )
    server.add_argument("--master", help="Spark's master (default: local[*])")
    server.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, spark.openlineage.* included (repeat for each)",
    )
    server.add_argument("--jars", metavar="JARS", help="comma-separated jars for Spark")
    add_capture_arguments(server)
    server.add_argument(
        "--outbox",
        metavar="DIR",
        help="folder events wait in until delivered (default: $OL_SUBSET_OUTBOX, else beside "
        "the output)",
    )
    server.set_defaults(handler=connect_server_command)


def _say(message: str) -> int:
    print(f"ol-subset connect-server: {message}", file=sys.stderr)
    return EXIT_UNUSABLE


def _settings(pairs: list[str]) -> dict[str, str] | str:
    """The ``--conf`` pairs as a mapping, or what is wrong with one of them."""
    found = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            return f"--conf takes KEY=VALUE, such as --conf spark.executor.memory=4g; got {pair!r}"
        found[key.strip()] = value
    return found


def _no_connect_server() -> str | None:
    """Why the installed PySpark cannot run a Spark Connect server; None when it can."""
    import pyspark  # noqa: PLC0415  (checked by spark_ready)

    if int(pyspark.__version__.split(".")[0]) < 4:
        return (
            f"needs PySpark 4: the pip package of PySpark {pyspark.__version__} holds no Spark "
            "Connect server (pip install 'pyspark>=4,<5', or run Spark's "
            "start-connect-server.sh, whose clients are not captured)"
        )
    jars = Path(pyspark.__file__).parent / "jars"
    if not any(jars.glob("spark-connect_*.jar")):
        return (
            f"the installed PySpark has no Spark Connect server jar in {jars} (a client-only "
            "package?): install the full 'pyspark' package"
        )
    return None


def _port_taken(host: str, port: int) -> str | None:
    """Why ``host``:``port`` cannot be listened on; None when it can (now)."""
    if port == 0:
        return None
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, port))
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            return f"{host}:{port} is in use (another server?): stop it, or choose --port"
        return f"cannot listen on {host}:{port}: {error.strerror or error}"
    return None


def connect_server_command(args: argparse.Namespace) -> int:
    """Run the server until SIGTERM or SIGINT; the exit status."""
    if not 0 <= args.port <= 65535:
        return _say(f"--port takes a port number from 0 to 65535; got {args.port}")
    conf = _settings(args.conf)
    if isinstance(conf, str):
        return _say(conf)
    if not spark_ready("connect-server"):
        return EXIT_UNUSABLE
    problem = _no_connect_server() or _port_taken(args.host, args.port)
    if problem is not None:
        return _say(problem)
    # Imported here: the other commands start without loading capture (or needing PySpark).
    from openlineage_subset.cli._run import summary  # noqa: PLC0415
    from openlineage_subset.spark import (  # noqa: PLC0415
        first_error_line,
        spark_errors,
        start_connect_server,
    )

    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    try:
        server = start_connect_server(
            host=args.host,
            port=args.port,
            master=args.master,
            conf=conf,
            jars=args.jars,
            output=args.output,
            outbox=args.outbox,
            namespace=args.namespace,
        )
    except Exception as error:
        if not isinstance(error, (*spark_errors(), RuntimeError, ValueError, OSError)):
            raise
        return _say(f"Spark did not start: {first_error_line(error)}")
    # After Spark started: PySpark's SparkContext puts a SIGINT handler of its own in place.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    print(f"ready: {server.url}", flush=True)
    while not stopping.wait(timeout=1.0):
        pass
    print("ol-subset connect-server: stopping: no new work, capture closing", file=sys.stderr)
    server.stop()
    print(f"ol-subset connect-server: {summary(server.handle)}", file=sys.stderr)
    return EXIT_OK
