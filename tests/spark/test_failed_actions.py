"""Failed actions: each one FAIL run with Spark's error, and a user's error is never capture's.

A query that fails at analysis (an unknown column, a missing path, a missing table) is told to
the application's listeners by Spark 4 as an execution named ``analyze``; Spark 3.5 tells them
nothing of it (docs/capture.md says so), and both versions are held to that here. A query that
fails while it runs is a FAIL run on both. Never, in either: a capture error, a line of
capture's on standard error, or capture's frames in the error the user gets.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from openlineage_subset import validate
from openlineage_subset.lineage import impact, ingest
from openlineage_subset.producer import job_name
from tests.spark.conftest import Capture, Lake, ol_subset

pytestmark = pytest.mark.spark


def _spark_major() -> int:
    import pyspark

    return int(pyspark.__version__.split(".")[0])


TELLS_ANALYSIS_FAILURES = _spark_major() >= 4
"""Whether this Spark tells listeners of a query whose analysis failed."""


def _fail_runs(capture: Capture) -> list[dict[str, Any]]:
    """The FAIL events of the runs captured since the last call (each run's last event)."""
    runs = capture.runs()
    ends = [events[-1] for events in runs.values()]
    assert all(end["eventType"] in ("COMPLETE", "FAIL") for end in ends)
    return [end for end in ends if end["eventType"] == "FAIL"]


def _one_fail(capture: Capture, error_class: str) -> dict[str, Any]:
    (fail,) = _fail_runs(capture)
    assert validate(fail, strict=True) == []
    error = fail["run"]["facets"]["errorMessage"]
    assert "AnalysisException" in error["message"] and f"[{error_class}" in error["message"]
    assert error["programmingLanguage"] == "JAVA"
    assert ".analyze." in fail["job"]["name"]
    assert fail["outputs"] == [], "a query that failed at analysis wrote nothing"
    return fail


def _read_nothing(fail: dict[str, Any], named: str | None) -> None:
    """A query that never ran read nothing (no inputs: no answer may call it a reader), and
    its job is named by the dataset it named (``named``; None: it named none)."""
    assert fail["inputs"] == [], "a query that never ran read nothing"
    ending = job_name("app", "analyze", [{"name": named}] if named else []).removeprefix("app")
    assert fail["job"]["name"].endswith(ending), (fail["job"]["name"], ending)


def test_an_unknown_column_is_a_fail_run_naming_what_it_was_to_read(
    spark: SparkSession, lake: Lake, capture: Capture
) -> None:
    with pytest.raises(Exception, match="UNRESOLVED_COLUMN"):
        spark.read.parquet(str(lake.plain)).select("no_such_col").collect()
    if not TELLS_ANALYSIS_FAILURES:
        assert capture.runs() == {}
    else:
        _read_nothing(_one_fail(capture, "UNRESOLVED_COLUMN"), str(lake.plain))
    assert capture.handle.counts["errors"] == 0


def test_a_missing_path_is_a_fail_run_naming_the_path(
    spark: SparkSession, lake: Lake, capture: Capture
) -> None:
    missing = lake.root / "no_such_dir"
    with pytest.raises(Exception, match="PATH_NOT_FOUND"):
        spark.read.parquet(str(missing)).count()
    with pytest.raises(Exception, match="PATH_NOT_FOUND"):
        spark.sql(f"SELECT * FROM parquet.`{missing}`").collect()
    if not TELLS_ANALYSIS_FAILURES:
        assert capture.runs() == {}
    else:
        fails = _fail_runs(capture)
        assert len(fails) == 2
        for fail in fails:
            _read_nothing(_check_analysis_fail(fail, "PATH_NOT_FOUND"), str(missing))
    assert capture.handle.counts["errors"] == 0


def _check_analysis_fail(fail: dict[str, Any], error_class: str) -> dict[str, Any]:
    assert validate(fail, strict=True) == []
    assert f"[{error_class}" in fail["run"]["facets"]["errorMessage"]["message"]
    assert fail["outputs"] == []
    return fail


def test_tables_unknown_column_and_unknown_table(
    spark: SparkSession, lake: Lake, capture: Capture, fresh_tables: list[str]
) -> None:
    spark.sql(f"CREATE TABLE failing_t USING parquet LOCATION '{lake.plain}'")
    fresh_tables.append("failing_t")
    capture.runs()
    with pytest.raises(Exception, match="UNRESOLVED_COLUMN"):
        spark.sql("SELECT no_such_col FROM failing_t").collect()
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql("SELECT * FROM no_such_table_anywhere").collect()
    with pytest.raises(Exception, match=r"INSERT_COLUMN_ARITY_MISMATCH|arity|columns"):
        spark.sql("INSERT INTO failing_t SELECT 1").collect()
    if not TELLS_ANALYSIS_FAILURES:
        assert capture.runs() == {}
    else:
        column, table, insert = _fail_runs(capture)
        _read_nothing(_check_analysis_fail(column, "UNRESOLVED_COLUMN"), str(lake.plain))
        # A table that does not exist names no dataset: the run is still there, with the error.
        _read_nothing(_check_analysis_fail(table, "TABLE_OR_VIEW_NOT_FOUND"), None)
        assert insert["outputs"] == [], "an INSERT that failed at analysis changed nothing"
    assert capture.handle.counts["errors"] == 0


def test_an_error_while_a_write_runs_is_a_fail_run_on_both_versions(
    spark: SparkSession, lake: Lake, capture: Capture, tmp_path: Path
) -> None:
    target = tmp_path / "never_written"
    failing = spark.read.parquet(str(lake.plain)).select(
        F.when(F.col("amount") > 0, F.raise_error(F.lit("bad row"))).cast("string").alias("x")
    )
    with pytest.raises(Exception, match="bad row"):
        failing.write.parquet(str(target))
    (fail,) = _fail_runs(capture)
    assert validate(fail, strict=True) == []
    assert "bad row" in fail["run"]["facets"]["errorMessage"]["message"]
    assert [d["name"] for d in fail["inputs"]] == [str(lake.plain)]
    assert [d["name"] for d in fail["outputs"]] == [str(target)]
    assert capture.handle.counts["errors"] == 0


SCRIPT = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession, functions as F

    lake, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    spark = SparkSession.builder.master("local[1]").appName("every action").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if mode == "enable":
        from openlineage_subset.spark import enable
        enable(spark, output=sys.argv[4])
    attempts = {
        "unknown column": lambda: spark.read.parquet(lake).select("no_such_col").collect(),
        "missing path": lambda: spark.read.parquet(lake + "/missing").count(),
        "failed write": lambda: spark.read.parquet(lake)
        .select(F.raise_error(F.lit("bad row")).cast("string").alias("x"))
        .write.parquet(out + "/failed"),
    }
    for name, attempt in attempts.items():
        try:
            attempt()
        except Exception as error:
            print("caught", name, type(error).__name__)
    print("rows", spark.read.parquet(lake).count())
    # Two RDD actions: a collection saved as text, and that text counted.
    spark.sparkContext.parallelize(range(6), 2).map(str).saveAsTextFile(out + "/text")
    print("lines", spark.sparkContext.textFile(out + "/text").count())
    # A JDBC round trip through Spark's own Derby, in memory.
    url = "jdbc:derby:memory:every_action;create=true"  # a database of this JVM alone
    jdbc = {"url": url, "dbtable": "APP.NUMBERS", "driver": "org.apache.derby.jdbc.EmbeddedDriver"}
    spark.range(10).write.format("jdbc").options(**jdbc).save()
    print("big", spark.read.format("jdbc").options(**jdbc).load().where("id > 6").count())
    """
)


_PORT_RETRY = re.compile(r"WARN Utils: Service '\w+' could not bind on port")
"""Spark's note that a port was taken (by another Spark on the machine): the two runs may
differ in it for reasons of the machine, not of capture."""


def _stderr_lines(text: str) -> list[str]:
    """Standard error, without what varies from run to run: times, ids, hosts, ports taken by
    others, progress bars, and the Java stack trace inside Spark's own JSON error lines.

    The trace is left out because Spark itself rewrites it: a failed ``LazyTry`` (Spark 4's
    analyzed plan) sets its exception's trace to that of the last thread that asked for the
    plan, so two identical runs print different frames. What the line says (level, logger,
    error class, the exception's first line) is compared; that no frame of capture's is in it
    is checked by the caller on the whole text.
    """
    lines = []
    for line in text.replace("\r", "\n").splitlines():
        if not line.strip() or line.startswith("[Stage") or _PORT_RETRY.search(line):
            continue
        gist = _spark_json_log_gist(line)
        timeless = re.sub(r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d|\"ts\": \"[^\"]*\"", "<time>", gist)
        # ol-subset run binds a local Spark to loopback: its executor is on localhost.
        hostless = re.sub(r"\(\S+ executor driver\)", "(<host> executor driver)", timeless)
        lines.append(re.sub(r"\bo\d+\b|[0-9a-f-]{36}|\d{9,}|#\d+L?", "<id>", hostless))
    return lines


def _spark_json_log_gist(line: str) -> str:
    """What one of PySpark's JSON log lines says, without stack traces; other lines as given."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if not isinstance(record, dict) or "logger" not in record:
        return line
    exception = record.get("exception") or {}
    return json.dumps(
        {
            "level": record.get("level"),
            "logger": record["logger"],
            "msg": str(record.get("msg", "")).splitlines()[:1],
            "errorClass": (record.get("context") or {}).get("errorClass"),
            "exception": [exception.get("class"), str(exception.get("msg", "")).splitlines()[:1]],
        }
    )


@pytest.fixture(scope="module")
def plain_run(
    lake: Lake, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[str], subprocess.CompletedProcess[str]]:
    """The script run without capture, once for both ways of capturing it: its folder, its
    arguments (the same for every run, so that what it prints is the same) and what it did."""
    folder = tmp_path_factory.mktemp("every-action")
    script = folder / "failing.py"
    script.write_text(SCRIPT)
    arguments = [str(lake.plain), str(folder / "out")]
    plain = python_script(script, [*arguments, "plain"], folder)
    assert plain.returncode == 0, plain.stderr[-3000:]
    shutil.rmtree(folder / "out")
    return folder, arguments, plain


@pytest.mark.parametrize("how", ["ol-subset run", "enable()"])
def test_every_action_of_a_script_is_a_run_and_lineage_says_nothing(
    lake: Lake,
    plain_run: tuple[Path, list[str], subprocess.CompletedProcess[str]],
    tmp_path: Path,
    how: str,
) -> None:
    folder, arguments, plain = plain_run
    script = folder / "failing.py"
    events = tmp_path / "events.jsonl"
    try:  # the same writes as the plain run, to the same folder (emptied after each run)
        if how == "ol-subset run":
            done = ol_subset(
                "run", "--output", str(events), str(script), *arguments, "ol-subset", cwd=folder
            )
        else:
            done = python_script(script, [*arguments, "enable", str(events)], folder)
    finally:
        shutil.rmtree(folder / "out", ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == plain.stdout
    assert done.stdout.count("caught") == 3
    assert "lines 6" in done.stdout and "big 3" in done.stdout
    extra = [line for line in _stderr_lines(done.stderr) if line not in _stderr_lines(plain.stderr)]
    if how == "ol-subset run":
        (summary,) = extra
        assert summary.startswith("ol-subset run: ") and "error" not in summary, summary
    else:
        assert extra == []
    assert "Traceback" not in done.stderr and "openlineage_subset" not in done.stderr
    ends = [
        event
        for event in map(json.loads, events.read_text().splitlines())
        if event["eventType"] in ("COMPLETE", "FAIL") and "parent" in event["run"]["facets"]
    ]
    failed = sorted(
        event["job"]["name"].split(".")[1] for event in ends if event["eventType"] == "FAIL"
    )
    expected = ["analyze", "analyze", "write"] if TELLS_ANALYSIS_FAILURES else ["write"]
    assert failed == expected
    for event in ends:
        if event["eventType"] == "FAIL":
            assert event["run"]["facets"]["errorMessage"]["message"]
    # Who read the table: the count, and the write that failed as it ran; never the query whose
    # analysis failed, which read nothing.
    db = tmp_path / "lineage.db"
    assert ingest([events], db).invalid == 0
    readers = impact(db, str(lake.plain)).as_json()["runs"]
    assert sorted((run["job"]["name"].split(".")[1], run["status"]) for run in readers) == [
        ("count", "COMPLETE"),
        ("write", "FAIL"),
    ]
    out = folder / "out"
    completed = sorted(
        (
            [(d["namespace"], d["name"]) for d in event["inputs"]],
            [(d["namespace"], d["name"]) for d in event["outputs"]],
        )
        for event in ends
        if event["eventType"] == "COMPLETE"
    )
    numbers = ("derby:memory:every_action", "APP.NUMBERS")
    assert completed == sorted(
        [
            ([("file", str(lake.plain))], []),  # the count
            ([], [("file", str(out / "text"))]),  # the collection saved as text
            ([("file", str(out / "text"))], []),  # the text counted
            ([], [numbers]),  # the JDBC write
            ([numbers], []),  # the JDBC read
        ]
    )


def python_script(
    script: Path, arguments: list[str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``python script ARGUMENTS...``: the script alone, or enabling capture itself."""
    return subprocess.run(
        [sys.executable, str(script), *arguments],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        check=False,
    )
