"""A Spark the commands start on this machine listens on loopback only: its driver, its block
manager and its web UI (``ol-subset connect-server`` on a loopback ``--host``, ``ol-subset run``;
``demo``: tests/spark/test_demo.py), unless the user said where.

The sockets are read from /proc for the command's process and Spark's JVM below it, while Spark
runs; Spark's own defaults put the UI on every address and the driver on the machine's external
one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.spark import _loopback
from tests.spark.conftest import SUBPROCESS_MASTER
from tests.spark.connect_servers import connect_server
from tests.spark.listening import beyond_loopback, listening

pytestmark = pytest.mark.spark

SCRIPT = """
    import sys
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "true")
    for pair in sys.argv[1:]:
        builder = builder.config(*pair.split("=", 1))
    spark = builder.getOrCreate()
    spark.range(10).count()
    print("ui", spark.sparkContext.uiWebUrl.rsplit(":", 1)[1], flush=True)
    sys.stdin.readline()
    spark.stop()
"""


def _local_only() -> None:
    if os.environ.get(SUBPROCESS_MASTER):
        pytest.skip("the scripts run on the test cluster: Spark's driver is not local")


def test_a_connect_server_on_loopback_keeps_spark_there(tmp_path: Path) -> None:
    import pyspark

    if int(pyspark.__version__.split(".")[0]) < 4:
        pytest.skip("PySpark 3.5's pip package holds no Spark Connect server to start")
    _local_only()
    with connect_server(tmp_path / "server", "--conf", "spark.ui.enabled=true") as server:
        sockets = listening(server.process.pid)
        assert server.stop() == 0
    port = int(server.url.rsplit(":", 1)[1])
    assert ("127.0.0.1", port) in sockets
    assert len(sockets) >= 4, f"Connect, the UI, the driver, the block manager: {sockets}"
    assert beyond_loopback(sockets) == set()


def _run(tmp_path: Path, *settings: str) -> tuple[set[tuple[str, int]], int]:
    """The sockets of ``ol-subset run`` of a script making a local session (with
    ``settings``), and its UI's port."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    command = [sys.executable, "-m", "openlineage_subset", "run", "--output"]
    process = subprocess.Popen(
        [*command, str(tmp_path / "events.jsonl"), str(script), *settings],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=tmp_path,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        line = process.stdout.readline()
        assert line.startswith("ui "), line
        sockets = listening(process.pid)
        process.stdin.write("\n")
        process.stdin.flush()
        assert process.wait(timeout=180) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return sockets, int(line.split()[1])


def test_run_keeps_a_local_spark_on_loopback_unless_told(tmp_path: Path) -> None:
    _local_only()
    sockets, ui = _run(tmp_path / "default")
    assert ("127.0.0.1", ui) in sockets and len(sockets) >= 3
    assert beyond_loopback(sockets) == set()
    # the user's own choice for the driver is kept; the UI stays on loopback
    sockets, ui = _run(tmp_path / "told", "spark.driver.bindAddress=0.0.0.0")
    assert ("127.0.0.1", ui) in sockets
    assert {address for address, _ in beyond_loopback(sockets)} <= {"0.0.0.0", "::"}
    assert beyond_loopback(sockets), "the driver listens where the script said"


class _Builder:
    """The options a ``SparkSession.Builder`` holds, as :mod:`._loopback` reads them."""

    def __init__(self, **options: str) -> None:
        self._options = {key.replace("_", "."): value for key, value in options.items()}

    def config(self, key: str, value: str) -> Any:
        self._options[key] = value
        return self


@pytest.fixture
def no_spark_yet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As before a script's first session: no SparkContext, no settings from outside."""
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    for name in ("SPARK_LOCAL_IP", "PYSPARK_SUBMIT_ARGS", "SPARK_REMOTE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))


def test_a_local_master_gets_loopback_but_what_the_user_set(no_spark_yet: None) -> None:
    builder = _Builder(spark_master="local[2]", spark_driver_host="10.1.2.3")
    with _loopback.local_session_on_loopback(builder):
        assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1", "while Spark's JVM starts"
    assert "SPARK_LOCAL_IP" not in os.environ, "the script's environment as it was"
    assert builder._options == {
        "spark.master": "local[2]",
        "spark.driver.host": "10.1.2.3",
        "spark.driver.bindAddress": "127.0.0.1",
    }


ELSEWHERE = [  # where the master is given: the builder, spark-submit's arguments, its defaults
    ({"spark.master": "yarn"}, "", ""),
    ({}, "--master spark://cluster:7077 pyspark-shell", ""),
    ({}, "", "spark.master  k8s://https://cluster:6443\n"),
    ({}, "", "# a comment\nspark.master=yarn\n"),
]


@pytest.mark.parametrize("where", ELSEWHERE)
def test_a_master_elsewhere_keeps_sparks_defaults(
    no_spark_yet: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: tuple[dict[str, str], str, str],
) -> None:
    options, submit_args, defaults = where
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", submit_args)
    (tmp_path / "spark-defaults.conf").write_text(defaults, encoding="utf-8")
    builder = _Builder()
    builder._options.update(options)
    with _loopback.local_session_on_loopback(builder):
        assert "SPARK_LOCAL_IP" not in os.environ
    assert builder._options == options, "executors elsewhere must reach the driver"


def test_settings_given_to_spark_submit_are_the_users(
    no_spark_yet: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = "--conf spark.driver.bindAddress=0.0.0.0 pyspark-shell"
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", given)
    assert _loopback.loopback_settings({}) == {"spark.driver.host": "127.0.0.1"}
    assert _loopback.master_of({}) == "local[*]", "spark-submit's default"
