"""Partitions from paths, through the real store and the real CLI: the issue's pipeline (two
writes of /lake/raw by day and country, two daily aggregations) as openlineage-spark 1.39+ sends
it (trimmed names and location conditions) and as older versions do (partition directories as
datasets); the store's setting that keeps such names as datasets; odd and hostile paths."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import (
    SCHEMA_VERSION,
    LineageStore,
    ingest,
    partition_directories,
)
from tests.lineage.events import write_events

DATA = Path(__file__).parent.parent / "data" / "openlineage_spark"
SHAPES = ["pipeline_trimmed.jsonl", "pipeline_directories.jsonl"]
AGGREGATION_OF_THE_3RD = "01930000-0000-7000-8000-000000000003"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["lineage", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return status, captured.out, captured.err


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    status, out, err = _cli(capsys, *args, "--format", "json")
    assert status == 0, err
    return json.loads(out)


def _ingested(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> str:
    db = str(tmp_path / "lineage.db")
    status, out, err = _cli(capsys, "ingest", str(DATA / name), "--db", db)
    assert status == 0, out + err
    assert "8 event(s) stored" in out
    return db


@pytest.mark.parametrize("shape", SHAPES)
def test_impact_of_a_day_names_that_days_aggregation_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    db = _ingested(tmp_path, capsys, shape)
    answer = _json(capsys, "impact", "/lake/raw", "--partition", "day=2024-11-03", "--db", db)
    assert [(run["runId"], run["label"]) for run in answer["runs"]] == [
        (AGGREGATION_OF_THE_3RD, "definite")
    ]
    (plan,) = answer["backfill"]
    assert plan["dataset"] == {"namespace": "file", "name": "/lake/agg"}
    assert plan["whole"] is None and plan["possible"] == []
    assert [item["dimensions"] for item in plan["definite"]] == [{"day": "2024-11-03"}]


@pytest.mark.parametrize("shape", SHAPES)
def test_partitions_of_the_raw_table_are_listed_with_their_writers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    db = _ingested(tmp_path, capsys, shape)
    answer = _json(capsys, "partitions", "/lake/raw", "--db", db)
    listed = {item["identifier"]: item["lastWriter"]["runId"][-1] for item in answer["partitions"]}
    assert listed == {
        "day=2024-11-03/country=DE": "1",
        "day=2024-11-03/country=FR": "1",
        "day=2024-11-04/country=DE": "2",
        "day=2024-11-04/country=FR": "2",
    }
    names = [item["name"] for item in _json(capsys, "datasets", "--db", db)["datasets"]]
    assert sorted(names) == ["/lake/agg", "/lake/raw"]


def test_ingest_says_how_many_names_it_read_as_partitions_and_how_to_switch_it_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "lineage.db")
    status, out, _ = _cli(capsys, "ingest", str(DATA / "pipeline_directories.jsonl"), "--db", db)
    assert status == 0
    # 4 directories of /lake/raw (each written once, read once) and 2 of /lake/agg
    assert "6 dataset name(s) read as partition directories of 2 table(s)" in out
    assert f"'ol-subset lineage settings --partition-directories as-datasets --db {db}'" in out
    status, out, _ = _cli(capsys, "ingest", str(DATA / "pipeline_trimmed.jsonl"), "--db", db)
    assert "partition directories" not in out, "no name was a partition directory"
    report = ingest([DATA / "pipeline_directories.jsonl"], tmp_path / "other.db")
    assert report.as_json()["partition_directories"] == {
        "setting": "as-partitions",
        "names": 6,
        "tables": 2,
    }


@pytest.mark.parametrize("jobs", [1, 2])
def test_with_grouping_off_the_directories_stay_datasets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: int
) -> None:
    db = str(tmp_path / "lineage.db")
    status, out, _ = _cli(capsys, "settings", "--partition-directories", "as-datasets", "--db", db)
    assert status == 0 and "as-datasets (was as-partitions)" in out
    status, out, _ = _cli(
        capsys, "ingest", str(DATA / "pipeline_directories.jsonl"), "--db", db, "--jobs", str(jobs)
    )
    assert status == 0 and "partition directories" not in out
    names = {item["name"] for item in _json(capsys, "datasets", "--db", db)["datasets"]}
    assert names == {
        "/lake/raw/day=2024-11-03/country=DE",
        "/lake/raw/day=2024-11-03/country=FR",
        "/lake/raw/day=2024-11-04/country=DE",
        "/lake/raw/day=2024-11-04/country=FR",
        "/lake/agg/day=2024-11-03",
        "/lake/agg/day=2024-11-04",
    }
    status, _, err = _cli(capsys, "impact", "/lake/raw", "--db", db)
    assert status == 2 and "no dataset named '/lake/raw'" in err
    assert _json(capsys, "settings", "--db", db) == {
        "partition_directories": "as-datasets",
        "other_names": "join",
    }


def test_the_setting_is_checked_and_a_missing_database_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "lineage.db")
    with pytest.raises(SystemExit) as stopped:
        main(["lineage", "settings", "--partition-directories", "grouped", "--db", db])
    assert stopped.value.code == 2
    assert "invalid choice: 'grouped'" in capsys.readouterr().err
    status, _, err = _cli(capsys, "settings", "--db", db)
    assert status == 2 and "no lineage database there" in err
    assert not Path(db).exists()


def test_a_layout_5_database_gains_the_settings_table(tmp_path: Path) -> None:
    path = tmp_path / "lineage.db"
    with LineageStore.open(path, create=True):
        pass
    connection = sqlite3.connect(path)
    connection.execute("DROP TABLE settings")
    connection.execute("PRAGMA user_version = 5")
    connection.commit()
    connection.close()
    with LineageStore.open(path) as store:
        assert store.connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 14
        assert partition_directories(store) == "as-partitions"


def test_directories_of_one_table_in_one_event_are_one_access_listing_them_all(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lineage.db"
    report = ingest([DATA / "pipeline_directories.jsonl"], db)
    assert report.stored == 8
    connection = sqlite3.connect(db)
    rows = connection.execute(
        "SELECT a.run_id, d.name, a.direction, a.condition, a.listed FROM accesses a "
        "JOIN datasets d USING (dataset_id) WHERE a.run_id LIKE '%1' ORDER BY a.direction"
    ).fetchall()
    assert len(rows) == 1, "the run wrote two directories of /lake/raw: one access"
    _, name, direction, condition, listed = rows[0]
    assert (name, direction, listed) == ("/lake/raw", "output", 1)
    assert [item["identifier"] for item in json.loads(condition)["partitions"]] == [
        "day=2024-11-03/country=DE",
        "day=2024-11-03/country=FR",
    ]
    again = ingest([DATA / "pipeline_directories.jsonl"], db)
    assert (again.stored, again.duplicates) == (0, 8), "the digest is the event's as sent"


def test_openlineage_reducer_shapes_join_their_table_whichever_version_sent_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "lineage.db")
    status, out, _ = _cli(capsys, "ingest", str(DATA / "reducer_shapes.jsonl"), "--db", db)
    assert status == 0 and "2 event(s) stored" in out
    names = {
        item["name"]
        for item in _json(capsys, "datasets", "--db", db)["datasets"]
        if item["namespace"] == "namespace"
    }
    # the directories join /tmp/some/tested-path; the names no trimmer cuts stay datasets
    assert names == {
        "/tmp/some/tested-path",
        "some_table_20250923",
        "20250722T0901Z",
        "202504",
        "/tmp/some/path1",
    }
    connection = sqlite3.connect(db)
    conditions = connection.execute(
        "SELECT a.run_id, a.direction, a.condition, a.listed FROM accesses a "
        "JOIN datasets d USING (dataset_id) WHERE d.name = '/tmp/some/tested-path' "
        "ORDER BY a.run_id, a.direction"
    ).fetchall()
    # 20250722T901Z is no partition the rules read: both shapes keep the locations ("possible")
    by_run: dict[str, list[Any]] = {}
    for run, direction, condition, listed in conditions:
        by_run.setdefault(run[-2:], []).append((direction, json.loads(condition), listed))
    assert by_run["11"] == by_run["12"]
    assert [
        (direction, condition["type"], listed) for direction, condition, listed in by_run["11"]
    ] == [
        ("input", "location", 0),
        ("output", "location", 0),
    ]


def _event(number: int, kind: str, locations: list[str]) -> dict[str, Any]:
    url = "https://openlineage.io/spec/facets/1-0-0/OutputSubsetOutputDatasetFacet.json"
    return {
        "eventType": kind,
        "eventTime": f"2024-11-05T00:{number:02d}:00Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.39.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": f"01930000-0000-7000-8000-0000000001{number:02d}"},
        "job": {"namespace": "spark", "name": f"odd{number}"},
        "outputs": [
            {
                "namespace": "file",
                "name": "/lake/raw",
                "outputFacets": {
                    "subset": {
                        "_producer": "https://example.com/p",
                        "_schemaURL": url + "#/$defs/OutputSubsetOutputDatasetFacet",
                        "outputCondition": {"type": "location", "locations": locations},
                    }
                },
            }
        ],
    }


def test_odd_and_hostile_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_events(
        tmp_path / "odd.jsonl",
        [
            _event(1, "COMPLETE", ["/lake/raw/country=A%2FB/", "file:/lake/raw/country=x%3Dy"]),
            _event(2, "COMPLETE", ["/lake/raw/country=__HIVE_DEFAULT_PARTITION__"]),
            _event(3, "COMPLETE", ["/lake/raw/country=", "/lake/raw/=DE"]),
            _event(4, "COMPLETE", ["/lake/raw/country=NL", "/elsewhere/country=NL"]),
            _event(5, "COMPLETE", ["/lake/raw/2024-13-45"]),
        ],
    )
    db = str(tmp_path / "lineage.db")
    status, _, err = _cli(capsys, "ingest", str(source), "--db", db)
    assert status == 0, err
    listed = _json(capsys, "partitions", "/lake/raw", "--db", db)["partitions"]
    assert {item["identifier"]: item["dimensions"]["country"] for item in listed} == {
        "country=A%2FB": "A/B",  # Hive's escapes read
        "country=x%3Dy": "x=y",
        "country=__HIVE_DEFAULT_PARTITION__": None,  # the null partition
        "country=NL": "NL",
    }
    connection = sqlite3.connect(db)
    kept = dict(
        connection.execute(
            "SELECT substr(run_id, -2), condition FROM accesses WHERE run_id LIKE '%10_'"
        ).fetchall()
    )
    # what the rules cannot read stays a location: "possible" for every partition
    assert json.loads(kept["03"]) == {
        "type": "location",
        "locations": ["/lake/raw/country=", "/lake/raw/=DE"],
    }
    assert json.loads(kept["05"])["type"] == "location"
    assert json.loads(kept["04"])["right"] == {
        "type": "location",
        "locations": ["/elsewhere/country=NL"],
    }
    # the locations not read stay writes of /lake/raw, none dropped
    entries = _json(capsys, "history", "/lake/raw", "--db", db)["entries"]
    assert sorted(entry["job"]["name"] for entry in entries) == [f"odd{n}" for n in range(1, 6)]
    answer = _json(capsys, "provenance", "/lake/raw", "--partition", "country=NL", "--db", db)
    assert [(run["job"]["name"], run["label"]) for run in answer["writers"]] == [
        ("odd4", "definite")
    ]


def test_date_directories_are_partitions_of_a_date_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def named(number: int, inputs: list[str], outputs: list[str]) -> dict[str, Any]:
        event = _event(number, "COMPLETE", [])
        event["inputs"] = [{"namespace": "file", "name": name} for name in inputs]
        event["outputs"] = [{"namespace": "file", "name": name} for name in outputs]
        return event

    source = write_events(
        tmp_path / "dates.jsonl",
        [
            named(1, [], ["/lake/events/2024/11/03", "/lake/events/2024/11/04"]),
            named(2, ["/lake/events/2024/11/03"], ["/lake/monthly/2024-11"]),
            named(3, ["/lake/events/20241104/"], ["/lake/monthly/202411"]),
        ],
    )
    db = str(tmp_path / "lineage.db")
    status, _, err = _cli(capsys, "ingest", str(source), "--db", db)
    assert status == 0, err
    answer = _json(capsys, "impact", "/lake/events", "--partition", "date=2024-11-03", "--db", db)
    assert [run["job"]["name"] for run in answer["runs"]] == ["odd2"]
    (plan,) = answer["backfill"]
    assert plan["dataset"]["name"] == "/lake/monthly"
    assert [item["dimensions"] for item in plan["definite"]] == [{"month": "2024-11"}]
    listed = _json(capsys, "partitions", "/lake/monthly", "--db", db)["partitions"]
    assert [(item["dimensions"], item["lastWriter"]["job"]["name"]) for item in listed] == [
        ({"month": "2024-11"}, "odd3")
    ], "one partition, whichever way a month is spelled"
