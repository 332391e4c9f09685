"""Partition lineage end to end: a real three-stage PySpark script under ``ol-subset run``, its
events ingested with ``ol-subset lineage ingest``, and ``ol-subset lineage impact`` asked.

The script runs once, in a subprocess, for the whole module. Every expected run and partition
below follows from the script's logic and the rules of docs/lineage.md, never from the answer:

- stage A writes ``lake/raw`` partitioned by (day, country): three days of two countries;
- stage B reads the days in ``B_DAYS`` of ``lake/raw`` (a partition filter: Spark reads those
  partitions only) and writes ``lake/clean`` partitioned by day: one partition per day read;
- stage C reads ``lake/clean`` filtered on ``amount``, a column that is not a partition column,
  and writes ``lake/summary`` (not partitioned: the whole dataset).

So a ``lake/raw`` partition of a day in ``B_DAYS`` definitely affects B (hop 1), then what B
wrote of that day only (B's plan passes the day through: its write is mapped by day), then C only
*possibly* (hop 2): whether its rows pass ``amount > 10`` is not decided by partition values.
A partition of the day B did not read affects nothing.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.spark.conftest import ol_subset

pytestmark = pytest.mark.spark

DAYS = ("2024-10-14", "2024-10-15", "2024-10-16")
COUNTRIES = ("DE", "PL")
B_DAYS = ("2024-10-15", "2024-10-16")

SCRIPT = textwrap.dedent(
    f"""
    import os
    import sys
    from pyspark.sql import SparkSession

    root = sys.argv[1]
    spark = (
        SparkSession.builder.master(os.environ.get("OL_SUBSET_TEST_MASTER", "local[1]"))
        .appName("three_stages")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rows = [
        (n, day, country, float(n % 20))
        for n, (day, country) in enumerate(
            (day, country) for day in {DAYS!r} for country in {COUNTRIES!r} for _ in range(5)
        )
    ]
    raw = spark.createDataFrame(rows, "id INT, day STRING, country STRING, amount DOUBLE")
    # stage A
    raw.write.partitionBy("day", "country").parquet(root + "/lake/raw")
    # stage B: a partition filter
    days = ", ".join("'" + day + "'" for day in {B_DAYS!r})
    (
        spark.read.parquet(root + "/lake/raw")
        .where("day IN (" + days + ")")
        .select("id", "day", "country", "amount")
        .write.partitionBy("day")
        .parquet(root + "/lake/clean")
    )
    # stage C: a filter on a column that is not a partition column
    (
        spark.read.parquet(root + "/lake/clean")
        .where("amount > 10")
        .groupBy("day")
        .sum("amount")
        .coalesce(1)
        .write.parquet(root + "/lake/summary")
    )
    spark.stop()
    """
)


@dataclass(frozen=True)
class Pipeline:
    """The script's events, ingested into ``db``; ``roles`` maps run ids to stage names."""

    root: Path
    db: Path
    roles: dict[str, str]

    def impact(self, *partition: str) -> dict[str, Any]:
        options = [item for value in partition for item in ("--partition", value)]
        done = ol_subset(
            "lineage", "impact", "lake/raw", *options, "--db", str(self.db), "--format", "json"
        )
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    root = tmp_path_factory.mktemp("e2e")
    script = root / "three_stages.py"
    script.write_text(SCRIPT, encoding="utf-8")
    events = root / "events.jsonl"
    done = ol_subset(
        "run", "--output", str(events), "--namespace", "e2e", str(script), str(root), cwd=root
    )
    assert done.returncode == 0, done.stderr[-3000:]
    db = root / "lineage.db"
    ingested = ol_subset("lineage", "ingest", str(events), "--db", str(db), "--format", "json")
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert json.loads(ingested.stdout)["invalid"] == 0
    return Pipeline(root, db, _roles(events, root))


def _roles(events: Path, root: Path) -> dict[str, str]:
    """Stage A, B or C by the dataset each completed run wrote (from the events themselves)."""
    stage_of = {"lake/raw": "A", "lake/clean": "B", "lake/summary": "C"}
    roles = {}
    for line in events.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        for output in event["outputs"] if event["eventType"] == "COMPLETE" else ():
            relative = Path(output["name"]).relative_to(root).as_posix()
            roles[event["run"]["runId"]] = stage_of[relative]
    return roles


def _names(partitions: list[dict[str, Any]] | None) -> list[str] | None:
    return None if partitions is None else [item["identifier"] for item in partitions]


def _backfill(answer: dict[str, Any], root: Path) -> dict[str, tuple[Any, list[str], list[str]]]:
    return {
        Path(part["dataset"]["name"]).relative_to(root).as_posix(): (
            part["whole"],
            _names(part["definite"]),
            _names(part["possible"]),
        )
        for part in answer["backfill"]
    }


def test_each_stage_is_one_completed_run(pipeline: Pipeline) -> None:
    assert sorted(pipeline.roles.values()) == ["A", "B", "C"]


def test_a_partition_stage_b_read_affects_b_definitely_and_c_possibly(pipeline: Pipeline) -> None:
    day, country = B_DAYS[0], COUNTRIES[0]
    answer = pipeline.impact(f"day={day}", f"country={country}")
    assert _names(answer["start"]["definite"]) == [f"day={day}/country={country}"]
    runs = answer["runs"]
    assert [pipeline.roles[run["runId"]] for run in runs] == ["B", "C"]
    stage_b, stage_c = runs
    assert (stage_b["label"], stage_b["hops"], stage_b["status"]) == ("definite", 1, "COMPLETE")
    assert stage_b["via"]["dataset"]["name"] == str(pipeline.root / "lake" / "raw")
    assert _names(stage_b["via"]["partitions"]) == [f"day={day}/country={country}"]
    assert stage_b["via"]["upstreamRunId"] is None
    assert stage_b["mappedBy"] == ["day"]
    assert (stage_c["label"], stage_c["hops"], stage_c["status"]) == ("possible", 2, "COMPLETE")
    assert stage_c["via"]["dataset"]["name"] == str(pipeline.root / "lake" / "clean")
    assert _names(stage_c["via"]["partitions"]) == [f"day={day}"]
    assert stage_c["via"]["upstreamRunId"] == stage_b["runId"]
    assert "amount" in stage_c["via"]["condition"]
    assert _backfill(answer, pipeline.root) == {
        "lake/clean": (None, [f"day={day}"], []),
        "lake/summary": ("possible", [], []),
    }


def test_a_partition_no_stage_read_affects_nothing(pipeline: Pipeline) -> None:
    (unread,) = sorted(set(DAYS) - set(B_DAYS))
    answer = pipeline.impact(f"day={unread}", f"country={COUNTRIES[1]}")
    assert _names(answer["start"]["definite"]) == [f"day={unread}/country={COUNTRIES[1]}"]
    assert answer["runs"] == [] and answer["backfill"] == []


def test_a_whole_day_is_its_known_partitions(pipeline: Pipeline) -> None:
    day = B_DAYS[1]
    answer = pipeline.impact(f"day={day}")
    expected = [f"day={day}/country={country}" for country in sorted(COUNTRIES)]
    assert _names(answer["start"]["definite"]) == expected
    assert [pipeline.roles[run["runId"]] for run in answer["runs"]] == ["B", "C"]
    assert _names(answer["runs"][0]["via"]["partitions"]) == expected
