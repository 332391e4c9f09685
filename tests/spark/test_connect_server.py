"""``ol-subset connect-server``: a real Spark Connect server whose clients' actions are captured.

The server is started here as a user starts it (``python -m openlineage_subset connect-server``,
in a process of its own, stopped by its process id) and its clients are PySpark's own Connect
client, in subprocesses. On the test cluster (``nox -s cluster``) the server runs its queries
there (``--master``), as in client mode on any cluster manager.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.spark.conftest import SUBPROCESS_MASTER, ol_subset
from tests.spark.connect_servers import connect_server, ready_url

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


def _client(script: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


TENANT = """
    import sys
    from pyspark.sql import SparkSession

    url, name, lake = sys.argv[1:4]
    spark = SparkSession.builder.remote(url).getOrCreate()
    spark.conf.set("spark.openlineage.appName", name)
    if len(sys.argv) > 4:
        parent_namespace, parent_name, parent_run = sys.argv[4:7]
        spark.conf.set("spark.openlineage.parentJobNamespace", parent_namespace)
        spark.conf.set("spark.openlineage.parentJobName", parent_name)
        spark.conf.set("spark.openlineage.parentRunId", parent_run)
    rows = spark.range(20).selectExpr("id", "id % 4 AS part")
    rows.write.partitionBy("part").mode("overwrite").parquet(lake)
    print("rows", spark.read.parquet(lake).where("part = 1").count())
    try:
        spark.read.parquet(lake).where("part = 2").selectExpr("raise_error('bad row')").collect()
    except Exception as error:
        print("error", str(error).splitlines()[0])
    spark.stop()
"""
AIRFLOW_RUN = "0190f4a7-1c2b-7d3e-8f4a-5b6c7d8e9f00"


def test_each_client_session_is_a_parent_run_of_its_own(
    connect_client: None, tmp_path: Path
) -> None:
    with connect_server(tmp_path / "server") as server:
        clients = [
            threading.Thread(
                target=lambda name=name, extra=extra: results.append(
                    (name, _client(TENANT, server.url, name, str(tmp_path / name), *extra))
                )
            )
            for name, extra in (("alice", ()), ("bob", ("airflow", "dag.load", AIRFLOW_RUN)))
        ]
        results: list[tuple[str, subprocess.CompletedProcess[str]]] = []
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        for name, done in results:
            assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
            assert "rows 5" in done.stdout
            assert "error [USER_RAISED_EXCEPTION] bad row" in done.stdout, "Spark's own error"
        assert server.stop() == 0
    runs = server.runs()
    application = [r for r in runs.values() if "parent" not in r[0]["run"]["facets"]]
    assert len(application) == 1 and application[0][-1]["eventType"] == "COMPLETE"
    sessions = {
        r[0]["job"]["name"]: r for r in runs.values() if r[0]["job"]["name"] in ("alice", "bob")
    }
    assert set(sessions) == {"alice", "bob"}
    for session in sessions.values():
        assert [e["eventType"] for e in session] == ["START", "COMPLETE"], "the client stopped"
    bob_parent = sessions["bob"][0]["run"]["facets"]["parent"]
    assert bob_parent["job"] == {"namespace": "airflow", "name": "dag.load"}
    assert bob_parent["run"]["runId"] == AIRFLOW_RUN
    alice_parent = sessions["alice"][0]["run"]["facets"]["parent"]
    assert alice_parent["run"]["runId"] == application[0][0]["run"]["runId"]
    for name, session in sessions.items():
        session_run = session[0]["run"]["runId"]
        actions = [
            r
            for r in runs.values()
            if r[0]["run"]["facets"].get("parent", {}).get("run", {}).get("runId") == session_run
        ]
        kinds = sorted(
            ("write" if r[-1]["outputs"] else "read", r[-1]["eventType"]) for r in actions
        )
        assert kinds == [("read", "COMPLETE"), ("read", "FAIL"), ("write", "COMPLETE")], name
        (read,) = [r for r in actions if r[-1]["inputs"] and r[-1]["eventType"] == "COMPLETE"]
        condition = read[-1]["inputs"][0]["inputFacets"]["subset"]["inputCondition"]
        assert [p["dimensions"] for p in condition["partitions"]] == [{"part": "1"}]
        assert read[-1]["inputs"][0]["name"] == str(tmp_path / name)
        (failed,) = [r for r in actions if r[-1]["eventType"] == "FAIL"]
        assert "bad row" in failed[-1]["run"]["facets"]["errorMessage"]["message"]
        condition = failed[-1]["inputs"][0]["inputFacets"]["subset"]["inputCondition"]
        assert [p["dimensions"] for p in condition["partitions"]] == [{"part": "2"}]


LEAVING = """
    import os, sys
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
    spark.conf.set("spark.openlineage.appName", "leaver")
    spark.range(3).write.mode("overwrite").parquet(sys.argv[2])
    os._exit(0)  # gone, without spark.stop()
"""


def test_a_client_gone_without_stopping_ends_abort_after_the_session_timeout(
    connect_client: None, tmp_path: Path
) -> None:
    timeouts = (
        "--conf",
        "spark.connect.session.manager.defaultSessionTimeout=4s",
        "--conf",
        "spark.connect.session.manager.maintenanceInterval=1s",
    )
    with connect_server(tmp_path / "server", *timeouts) as server:
        done = _client(LEAVING, server.url, str(tmp_path / "left"))
        assert done.returncode == 0, done.stderr[-2000:]
        ended = threading.Event()

        def session_ended() -> bool:
            return any(
                r[0]["job"]["name"] == "leaver" and len(r) == 2 for r in server.runs().values()
            )

        for _ in range(60):
            if server.events.exists() and session_ended():
                ended.set()
                break
            threading.Event().wait(1)
        assert server.stop() == 0
    assert ended.is_set(), "the session run ended while the server ran (its timeout passed)"
    (session,) = [r for r in server.runs().values() if r[0]["job"]["name"] == "leaver"]
    assert session[-1]["eventType"] == "ABORT"
    message = session[-1]["run"]["facets"]["errorMessage"]["message"]
    assert "left without stopping" in message and "session timeout is 4 s" in message


def test_sigterm_closes_the_capture_and_leaves_nothing_in_the_outbox(
    connect_client: None, tmp_path: Path
) -> None:
    with connect_server(tmp_path / "server") as server:
        done = _client(TENANT, server.url, "carol", str(tmp_path / "carol"))
        assert done.returncode == 0, done.stderr[-2000:]
        assert server.stop(signal.SIGINT) == 0
    log = server.stderr.read_text()
    assert "Traceback" not in log, log[-3000:]
    assert "left in the outbox" not in log
    outbox = server.events.with_name("events.jsonl.outbox")
    pending = [p for p in outbox.rglob("*.jsonl") if p.stat().st_size] if outbox.exists() else []
    assert all(p.name == "cursor.jsonl" for p in pending) or not pending
    assert len(server.runs()) == 1 + 1 + 3, "application, session, three actions"


STAYING = """
    import sys, time
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
    spark.conf.set("spark.openlineage.appName", "stayer")
    spark.range(3).write.mode("overwrite").parquet(sys.argv[2])
    print("acted", flush=True)
    time.sleep(300)
"""


def test_sessions_open_when_the_server_stops_end_abort(
    connect_client: None, tmp_path: Path
) -> None:
    with connect_server(tmp_path / "server") as server:
        client = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(STAYING), server.url, str(tmp_path / "s")],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert client.stdout is not None and client.stdout.readline() == "acted\n"
            assert server.stop() == 0
        finally:
            client.kill()
            client.wait(timeout=60)
    (session,) = [r for r in server.runs().values() if r[0]["job"]["name"] == "stayer"]
    assert session[-1]["eventType"] == "ABORT"
    message = session[-1]["run"]["facets"]["errorMessage"]["message"]
    assert "server stopped while session" in message
    (action,) = [r for r in server.runs().values() if r[0]["job"]["name"].startswith("stayer.")]
    assert action[-1]["eventType"] == "COMPLETE", "its action was captured before the stop"


def test_a_server_killed_loses_no_event_of_its_outbox(connect_client: None, tmp_path: Path) -> None:
    with connect_server(tmp_path / "server") as server:
        done = _client(TENANT, server.url, "dave", str(tmp_path / "dave"))
        assert done.returncode == 0, done.stderr[-2000:]
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=60)
    written = server.runs() if server.events.exists() else {}
    replayed = ol_subset(
        "replay",
        str(server.events.with_name("events.jsonl.outbox")),
        "--output",
        str(server.events),
    )
    assert replayed.returncode == 0, replayed.stderr
    after = server.runs()
    actions = [r for r in after.values() if r[0]["job"]["name"].startswith("dave.")]
    assert len(actions) == 3, "every action's events, written or replayed"
    assert set(written) <= set(after)


PIPELINE = """
    import sys
    from pyspark.sql import SparkSession

    mode, target, root = sys.argv[1:4]
    if mode == "connect":
        spark = SparkSession.builder.remote(target).getOrCreate()
    else:
        spark = (
            SparkSession.builder.master(target).appName("pipeline")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.warehouse.dir", root + "/warehouse").getOrCreate()
        )
    sales, daily = root + "/sales", root + "/daily"
    rows = spark.range(40).selectExpr(
        "id", "CAST(id % 4 AS STRING) AS day", "IF(id % 2 = 0, 'PL', 'DE') AS country"
    )
    rows.write.partitionBy("day", "country").mode("overwrite").parquet(sales)
    spark.read.parquet(sales).where("day IN ('1', '2') AND country = 'PL' AND id > 3").count()
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    picked = spark.read.parquet(sales).where("day = '1'")
    picked.write.partitionBy("day", "country").mode("overwrite").parquet(daily)
    spark.sql(
        "CREATE TABLE totals (country STRING, n BIGINT, day STRING) USING parquet "
        "PARTITIONED BY (day)"
    )
    spark.sql(
        "INSERT OVERWRITE TABLE totals PARTITION (day = '1') "
        f"SELECT country, count(*) FROM parquet.`{daily}` GROUP BY country"
    )
    try:
        spark.read.parquet(sales).where("day = '3'").selectExpr("raise_error('boom')").collect()
    except Exception:
        print("failed as planned")
    spark.stop()
"""


def _actions(runs: dict[str, list[dict[str, Any]]], root: Path) -> list[Any]:
    """Each action's events as datasets and facets, roots and ids aside, in the order run."""
    text = str(root)

    def plain(datasets: list[dict[str, Any]]) -> list[Any]:
        return json.loads(json.dumps(datasets).replace(text, "ROOT"))

    found = []
    for events in sorted(runs.values(), key=lambda r: r[0]["eventTime"]):
        if "." not in events[0]["job"]["name"]:
            continue  # the application's run, a Connect session's run
        found.append(
            [
                (e["eventType"], plain(e.get("inputs", [])), plain(e.get("outputs", [])))
                for e in events
            ]
        )
    return found


def test_classic_and_connect_give_the_same_datasets_and_facets(
    connect_client: None, tmp_path: Path
) -> None:
    """One pipeline, run classic under ``ol-subset run`` and through the Connect server."""
    script = tmp_path / "pipeline.py"
    script.write_text(textwrap.dedent(PIPELINE))
    classic_root, classic_events = tmp_path / "classic", tmp_path / "classic.jsonl"
    master = os.environ.get(SUBPROCESS_MASTER, "local[2]")
    done = ol_subset(
        "run", "--output", str(classic_events), str(script), "classic", master, str(classic_root)
    )
    assert done.returncode == 0 and "failed as planned" in done.stdout, done.stderr[-3000:]
    classic: dict[str, list[dict[str, Any]]] = {}
    for line in classic_events.read_text().splitlines():
        event = json.loads(line)
        classic.setdefault(event["run"]["runId"], []).append(event)
    connect_root = tmp_path / "connect"
    with connect_server(connect_root) as server:  # its warehouse: connect/warehouse
        done = _client(PIPELINE, "connect", server.url, str(connect_root))
        assert done.returncode == 0 and "failed as planned" in done.stdout, done.stderr[-3000:]
        assert server.stop() == 0
    expected = _actions(classic, classic_root)
    assert len(expected) == 6, "write, read, dynamic overwrite, create, insert, failed read"
    assert _actions(server.runs(), connect_root) == expected


PLAIN_SERVER = """
    import signal, sys, threading
    from pyspark.sql import SparkSession
    from openlineage_subset.spark._jvm import connect_server_port

    builder = SparkSession.builder.master(sys.argv[1]).config("spark.ui.enabled", "false")
    for key, value in {
        "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": "0",
        "spark.api.mode": "classic",
        "spark.sql.warehouse.dir": sys.argv[2],
    }.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    print(f"ready: sc://127.0.0.1:{connect_server_port(spark)}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    spark.stop()
"""
"""Spark's own Connect server, with no capture: what a client gets from Spark alone."""

FAILING_CLIENT = """
    import json, re, sys
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
    lake = sys.argv[2]
    if sys.argv[3:] == ["write"]:
        spark.range(6).selectExpr("id", "id % 2 AS part").write.mode("overwrite").parquet(lake)
    seen = []
    for attempt in (
        lambda: spark.read.parquet(lake).select("no_such_col").collect(),
        lambda: spark.read.parquet(lake + "/missing").count(),
        lambda: spark.sql("SELECT * FROM no_such_table").collect(),
    ):
        try:
            attempt()
        except Exception as error:
            text = re.sub(r"#\\d+L?", "#<id>", str(error))
            seen.append([type(error).__name__, error.getCondition(), text])
    spark.stop()
    print(json.dumps(seen))
"""


def _errors_seen(url: str, lake: Path, *first: str) -> list[list[str]]:
    done = _client(FAILING_CLIENT, url, str(lake), *first)
    assert done.returncode == 0, done.stderr[-3000:]
    seen: list[list[str]] = json.loads(done.stdout.splitlines()[-1])
    assert len(seen) == 3
    return seen


def test_a_client_gets_sparks_own_error_unchanged(connect_client: None, tmp_path: Path) -> None:
    """A query that fails at analysis reaches the client as it does from a server without
    capture: text, class and the server's stack, with nothing of capture's in it; and each is
    a FAIL run of the client's session, a session whose only queries failed."""
    lake = tmp_path / "lake"
    master = os.environ.get(SUBPROCESS_MASTER, "local[2]")
    script = textwrap.dedent(PLAIN_SERVER)
    log = tmp_path / "plain_server.log"
    with log.open("w") as stderr:
        plain = subprocess.Popen(
            [sys.executable, "-c", script, master, str(tmp_path / "plain_warehouse")],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        expected = _errors_seen(ready_url(plain, log), lake, "write")
    finally:
        plain.terminate()
        plain.wait(timeout=120)
    assert [kind for kind, _, _ in expected] == ["AnalysisException"] * 3
    with connect_server(tmp_path / "server") as server:
        # Each client session's first failing analysis too: three sessions.
        for _ in range(3):
            assert _errors_seen(server.url, lake) == expected
        assert server.stop() == 0
    for _, _, text in expected:
        assert "openlineage" not in text.lower() and "py4j" not in text
    runs = server.runs().values()
    sessions = {r[0]["run"]["runId"] for r in runs if r[0]["job"]["name"] == "spark_connect_server"}
    sessions = {
        r[0]["run"]["runId"]
        for r in runs
        if r[0]["run"]["facets"].get("parent", {}).get("run", {}).get("runId") in sessions
        and r[-1]["eventType"] == "COMPLETE"
    }
    assert len(sessions) == 3, "a session whose only queries failed is a run of its own"
    fails = [r[-1] for r in runs if r[-1]["eventType"] == "FAIL"]
    assert len(fails) == 9
    assert {f["run"]["facets"]["parent"]["run"]["runId"] for f in fails} == sessions
    classes = {condition for _, condition, _ in expected}
    for fail in fails:
        message = fail["run"]["facets"]["errorMessage"]["message"]
        assert "AnalysisException" in message, message
        assert [c for c in classes if f"[{c}]" in message], message


STREAMER = """
    import sys
    from pyspark.sql import SparkSession

    url, inbox, out, checkpoint = sys.argv[1:5]
    spark = SparkSession.builder.remote(url).getOrCreate()
    query = (
        spark.readStream.schema("day string, v long").option("maxFilesPerTrigger", 1).json(inbox)
        .writeStream.format("parquet").partitionBy("day")
        .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(out)
    )
    query.awaitTermination()
    print("query", query.runId)
    spark.stop()
"""


def test_a_connect_clients_stream_is_a_run_per_batch_naming_its_file_and_day(
    connect_client: None, tmp_path: Path
) -> None:
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    days = ["2024-11-01", "2024-11-02"]
    for index, day in enumerate(days):
        file = inbox / f"part{index}.json"
        file.write_text(json.dumps({"day": day, "v": index}) + "\n", encoding="utf-8")
        os.utime(file, (1_700_000_000 + index, 1_700_000_000 + index))
    with connect_server(tmp_path / "server") as server:
        done = _client(STREAMER, server.url, str(inbox), str(out), str(tmp_path / "checkpoint"))
        assert done.returncode == 0, done.stderr[-2000:]
        assert server.stop() == 0
    query_run = done.stdout.split("query ", 1)[1].split()[0]
    ends = [r[-1] for r in server.runs().values()]
    batches = sorted(
        (e for e in ends if "olsubset_streamingBatch" in e["run"]["facets"]),
        key=lambda e: e["run"]["facets"]["olsubset_streamingBatch"]["batchId"],
    )
    assert len(batches) == len(days)
    for index, (batch, day) in enumerate(zip(batches, days, strict=True)):
        assert batch["run"]["facets"]["parent"]["run"]["runId"] == query_run
        condition = batch["inputs"][0]["inputFacets"]["subset"]["inputCondition"]
        assert condition["locations"] == [f"file:{inbox}/part{index}.json"]
        written = batch["outputs"][0]["outputFacets"]["subset"]["outputCondition"]
        assert [p["dimensions"] for p in written["partitions"]] == [{"day": day}]
    (query,) = [e for e in ends if e["run"]["runId"] == query_run]
    assert query["eventType"] == "COMPLETE"
