"""One dataset, many names: a table and its location are one dataset in every answer, whichever
name each producer used and whichever came first (the files in tests/data/symlinks/: a loader
that names the Hive table ``hive://localhost:9083`` ``db.events`` with its location as a
symlink, a report job that reads the location, openlineage-spark naming the location with the
table as a symlink, two tables over one location).

Run through the real CLI (``ol-subset lineage ingest/impact/provenance/partitions``) into a
real database; the expected runs and partitions are those the fixture files list.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import SCHEMA_VERSION, DatasetRef, Lineage
from tests.helpers import ROOT

DATA = ROOT / "tests" / "data" / "symlinks"
READER_03 = "00000000-0000-4000-8000-000000000201"  # read day=2024-11-03 by the location
READER_04 = "00000000-0000-4000-8000-000000000202"  # read day=2024-11-04
LOADER_03 = "00000000-0000-4000-8000-000000000101"  # wrote day=2024-11-03 by the table's name
AUDIT = "00000000-0000-4000-8000-000000000401"  # read the table by both names in one event
SPARK = "00000000-0000-4000-8000-000000000301"  # openlineage-spark: the location, table symlink


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status = main(["lineage", *args])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert "Traceback" not in out + err
    return out


def _ingest(capsys: pytest.CaptureFixture[str], db: Path, *files: str) -> str:
    return _cli(capsys, "ingest", *(str(DATA / name) for name in files), "--db", str(db))


def _impact(capsys: pytest.CaptureFixture[str], db: Path, name: str, day: str) -> dict:
    out = _cli(
        capsys, "impact", name, "--partition", f"day={day}", "--format", "json", "--db", str(db)
    )
    return json.loads(out)


def _affected(answer: dict) -> set[str]:
    return {run["runId"] for run in answer["runs"]}


def _datasets(db: Path) -> set[tuple[str, str]]:
    with sqlite3.connect(db) as connection:
        return set(connection.execute("SELECT namespace, name FROM datasets"))


@pytest.mark.parametrize(
    "order",
    [
        ("table_writer.jsonl", "location_reader.jsonl"),
        ("location_reader.jsonl", "table_writer.jsonl"),
    ],
    ids=["table-first", "location-first"],
)
def test_a_partition_written_by_table_name_reaches_its_readers_by_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], order: tuple[str, str]
) -> None:
    db = tmp_path / "lineage.db"
    for name in order:  # two ingests: the second finds the first's datasets stored
        _ingest(capsys, db, name)
    # one dataset for the table and its location, whichever name came first
    assert (
        len(
            _datasets(db)
            & {("hive://localhost:9083", "db.events"), ("file", "/warehouse/db.db/events")}
        )
        == 1
    )
    for asked in ("db.events", "/warehouse/db.db/events"):
        answer = _impact(capsys, db, asked, "2024-11-03")
        assert _affected(answer) == {READER_03}  # not the reader of 2024-11-04
    out = _cli(
        capsys,
        "provenance",
        "daily_report",
        "--partition",
        "day=2024-11-03",
        "--format",
        "json",
        "--db",
        str(db),
    )
    (writer,) = json.loads(out)["writers"]
    (read,) = writer["inputs"]
    assert [step["runId"] for step in read["writers"]] == [LOADER_03]


def test_openlineage_spark_location_with_a_table_symlink_joins_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "lineage.db"
    _ingest(
        capsys, db, "table_writer.jsonl", "location_reader.jsonl", "spark_location_writer.jsonl"
    )
    out = _cli(capsys, "partitions", "db.events", "--format", "json", "--db", str(db))
    listed = {item["identifier"] for item in json.loads(out)["partitions"]}
    assert listed == {"day=2024-11-03", "day=2024-11-04", "day=2024-11-05"}
    # the partition openlineage-spark wrote under the location is the table's
    answer = _cli(
        capsys,
        "provenance",
        "db.events",
        "--partition",
        "day=2024-11-05",
        "--format",
        "json",
        "--db",
        str(db),
    )
    assert [step["runId"] for step in json.loads(answer)["writers"]] == [SPARK]


def test_two_datasets_stored_apart_are_merged_when_an_event_joins_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "lineage.db"
    # The table named alone, and its location named alone: nothing says they are one.
    _ingest(capsys, db, "table_only.jsonl", "location_reader.jsonl")
    assert {("hive://localhost:9083", "db.events"), ("file", "/warehouse/db.db/events")} <= (
        _datasets(db)
    )
    before = _impact(capsys, db, "db.events", "2024-11-03")
    assert READER_03 not in _affected(before)
    _ingest(capsys, db, "table_writer.jsonl")  # says the table is at that location
    assert ("file", "/warehouse/db.db/events") not in _datasets(db)
    after = _impact(capsys, db, "db.events", "2024-11-03")
    assert _affected(after) == {AUDIT, READER_03}
    # The audit run read day=2024-11-03 by the table's name and day=2024-11-04 by its location:
    # one read now, whose condition is the OR of both.
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT a.condition, a.listed FROM accesses a WHERE a.run_id = ? "
            "AND a.direction = 'input'",
            (AUDIT,),
        ).fetchall()
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
    ((condition, listed),) = rows
    assert "2024-11-03" in condition and "2024-11-04" in condition and listed == 1
    later = _impact(capsys, db, "/warehouse/db.db/events", "2024-11-04")
    assert _affected(later) == {AUDIT, READER_04}


def test_two_tables_over_one_location_are_one_dataset_named_by_the_least_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "lineage.db"
    _ingest(capsys, db, "ambiguous.jsonl")
    # db.t1 and db.t2 are both at /warehouse/shared: what one writes there, the other reads.
    names = _datasets(db)
    assert ("hive://localhost:9083", "db.t1") in names
    assert not names & {("hive://localhost:9083", "db.t2"), ("file", "/warehouse/shared")}
    text = _cli(capsys, "impact", "db.t2", "--partition", "day=2024-11-03", "--db", str(db))
    assert "kept apart" not in text
    # db.t2's write reaches the reader of db.t1: the same files
    assert "00000000-0000-4000-8000-000000000503" in text
    # the latest writer of the shared day is db.t2's loader, whichever table is asked
    for table in ("db.t1", "db.t2"):
        answer = _cli(capsys, "provenance", table, "--format", "json", "--db", str(db))
        assert [step["runId"] for step in json.loads(answer)["writers"]] == [
            "00000000-0000-4000-8000-000000000502"
        ]
    history = _cli(capsys, "history", "db.t2", "--db", str(db))
    assert "000000000501" in history and "000000000502" in history


def test_ingesting_the_same_files_again_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = sorted(path.name for path in DATA.glob("*.jsonl"))
    db = tmp_path / "lineage.db"
    _ingest(capsys, db, *files)
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    out = _ingest(capsys, db, *files)
    assert "0 event(s) stored" in out
    tables = [
        "datasets",
        "dataset_names",
        "accesses",
        "access_conditions",
        "partitions",
        "access_partitions",
        "access_bounds",
        "partition_columns",
        "partition_kinds",
    ]
    with sqlite3.connect(db) as again, sqlite3.connect(copy) as first:
        for table in tables:
            query = f"SELECT * FROM {table}"
            rows = sorted(map(repr, again.execute(query)))
            assert rows == sorted(map(repr, first.execute(query))), table


def test_the_dataset_facets_list_its_other_names_and_come_from_any_of_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "lineage.db"
    _ingest(capsys, db, "location_reader.jsonl", "spark_location_writer.jsonl")
    # stored first under the location (by the reader), then named a table by openlineage-spark:
    # printed by the table's name, whichever came first; any of its names finds it
    with Lineage(db) as lineage:
        found = lineage.dataset_facets(DatasetRef("file", "/warehouse/db.db/events"))
        by_table = lineage.dataset_facets(DatasetRef("hive://localhost:9083", "db.events"))
    assert found is not None and found == by_table
    assert found.other_names == (
        (DatasetRef("file", "/warehouse/db.db/events"), "location, symlink"),
    )
    assert "symlinks" in [facet.name for facet in found.facets]


def test_a_layout_5_database_gains_the_table_of_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "lineage.db"
    _ingest(capsys, db, "location_reader.jsonl")
    with sqlite3.connect(db) as connection:
        connection.execute("DROP TABLE dataset_names")
        connection.execute("PRAGMA user_version = 5")
    _ingest(capsys, db, "table_writer.jsonl")  # upgraded when opened, then joined
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert _affected(_impact(capsys, db, "db.events", "2024-11-03")) == {READER_03}


def test_with_other_names_ignored_each_name_stays_a_dataset_and_joined_ones_stay_joined(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "lineage.db"
    _ingest(capsys, db, "table_writer.jsonl")  # joins db.events and its location
    out = _cli(capsys, "settings", "--other-names", "ignore", "--db", str(db))
    assert "other names: ignore (was join)" in out and "ingested from now on" in out
    assert json.loads(_cli(capsys, "settings", "--format", "json", "--db", str(db))) == {
        "partition_directories": "as-partitions",
        "other_names": "ignore",
    }
    _ingest(capsys, db, "ambiguous.jsonl")  # claims that db.t1, db.t2 are at /warehouse/shared
    names = _datasets(db)
    assert {
        ("hive://localhost:9083", "db.t1"),
        ("hive://localhost:9083", "db.t2"),
        ("file", "/warehouse/shared"),
    } <= names
    assert ("file", "/warehouse/db.db/events") not in names  # joined before: still one
    _ingest(capsys, db, "location_reader.jsonl")  # by the location: the table's reader
    assert _affected(_impact(capsys, db, "db.events", "2024-11-03")) == {READER_03}


def test_a_location_an_earlier_version_kept_apart_is_joined_at_the_next_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "lineage.db"
    _ingest(capsys, db, "table_writer.jsonl")
    # As an earlier version left two tables over one location: the location claimed twice.
    with sqlite3.connect(db) as connection:
        connection.execute(
            "INSERT INTO datasets (dataset_id, namespace, name) VALUES (99, 'hive://x', 'db.o')"
        )
        connection.execute(
            "INSERT INTO dataset_names SELECT namespace, name, 99, reason FROM dataset_names "
            "WHERE name = '/warehouse/db.db/events'"
        )
        connection.execute(
            "INSERT INTO dataset_names VALUES ('hive://x', 'db.o', 99, 'table, symlink')"
        )
        # and events named by the location, stored then as a dataset of its own
        connection.execute(
            "INSERT INTO datasets (dataset_id, namespace, name) "
            "VALUES (100, 'file', '/warehouse/db.db/events')"
        )
    text = _cli(capsys, "impact", "db.events", "--partition", "day=2024-11-03", "--db", str(db))
    assert "kept apart" in text  # said until joined
    _ingest(capsys, db, "location_reader.jsonl")
    assert _datasets(db) & {
        ("hive://x", "db.o"),
        ("hive://localhost:9083", "db.events"),
        ("file", "/warehouse/db.db/events"),
    } == {("hive://localhost:9083", "db.events")}
    text = _cli(capsys, "impact", "db.o", "--partition", "day=2024-11-03", "--db", str(db))
    assert "kept apart" not in text and READER_03 in text
