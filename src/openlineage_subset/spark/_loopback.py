"""A local Spark's own sockets on loopback: its driver, its block manager and its web UI.

Spark binds its driver's RPC and block manager to the machine's external address, and its web
UI to every address (``*:4040``), even when everything runs on this machine (``local[*]``): a
Connect server listening on 127.0.0.1 still opened Spark to the network. So the commands that
start a Spark of their own (``ol-subset run``, ``demo``, ``connect-server`` with a loopback
``--host``) bind those to 127.0.0.1 when the master runs on this machine (``local``,
``local[N]``, ``local-cluster[...]``), unless the user said where (``spark.driver.host``,
``spark.driver.bindAddress``, ``SPARK_LOCAL_IP``). The web UI has no setting of its own: it
listens where ``SPARK_LOCAL_IP`` says, which is set while Spark's JVM starts. A master
elsewhere (a cluster) keeps Spark's defaults: its executors must reach the driver.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
ADDRESS_SETTINGS = ("spark.driver.host", "spark.driver.bindAddress")
LOCAL_IP = "SPARK_LOCAL_IP"
"""Where Spark binds what has no setting of its own (the web UI), read when its JVM starts."""
_CONNECT = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")
"""What makes PySpark build a Spark Connect client, which starts no Spark here."""
_DEFAULT_MASTER = "local[*]"
_SETTING = re.compile(r"([^\s=:]+)\s*[=:\s]\s*(.*)")
"""What spark-submit (and so PySpark) runs on when no master is given anywhere."""


def runs_here(master: str) -> bool:
    """Whether Spark's ``master`` runs on this machine (its executors too).

    >>> runs_here("local[4]"), runs_here("local-cluster[2,1,1024]"), runs_here("yarn")
    (True, True, False)
    """
    return master.strip().startswith("local")


def loopback_settings(given: Mapping[str, str]) -> dict[str, str]:
    """The settings that bind the driver and its block manager to loopback, but those the
    user set in ``given`` (or through ``PYSPARK_SUBMIT_ARGS``).

    >>> loopback_settings({"spark.driver.host": "10.0.0.5"})
    {'spark.driver.bindAddress': '127.0.0.1'}
    """
    submitted = _submitted()
    return {key: LOOPBACK for key in ADDRESS_SETTINGS if key not in given and key not in submitted}


def master_of(options: Mapping[str, str]) -> str:
    """The master a session built with ``options`` runs on: its ``spark.master``, else the
    ``--master`` of ``PYSPARK_SUBMIT_ARGS``, else ``spark-defaults.conf``'s, else spark-submit's
    default, ``local[*]``."""
    return options.get("spark.master") or _submitted().get("spark.master") or _DEFAULT_MASTER


@contextmanager
def loopback_ui() -> Iterator[None]:
    """While it lasts (Spark's JVM starting), ``SPARK_LOCAL_IP`` is 127.0.0.1, unless set."""
    if LOCAL_IP in os.environ:
        yield
        return
    os.environ[LOCAL_IP] = LOOPBACK
    try:
        yield
    finally:
        os.environ.pop(LOCAL_IP, None)


def _submitted() -> dict[str, str]:
    """The settings spark-submit takes from outside the program: ``spark-defaults.conf``, then
    ``PYSPARK_SUBMIT_ARGS`` (``--master``, ``--conf KEY=VALUE``), which wins."""
    found = _defaults_file()
    try:
        words = shlex.split(os.environ.get("PYSPARK_SUBMIT_ARGS", ""))
    except ValueError:
        words = []
    for word, following in itertools.pairwise([*words, ""]):
        if word == "--master" or word.startswith("--master="):
            found["spark.master"] = word.partition("=")[2] or following
        elif word == "--conf" and "=" in following:
            key, _, value = following.partition("=")
            found[key.strip()] = value
    return found


def _defaults_file() -> dict[str, str]:
    """The settings of ``spark-defaults.conf`` (in ``$SPARK_CONF_DIR``, else
    ``$SPARK_HOME/conf``, else PySpark's), as Java reads a properties file: a key, then
    ``=``, ``:`` or spaces, then its value; ``#`` or ``!`` for comments. Empty without a
    Spark to read them (neither folder set, and no PySpark installed)."""
    folder = os.environ.get("SPARK_CONF_DIR")
    if not folder:
        home = os.environ.get("SPARK_HOME")
        if not home:
            try:
                import pyspark  # noqa: PLC0415  (the spark extra)
            except ImportError:
                return {}
            home = os.path.dirname(pyspark.__file__)
        folder = os.path.join(home, "conf")
    try:
        text = (Path(folder) / "spark-defaults.conf").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found = {}
    for line in text.splitlines():
        setting = _SETTING.fullmatch(line.strip())
        if setting and not line.strip().startswith(("#", "!")):
            found[setting[1]] = setting[2]
    return found


@contextmanager
def local_session_on_loopback(builder: Any) -> Iterator[None]:
    """While ``builder`` (a classic ``SparkSession.Builder``) makes its session: when that
    starts a Spark of this machine, bound to loopback as the module says; else nothing."""
    from pyspark import SparkContext  # noqa: PLC0415  (the spark extra)

    options: Mapping[str, str] = getattr(builder, "_options", {})
    remote = "spark.remote" in options or any(name in os.environ for name in _CONNECT)
    if SparkContext._active_spark_context is not None or remote:
        yield  # a Spark running already, or a Spark Connect client: not started here
        return
    if not runs_here(master_of(options)):
        yield
        return
    for key, value in loopback_settings(options).items():
        builder.config(key, value)
    with loopback_ui():
        yield
