"""``ol-subset demo`` end to end, against the files it leaves on disk.

The demo starts and stops its own SparkSession, so it runs once, in a subprocess, for the whole
module. Expected partitions come from the directories on disk, never from the adapter.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset import validate
from tests.spark.conftest import dims, partition_dirs
from tests.spark.listening import beyond_loopback, listening

pytestmark = pytest.mark.spark

PRUNED = {"business_date": {"2024-10-15", "2024-10-16"}, "country": {"PL", "DE"}}
"""What the demo's pipeline reads of ``lake/sales``: two days of two countries."""


@dataclass(frozen=True)
class DemoRun:
    """One finished ``ol-subset demo``: its work and current directories, and what it said."""

    workdir: Path
    cwd: Path
    done: subprocess.CompletedProcess[str]
    sockets: set[tuple[str, int]]
    """Every TCP socket the demo (and Spark's JVM) listened on while it ran, as seen."""

    @property
    def events(self) -> list[dict[str, Any]]:
        lines = (self.workdir / "events.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    workdir = tmp_path_factory.mktemp("demo")
    cwd = tmp_path_factory.mktemp("cwd")
    command = [sys.executable, "-m", "openlineage_subset", "demo", "--workdir", str(workdir)]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd
    )
    sockets: set[tuple[str, int]] = set()
    outputs: list[tuple[str, str]] = []
    reader = threading.Thread(target=lambda: outputs.append(process.communicate(timeout=600)))
    reader.start()
    while reader.is_alive():  # the sockets of the demo and its JVM while Spark runs
        sockets |= listening(process.pid)
        reader.join(timeout=0.2)
    ((out, err),) = outputs
    done = subprocess.CompletedProcess(command, process.returncode, out, err)
    return DemoRun(workdir, cwd, done, sockets)


def _completed_with(events: list[dict[str, Any]], side: str, root: Path) -> list[dict[str, Any]]:
    """The ``inputs`` or ``outputs`` entries naming ``root`` in COMPLETE events."""
    return [
        dataset
        for event in events
        if event["eventType"] == "COMPLETE"
        for dataset in event[side]
        if dataset["namespace"] == "file" and dataset["name"] == str(root)
    ]


def _partitions(dataset: dict[str, Any], facets: str, condition: str) -> dict[str, Any]:
    """``{identifier: dimensions}`` of a dataset's partition subset condition."""
    found = dataset[facets]["subset"][condition]
    assert found["type"] == "partition"
    return {item["identifier"]: item["dimensions"] for item in found["partitions"]}


def _rendered(relative: str) -> str:
    pairs = ", ".join(f"{key} = '{value}'" for key, value in dims(relative).items())
    return f"PARTITION ({pairs})"


def _pruned_on_disk(workdir: Path) -> set[str]:
    return {
        relative
        for relative in partition_dirs(workdir / "lake" / "sales")
        if all(value in PRUNED[key] for key, value in dims(relative).items())
    }


def test_the_demo_succeeds_and_says_all_events_are_valid(demo: DemoRun) -> None:
    assert demo.done.returncode == 0, demo.done.stderr[-3000:]
    assert "Traceback" not in demo.done.stderr
    assert f"written to {demo.workdir / 'events.jsonl'}, all valid (strict)" in demo.done.stdout


def test_the_demos_spark_listens_on_loopback_only(demo: DemoRun) -> None:
    assert len(demo.sockets) >= 2, f"the driver and its block manager: {demo.sockets}"
    assert beyond_loopback(demo.sockets) == set()


def test_the_demo_writes_nothing_in_the_current_directory(demo: DemoRun) -> None:
    assert list(demo.cwd.iterdir()) == []


def test_the_summary_shows_the_pruned_reads_and_the_written_partitions(demo: DemoRun) -> None:
    runs = demo.done.stdout.split("\nrun ")
    pipeline = [run for run in runs if "out  lake/daily_sales" in run]
    assert len(pipeline) == 1, demo.done.stdout
    summary = pipeline[0]
    assert "in   lake/sales" in summary and "in   lake/stores.csv" in summary
    pruned = _pruned_on_disk(demo.workdir)
    written = partition_dirs(demo.workdir / "lake" / "daily_sales")
    assert len(pruned) == 4 and written
    for relative in pruned | written:
        assert _rendered(relative) in summary
    assert summary.count("PARTITION (") == len(pruned) + len(written)


def test_every_event_is_valid_and_none_is_quarantined(demo: DemoRun) -> None:
    events = demo.events
    assert events
    assert [validate(event, strict=True) for event in events] == [[]] * len(events)
    quarantine = demo.workdir / "quarantine.jsonl"
    assert not quarantine.exists() or not quarantine.read_text(encoding="utf-8").strip()


def test_the_pruned_read_lists_exactly_the_partitions_read(demo: DemoRun) -> None:
    reads = _completed_with(demo.events, "inputs", demo.workdir / "lake" / "sales")
    assert len(reads) == 1
    partitions = _partitions(reads[0], "inputFacets", "inputCondition")
    expected = _pruned_on_disk(demo.workdir)
    assert len(expected) == 4
    assert set(partitions) == expected
    assert all(partitions[relative] == dims(relative) for relative in expected)


def test_the_dynamic_overwrite_lists_exactly_the_partitions_written(demo: DemoRun) -> None:
    root = demo.workdir / "lake" / "daily_sales"
    writes = _completed_with(demo.events, "outputs", root)
    assert len(writes) == 1
    partitions = _partitions(writes[0], "outputFacets", "outputCondition")
    expected = partition_dirs(root)
    assert expected
    assert set(partitions) == expected
    assert all(partitions[relative] == dims(relative) for relative in expected)


def test_the_table_is_created_then_one_partition_overwritten(demo: DemoRun) -> None:
    root = demo.workdir / "warehouse" / "daily_totals"
    created, written = _completed_with(demo.events, "outputs", root)
    assert created["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "CREATE"
    assert "outputFacets" not in created
    assert written["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    partitions = _partitions(written, "outputFacets", "outputCondition")
    assert set(partitions) == partition_dirs(root) == {"business_date=2024-10-16"}


def test_the_generated_lake_is_an_overwrite_of_the_whole_dataset(demo: DemoRun) -> None:
    root = demo.workdir / "lake" / "sales"
    (write,) = _completed_with(demo.events, "outputs", root)
    assert write["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    # Static overwrite mode replaced everything there was: all of it (its root), OR each
    # partition it left, every one on disk (a consumer knows them before anyone reads them).
    condition = write["outputFacets"]["subset"]["outputCondition"]
    assert condition["operator"] == "OR"
    whole, listed = sorted((condition["left"], condition["right"]), key=lambda side: side["type"])
    assert whole == {"type": "location", "locations": [f"file:{root}"]}
    partitions = _partitions({"f": {"subset": {"c": listed}}}, "f", "c")
    assert set(partitions) == partition_dirs(root) and len(partitions) > 4
    assert all(partitions[relative] == dims(relative) for relative in partitions)
    assert "out  lake/sales  OVERWRITE (whole dataset), leaving PARTITION (" in demo.done.stdout


def test_the_demo_says_no_warning(demo: DemoRun) -> None:
    assert "not reported" not in demo.done.stderr and "degraded" not in demo.done.stderr


IMPACT_HEADER = "Impact of lake/sales, partition(s) business_date=2024-10-15/country=DE"
"""The demo's last answer: the impact of one partition the pipeline read."""


def _impact_lines(demo: DemoRun) -> list[str]:
    _, found, answer = demo.done.stdout.partition("\n" + IMPACT_HEADER + "\n")
    assert found, demo.done.stdout
    return [IMPACT_HEADER, *answer.splitlines()]


def _job_lines(lines: list[str], label: str) -> list[str]:
    """The affected runs of ``label`` (the runs part: the plan's re-runs come after it)."""
    runs = lines[: lines.index("Backfill plan: recompute")]
    return [line for line in runs if line.startswith(f"  {label}")]


def test_the_demo_ends_with_the_impact_of_one_sales_partition(demo: DemoRun) -> None:
    # The pipeline run reads 2024-10-15/DE (hop 1), so everything it wrote to lake/daily_sales
    # is affected; the daily_totals run reads 2024-10-16 of daily_sales after that (hop 2) and
    # overwrites one partition. The generator and the CREATE read nothing: not affected.
    lines = _impact_lines(demo)
    assert lines[0] == "Impact of lake/sales, partition(s) business_date=2024-10-15/country=DE"
    assert "2 run(s) affected: 2 definite, 0 possible" in lines
    pipeline_run, totals_run = _job_lines(lines, "DEFINITE")
    assert "_lake_daily_sales run " in pipeline_run and " COMPLETE, " in pipeline_run
    assert "_warehouse_daily_totals run " in totals_run and ".write." in totals_run
    assert not _job_lines(lines, "POSSIBLE")
    assert "            read lake/sales: business_date=2024-10-15/country=DE" in lines
    daily = sorted(partition_dirs(demo.workdir / "lake" / "daily_sales"))
    read_by_totals = [p for p in daily if dims(p)["business_date"] == "2024-10-16"]
    assert read_by_totals and len(read_by_totals) < len(daily)
    assert f"            read lake/daily_sales: {', '.join(read_by_totals)}" in lines
    assert "            hop 1, from the starting region" in lines
    pipeline_id = pipeline_run.split(" run ")[1].split()[0]
    assert f"            hop 2, from {pipeline_id}" in lines
    # no orchestrator ran them: what to re-run is each run's own job, in the runs' order
    reruns = lines[lines.index("Re-run, in dependency order:") + 1 :]
    headings = [line for line in reruns if line.startswith("  DEFINITE")]
    totals_id = totals_run.split(" run ")[1].split()[0]
    assert [line.rsplit(" run ", 1)[1] for line in headings] == [pipeline_id, totals_id]
    plan = lines[lines.index("Backfill plan: recompute") + 1 :]
    assert plan[:4] == [
        "  lake/daily_sales",
        f"    definite: {', '.join(daily)}",
        "  warehouse/daily_totals",
        "    definite: business_date=2024-10-16",
    ]
    assert (demo.workdir / "lineage.db").is_file()
    asked = "lake/sales --partition business_date=2024-10-15 --partition country=DE"
    db = demo.workdir / "lineage.db"
    assert lines[-1] == f"ask it yourself: ol-subset lineage impact {asked} --db {db}"
