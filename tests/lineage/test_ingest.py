"""ingest(): validation with file:line, idempotence, merging a run's events, the database file."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import (
    APPLICATION_ID,
    LineageDatabaseError,
    LineageStore,
    history,
    ingest,
)
from openlineage_subset.lineage.ingestion import _writer as writer_module
from openlineage_subset.lineage.ingestion._shapes import CheckedEvent
from tests.lineage.events import LAKE, at, compare, day, event, run, run_id, write_events
from tests.lineage.mixed_inputs import tables


def _run_row(db: Path, number: int) -> tuple[Any, ...]:
    with sqlite3.connect(db) as connection:
        row: tuple[Any, ...] = connection.execute(
            "SELECT status, started_at, ended_at FROM runs WHERE run_id = ?", (run_id(number),)
        ).fetchone()
        return row


def _condition(db: Path, number: int, name: str, direction: str) -> Any:
    with sqlite3.connect(db) as connection:
        text = connection.execute(
            "SELECT a.condition FROM accesses a JOIN datasets d USING (dataset_id) "
            "WHERE a.run_id = ? AND d.name = ? AND a.direction = ?",
            (run_id(number), f"{LAKE}/{name}", direction),
        ).fetchone()[0]
    return None if text is None else json.loads(text)


def test_counts_and_idempotent_reingest(tmp_path: Path) -> None:
    source = write_events(
        tmp_path / "events.jsonl",
        [*run(1, 0, 1, writes=[("a", day("d1"))]), *run(2, 2, 3, reads=[("a", day("d1"))])],
    )
    db = tmp_path / "lineage.db"
    first = ingest([source], db)
    assert (first.stored, first.duplicates, first.invalid, first.runs) == (4, 0, 0, 2)
    before = tables(db)
    again = ingest([source, tmp_path], db)  # the file twice: as itself and inside its folder
    assert (again.stored, again.duplicates, again.runs) == (0, 8, 0)
    assert tables(db) == before


def test_invalid_lines_are_reported_with_file_and_line(tmp_path: Path) -> None:
    good = run(1, 0, 1)
    no_run_id = event(2, "START", 0)
    del no_run_id["run"]["runId"]
    bad_time = event(3, "START", 0)
    bad_time["eventTime"] = "15/10/2024"
    lines = [
        json.dumps(good[0]),
        "{not json",
        json.dumps(no_run_id),
        "",
        json.dumps(bad_time),
        json.dumps([1, 2]),
        json.dumps(good[1]),
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = ingest([path], tmp_path / "lineage.db")
    assert (report.stored, report.invalid) == (2, 4)
    assert [problem.where for problem in report.problems] == [
        f"{path}:2",
        f"{path}:3",
        f"{path}:5",
        f"{path}:6",
    ]
    assert "not valid JSON" in report.problems[0].message
    assert "cut short" not in report.problems[0].message
    assert "runId" in report.problems[1].message
    assert "eventTime" in report.problems[2].message and "ISO-8601" in report.problems[2].message


def test_a_line_cut_short_is_reported_as_cut_short(tmp_path: Path) -> None:
    whole = json.dumps(event(1, "START", 0))
    cut = whole[: whole.index('"eventTime": "') + 18]  # inside the eventTime string
    path = tmp_path / "events.jsonl"
    path.write_text(cut + "\n" + whole + "\n", encoding="utf-8")
    report = ingest([path], tmp_path / "lineage.db")
    assert (report.stored, report.invalid) == (1, 1)
    assert report.problems[0].message == (
        f"not valid JSON: the line is cut short: it ends at column {len(cut) + 1}, "
        "inside its JSON value"
    )


def test_an_event_failing_while_stored_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = writer_module.Writer._dataset_ids

    def failing(self: Any, events: list[CheckedEvent]) -> Any:
        names = [access.name for event in events for access in event.accesses]
        if any(name.endswith("/boom") for name in names):
            raise ValueError("cannot store this dataset")
        return original(self, events)

    # The chunk fails as a whole, then each of its events is stored on its own.
    monkeypatch.setattr(writer_module.Writer, "_dataset_ids", failing)
    source = write_events(
        tmp_path / "events.jsonl",
        [event(1, "START", 0, reads=[("a", None), ("boom", None)]), *run(2, 0, 1)],
    )
    db = tmp_path / "lineage.db"
    report = ingest([source], db)
    assert (report.stored, report.invalid) == (2, 1)
    assert report.problems[0].where == f"{source}:1"
    assert report.problems[0].message == "not stored: cannot store this dataset"
    stored = tables(db)
    assert [row[0] for row in stored["runs"]] == [run_id(2)]
    assert stored["accesses"] == [] and stored["datasets"] == []


def test_start_without_the_output_facet_does_not_override_the_end(tmp_path: Path) -> None:
    source = write_events(tmp_path / "e.jsonl", run(1, 0, 1, writes=[("a", day("d1"))]))
    db = tmp_path / "lineage.db"
    ingest([source], db)
    assert _condition(db, 1, "a", "output") == day("d1")


def test_distinct_conditions_of_a_run_are_ored_and_no_facet_is_whole(tmp_path: Path) -> None:
    events = [
        event(1, "START", 0, reads=[("a", day("d1")), ("b", None)]),
        event(1, "RUNNING", 1, reads=[("a", day("d2")), ("b", None)]),
        event(1, "COMPLETE", 2, reads=[("a", day("d1")), ("b", None)]),
    ]
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "e.jsonl", events)], db)
    merged = _condition(db, 1, "a", "input")
    assert merged["type"] == "binary" and merged["operator"] == "OR"
    assert sorted([merged["left"], merged["right"]], key=json.dumps) == sorted(
        [day("d1"), day("d2")], key=json.dumps
    )
    assert _condition(db, 1, "b", "input") is None


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 1, 0], [1, 2, 0]])
def test_run_status_and_times_do_not_depend_on_event_order(
    tmp_path: Path, order: list[int]
) -> None:
    events = [event(1, "START", 5), event(1, "RUNNING", 7), event(1, "FAIL", 9)]
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "e.jsonl", [events[i] for i in order])], db)
    assert _run_row(db, 1) == (
        "FAIL",
        "2024-10-15T00:05:00.000000000Z",
        "2024-10-15T00:09:00.000000000Z",
    )


def test_without_start_the_earliest_event_starts_the_run(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    events = [event(1, "RUNNING", 4), event(1, "RUNNING", 3), event(2, "START", 1)]
    ingest([write_events(tmp_path / "e.jsonl", events)], db)
    assert _run_row(db, 1) == ("RUNNING", "2024-10-15T00:03:00.000000000Z", None)
    assert _run_row(db, 2) == ("START", "2024-10-15T00:01:00.000000000Z", None)


def test_dataset_and_job_events_are_skipped(tmp_path: Path) -> None:
    dataset_event = {
        "eventTime": at(0),
        "producer": "https://example.com",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": "file", "name": "/x"},
    }
    job_event = {
        "eventTime": at(0),
        "producer": "https://example.com",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {"namespace": "n", "name": "j"},
    }
    path = write_events(tmp_path / "e.jsonl", [dataset_event, job_event, *run(1, 0, 1)])
    report = ingest([path], tmp_path / "lineage.db")
    assert (report.stored, report.skipped, report.invalid) == (2, 2, 0)


def test_folders_are_read_recursively_and_json_may_be_one_document(tmp_path: Path) -> None:
    nested = tmp_path / "in" / "deeper"
    nested.mkdir(parents=True)
    events = run(1, 0, 1, writes=[("a", day("d1"))])
    write_events(nested / "a.jsonl", events[:1])
    (tmp_path / "in" / "b.json").write_text(json.dumps([events[1]], indent=2), encoding="utf-8")
    (tmp_path / "in" / "notes.txt").write_text("not events", encoding="utf-8")
    report = ingest([tmp_path / "in", tmp_path / "missing.jsonl"], tmp_path / "lineage.db")
    assert (report.stored, report.unreadable) == (2, 1)
    assert report.problems[0].message == "no such file or folder"


def test_the_shapes_validate_reads_as_documents_are_ingested_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON array on one line is its events; an empty array is said as validate says it; an
    array followed by other lines is a line of JSON Lines; a file named neither .jsonl nor
    .ndjson may be one pretty-printed event."""
    events = run(1, 0, 1, writes=[("a", day("d1"))])
    one_line = tmp_path / "one-line.json"
    one_line.write_text(json.dumps(events) + "\n\n", encoding="utf-8")
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    then = tmp_path / "then.json"
    then.write_text(f"[1]\n{json.dumps(events[0])}\n", encoding="utf-8")
    pretty = tmp_path / "event"
    pretty.write_text(json.dumps(run(2, 2, 3)[1], indent=2), encoding="utf-8")
    report = ingest([one_line, empty, then, pretty], tmp_path / "lineage.db")
    assert (report.stored, report.duplicates, report.invalid) == (3, 1, 2)
    assert [problem.where for problem in report.problems] == [str(empty), f"{then}:1"]
    assert report.problems[1].message.endswith("got list")
    main(["validate", str(empty)])
    said = capsys.readouterr().out.splitlines()[0]
    assert said == f"{empty}: error: {report.problems[0].message}"


def test_a_dash_reads_standard_input_as_validate_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = run(1, 0, 1, writes=[("a", day("d1"))])
    data = json.dumps([*events, {"eventType": "START"}], indent=2).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    report = ingest(["-"], tmp_path / "lineage.db")
    assert (report.stored, report.invalid) == (2, 1)
    assert report.problems[0].where == "<stdin>[2]", "named as validate names it"
    monkeypatch.setattr(sys, "stdin", None)
    report = ingest(["-"], tmp_path / "lineage.db")
    assert report.unreadable == 1
    assert str(report.problems[0]) == "<stdin>: standard input is closed"


def test_an_unreadable_folder_is_reported_and_the_rest_ingested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = run(1, 0, 1)
    (tmp_path / "in" / "locked").mkdir(parents=True)
    write_events(tmp_path / "in" / "locked" / "hidden.jsonl", events[:1])
    write_events(tmp_path / "in" / "seen.jsonl", events[1:])
    scandir = os.scandir

    def refusing(path: Any) -> Any:  # a folder without read permission (root reads any)
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    report = ingest([tmp_path / "in"], tmp_path / "lineage.db")
    assert (report.stored, report.unreadable) == (1, 1)
    assert (
        str(report.problems[0]) == f"{tmp_path / 'in' / 'locked'}: cannot read: Permission denied"
    )


def test_partitions_listed_by_reads_and_writes_are_known(tmp_path: Path) -> None:
    condition = {"type": "binary", "operator": "AND", "left": day("d1", "PL"), "right": day("d2")}
    events = [*run(1, 0, 1, reads=[("a", condition)], writes=[("b", compare("x", "EQUAL", "1"))])]
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "e.jsonl", events)], db)
    rows = tables(db)["partitions"]
    assert [(json.loads(row[1]), row[2]) for row in rows] == [
        ({"country": "PL", "day": "d1"}, "day=d1/country=PL"),
        ({"day": "d2"}, "day=d2"),
    ]


def test_a_sqlite_file_of_another_application_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(LineageDatabaseError, match=r"another application.*customers"):
        ingest([], other)
    with sqlite3.connect(other) as connection:
        assert connection.execute("PRAGMA application_id").fetchone()[0] == 0


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "events.jsonl"
    text.write_text('{"a": 1}\n', encoding="utf-8")
    with pytest.raises(LineageDatabaseError, match="not a SQLite database"):
        ingest([], text)
    assert text.read_text(encoding="utf-8") == '{"a": 1}\n'


def test_a_newer_layout_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    LineageStore.open(db, create=True).close()
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        connection.execute("PRAGMA user_version = 99")
    with pytest.raises(LineageDatabaseError, match="layout version 99, newer"):
        LineageStore.open(db)


def test_a_query_on_a_missing_database_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(LineageDatabaseError, match="ol-subset lineage ingest"):
        history(tmp_path / "nothing.db", "a")
    assert not (tmp_path / "nothing.db").exists()
