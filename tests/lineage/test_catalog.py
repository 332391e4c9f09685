"""``lineage datasets`` and ``lineage runs``: what a database holds, the latest first."""

from __future__ import annotations

import json

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import LineageQueryError
from openlineage_subset.lineage.queries._listings import datasets, runs
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, compare, day, run

EVENTS = [
    *run(1, 0, 1, writes=[("raw", day("2024-10-15"))], reads=[("source", None)]),
    *run(2, 2, 5, reads=[("raw", day("2024-10-15"))], writes=[("daily", day("2024-10-15"))]),
    *run(
        3, 3, 4, reads=[("daily", compare("amount", "GREATER_THAN", "100"))], writes=[("old", None)]
    ),
    *run(4, 6, 7, reads=[("daily", day("2024-10-15"))], job="job2"),
]


def test_datasets_the_most_recently_written_first(lineage_db: Build) -> None:
    report = datasets(lineage_db(EVENTS))
    names = [item.dataset.name.removeprefix(LAKE + "/") for item in report.datasets]
    # daily ended at minute 5, old at 4, raw at 1; source was never written: last.
    assert names == ["daily", "old", "raw", "source"]
    daily = report.as_json()["datasets"][0]
    assert daily == {
        "namespace": "file",
        "name": f"{LAKE}/daily",
        "lastWrittenAt": "2024-10-15T00:05:00Z",
        "writes": 1,
        "reads": 2,
        "partitions": 1,
    }
    assert report.as_json()["datasets"][-1]["lastWrittenAt"] is None


def test_runs_the_latest_first_with_what_each_read_and_wrote(lineage_db: Build) -> None:
    db = lineage_db(EVENTS)
    report = runs(db)
    # Started at minutes 6, 3, 2 and 0 (run 4 is of job2, as run 2 is).
    assert [item.run.job_name for item in report.runs] == ["job2", "job3", "job2", "job1"]
    assert report.total == 4
    job3 = report.as_json()["runs"][1]
    assert job3["job"]["name"] == "job3"
    assert job3["inputs"] == [
        {"dataset": {"namespace": "file", "name": f"{LAKE}/daily"}, "condition": "amount > 100"}
    ]
    assert job3["outputs"] == [
        {"dataset": {"namespace": "file", "name": f"{LAKE}/old"}, "condition": None}
    ]
    only = runs(db, job="tests.job2", limit=1)
    assert only.total == 2 and len(only.runs) == 1
    assert only.runs[0].run.started_at > runs(db, job="job2").runs[1].run.started_at
    with pytest.raises(
        LineageQueryError, match="limit must be a whole number from 1 to 1000000000"
    ):
        runs(db, limit=0)


def test_the_commands(lineage_db: Build, capsys: pytest.CaptureFixture[str]) -> None:
    db = lineage_db(EVENTS)
    assert main(["lineage", "datasets", "--db", db]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"file:{LAKE}/daily: last written 2024-10-15T00:05:00Z, 1 write(s)")
    assert (
        out[-1]
        == f"file:{LAKE}/source: last written never, 0 write(s), 1 read(s), 0 partition(s) known"
    )
    assert main(["lineage", "runs", "--db", db, "--job", "job3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1 of 1 run(s), the latest first"
    assert out[2:] == [
        f"  read file:{LAKE}/daily: amount > 100",
        f"  wrote file:{LAKE}/old: (whole dataset)",
    ]
    assert main(["lineage", "runs", "--db", db, "--format", "json", "--limit", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == runs(db, limit=2).as_json()
    assert main(["lineage", "runs", "--db", db, "--limit", "0"]) == 2
    assert "limit must be a whole number" in capsys.readouterr().err
