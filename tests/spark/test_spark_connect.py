"""Spark Connect sessions: captured where the server runs in the process, said uncaptured where
it does not, and never a broken job.

A real Spark Connect server (PySpark's own, on 127.0.0.1) serves a client that runs in a
subprocess of its own, as a Connect client has no JVM beside it and this process has one. A
script using ``builder.remote("local[2]")`` has PySpark start the server in its own process:
under ``ol-subset run`` that server's sessions are captured.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from openlineage_subset.cli import CONNECT_NOT_CAPTURED
from tests.spark.conftest import ol_subset
from tests.spark.standalone import ConnectServer

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


@pytest.fixture(scope="module")
def connect_url(connect_client: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ConnectServer(tmp_path_factory.mktemp("connect")) as server:
        yield server.url


CLIENT = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    from openlineage_subset.spark import SparkConnectNotSupportedError, enable, input_datasets

    spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
    rows = spark.range(10).where("id > 3")
    said = {"count": rows.count()}
    for name, call in (("enable", lambda: enable(spark)), ("input", lambda: input_datasets(rows))):
        try:
            call()
            said[name] = None
        except SparkConnectNotSupportedError as error:
            said[name] = str(error)
    print(json.dumps(said))
    """
)


def _python(script: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script), *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_enable_and_input_datasets_say_they_need_a_classic_session(
    connect_url: str, tmp_path: Path
) -> None:
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    done = _python(script, connect_url)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["count"] == 6, "the session works: only capture refuses it"
    for call in ("enable", "input"):
        message = said[call]
        assert message is not None, f"{call} accepted a Spark Connect object"
        assert "Spark Connect" in message and "classic SparkSession" in message
        assert "without .remote()" in message, "the message says what to do"
        assert "py4j" not in message.lower() and "JVM_ATTRIBUTE" not in message


JOB = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
    spark.range(5).write.mode("overwrite").parquet(sys.argv[2])
    print("rows", spark.read.parquet(sys.argv[2]).count())
    """
)


def test_ol_subset_run_says_a_connect_session_is_not_captured_and_runs_it(
    connect_url: str, tmp_path: Path
) -> None:
    script = tmp_path / "job.py"
    script.write_text(JOB)
    events = tmp_path / "events.jsonl"
    done = ol_subset("run", "--output", str(events), str(script), connect_url, str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    assert "rows 5" in done.stdout
    assert done.stderr.count(CONNECT_NOT_CAPTURED) == 1
    assert not events.exists() or events.read_text() == "", "nothing claimed as captured"


IN_PROCESS_JOB = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote("local[2]").appName("Connect Job").getOrCreate()
    rows = spark.range(20).selectExpr("id", "id % 2 AS part")
    rows.write.partitionBy("part").mode("overwrite").parquet(sys.argv[1])
    print("rows", spark.read.parquet(sys.argv[1]).where("part = 1").count())
    spark.stop()
    """
)


def test_ol_subset_run_captures_a_connect_server_started_in_the_script(
    connect_client: None, tmp_path: Path
) -> None:
    script = tmp_path / "job.py"
    script.write_text(IN_PROCESS_JOB)
    events_file, target = tmp_path / "events.jsonl", tmp_path / "out"
    done = ol_subset("run", "--output", str(events_file), str(script), str(target))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rows 10" in done.stdout
    assert CONNECT_NOT_CAPTURED not in done.stderr
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    runs: dict[str, list[dict[str, object]]] = {}
    for event in events:
        runs.setdefault(event["run"]["runId"], []).append(event)
    (application,) = [run for run in runs.values() if run[0]["job"]["name"] == "connect_job"]
    (session,) = [
        run for run in runs.values() if "." not in run[0]["job"]["name"] and run != application
    ]
    assert [e["eventType"] for e in session] == ["START", "COMPLETE"], "the client stopped"
    parent_of_session = session[0]["run"]["facets"]["parent"]["run"]["runId"]
    assert parent_of_session == application[0]["run"]["runId"]
    actions = [run for run in runs.values() if "." in run[0]["job"]["name"]]
    assert len(actions) == 2, "the write and the read"
    for action in actions:
        parent = action[0]["run"]["facets"]["parent"]["run"]["runId"]
        assert parent == session[0]["run"]["runId"], "the client session's run is the parent"
    (write,) = [run for run in actions if run[-1]["outputs"]]
    (read,) = [run for run in actions if run[-1]["inputs"]]
    assert write[-1]["outputs"][0]["name"] == str(target)
    (dataset,) = read[-1]["inputs"]
    partitions = dataset["inputFacets"]["subset"]["inputCondition"]["partitions"]
    assert [p["dimensions"] for p in partitions] == [{"part": "1"}], "the pruned read, exactly"
