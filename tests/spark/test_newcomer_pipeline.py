"""A newcomer's pipeline, end to end: Spark writes it, capture reports it, the store answers,
through the command line, the JSON API and the pages.

Twelve partitions of raw (three days, four countries) are overwritten whole; a query that
names a column raw lacks fails at analysis (in ``try``/``except``, as scripts do); a daily job
reads two days and writes them again, each from its own day (``groupBy("day", ...)``); a report
reads the last day. A bad 2024-11-02 of raw then affects the daily job alone, which recomputes
its own 2024-11-02 only: not the failed query (it read nothing), not the report (it read
another day), and every partition of raw is known, none of them read by the failed query.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pyspark
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from tests.spark.conftest import Capture, ol_subset

DAYS = ["2024-11-01", "2024-11-02", "2024-11-03"]
COUNTRIES = ["DE", "FR", "PL", "US"]


def _pipeline(spark: SparkSession, lake: Path) -> None:
    rows = [
        (n, n * 10 + d, dt.date.fromisoformat(day), country)
        for d, day in enumerate(DAYS)
        for n, country in enumerate(COUNTRIES)
    ]
    raw = spark.createDataFrame(rows, "id int, amount int, day date, country string")
    raw.write.partitionBy("day", "country").mode("overwrite").parquet(str(lake / "raw"))
    with contextlib.suppress(AnalysisException):  # the script goes on, as scripts do
        spark.read.parquet(str(lake / "raw")).select("no_such_col").collect()
    daily = (
        spark.read.parquet(str(lake / "raw"))
        .where(F.col("day").isin(DAYS[1], DAYS[2]))
        .groupBy("day", "country")
        .agg(F.sum("amount").alias("total"))
    )
    daily.write.partitionBy("day").parquet(str(lake / "daily"))
    report = spark.read.parquet(str(lake / "daily")).where(F.col("day") == DAYS[2])
    report.groupBy("country").agg(F.sum("total").alias("total")).write.parquet(str(lake / "report"))


def test_the_newcomer_s_pipeline(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _pipeline(spark, lake)
    events = [event for run in capture.runs().values() for event in run]
    jobs = {event["job"]["name"].rsplit(".", 2)[-2]: event["run"]["runId"] for event in events}
    failed = {e["run"]["runId"] for e in events if e["eventType"] == "FAIL"}
    # the analysis failure is a run where Spark tells listeners of it (4 and later)
    assert len(failed) == (1 if int(pyspark.__version__.split(".")[0]) >= 4 else 0)
    source = tmp_path / "events.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    db = tmp_path / "lineage.db"
    raw = str(lake / "raw")

    # the command line
    done = ol_subset("lineage", "ingest", str(source), "--db", str(db))
    assert done.returncode == 0, done.stderr
    done = ol_subset("lineage", "partitions", raw, "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    known = json.loads(done.stdout)["partitions"]
    assert len(known) == 12  # every partition the overwrite left, read later or not
    asked = ("lineage", "impact", raw, "--partition", f"day={DAYS[1]}", "--db", str(db))
    text = ol_subset(*asked)
    assert text.returncode == 0, text.stderr
    assert "(mapped by day)" in text.stdout
    answer = json.loads(ol_subset(*asked, "--format", "json").stdout)
    _check(answer, lake, failed)
    assert jobs  # the jobs are named (a missing name would make the checks above vacuous)

    # the JSON API and the pages of the service, as a browser or a client asks them
    pytest.importorskip("starlette", reason="the serve extra: pip install '.[serve]'")
    from tests.service.conftest import start

    server = start(str(db))
    try:
        query = urllib.parse.urlencode({"dataset": raw, "partition": f"day={DAYS[1]}"})
        status, body = server.get(f"/api/v1/impact?{query}")
        assert status == 200, body
        _check(body, lake, failed)
        page_query = urllib.parse.urlencode(
            {"namespace": "file", "name": raw, "query": "impact", "p": json.dumps({"day": DAYS[1]})}
        )
        with urllib.request.urlopen(f"{server.url}/answer?{page_query}", timeout=30) as got:
            page = html.unescape(got.read().decode("utf-8"))
        assert "mapped by day" in page
        assert f"day={DAYS[2]}" not in page.split("To recompute", 1)[1].split("</ul>", 1)[0]
    finally:
        assert server.stop() == 0


def _check(answer: dict[str, Any], lake: Path, failed: set[str]) -> None:
    """The answer names the daily run alone, and its own day of daily to recompute."""
    runs = answer["runs"]
    assert not failed & {item["runId"] for item in runs}  # the failed query read nothing
    assert [item["via"]["dataset"]["name"] for item in runs] == [str(lake / "raw")]
    assert runs[0]["mappedBy"] == ["day"]
    plan = {part["dataset"]["name"]: part for part in answer["backfill"]}
    assert sorted(plan) == [str(lake / "daily")]
    daily = plan[str(lake / "daily")]
    assert [item["identifier"] for item in daily["definite"]] == [f"day={DAYS[1]}"]
    assert not daily["possible"] and daily["whole"] is None
