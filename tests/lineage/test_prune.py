"""Retention (``ol-subset lineage prune``): the runs that ended before a time go, but for the
last writers of what partitions hold; every answer about what remains is the unpruned
history's, less the runs removed, and says so where it reaches before the time. Checked
against the same history never pruned, question by question."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import (
    LineageQueryError,
    dataset_partitions,
    history,
    impact,
    ingest,
    provenance,
    prune,
)
from openlineage_subset.lineage.model import normal_time
from openlineage_subset.lineage.store import _prune as pruning
from tests.lineage.counts import assert_counts_kept
from tests.lineage.events import (
    HOSTILE_NAME,
    at,
    day,
    pipeline_history,
    run,
    run_id,
    write_events,
)

DAYS = 12
CUT = at(60)  # the runs of the first six days ended before it
DATASETS = ("raw", "clean", "rolling", HOSTILE_NAME)
DATES = [f"2024-10-{number:02d}" for number in range(1, DAYS + 1)]
INDEXES = (
    "access_partitions",
    "access_bounds",
    "access_conditions",
    "access_ranges",
    "access_locations",
)


def _history() -> list[dict[str, Any]]:
    events = pipeline_history(DAYS, failed_day=2)
    # a run that fails after saying it writes rolling whole, each day
    for number in range(DAYS):
        events += run(
            900 + number,
            10 * number + 9.5,
            10 * number + 9.7,
            writes=[("rolling", None)],
            status="FAIL",
            job="rolling",
        )
    # a streaming query's batches: runs of one job under one parent, before and after the cut
    for number in range(8):
        batch = run(
            950 + number,
            15 * number,
            15 * number + 1,
            job="stream",
            reads=[("raw", day(DATES[number]))],
        )
        for item in batch:
            item["run"]["facets"] = {"parent": _parent()}
        events += batch
    return events


def _parent() -> dict[str, Any]:
    return {
        "_producer": "https://example.com/p",
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ParentRunFacet.json",
        "run": {"runId": "00000000-0000-4000-8000-999999999999"},
        "job": {"namespace": "tests", "name": "stream-app"},
    }


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Any]:
    folder = tmp_path_factory.mktemp("prune")
    source = write_events(folder / "events.jsonl", _history())
    whole, pruned = str(folder / "whole.db"), str(folder / "pruned.db")
    ingest([source], whole)
    ingest([source], pruned)
    report = prune(pruned, CUT)
    return whole, pruned, report


def _runs(answer: Any) -> set[str]:
    found = set()
    for key, value in answer.items() if isinstance(answer, dict) else enumerate(answer):
        if key == "runId":
            found.add(value)
        elif isinstance(value, (dict, list)):
            found |= _runs(value)
    return found


def _ended(db: str) -> dict[str, str]:
    with sqlite3.connect(db) as connection:
        return dict(
            connection.execute("SELECT run_id, coalesce(ended_at, latest_state_at) FROM runs")
        )


def test_what_partitions_hold_is_answered_as_before(stores: tuple[str, str, Any]) -> None:
    """Each partition's last writer, however old, and the provenance of each one level deep."""
    whole, pruned, report = stores
    assert report.runs > 0 and report.kept > 0, report
    for name in DATASETS:
        before, after = dataset_partitions(whole, name), dataset_partitions(pruned, name)
        assert [s.writer for s in after.partitions] == [s.writer for s in before.partitions]
        for state in before.partitions:
            asked = dict(state.partition.dimensions)
            one = provenance(whole, name, partition=asked, depth=1).as_json()
            other = provenance(pruned, name, partition=asked, depth=1).as_json()
            assert [w["runId"] for w in other["writers"]] == [w["runId"] for w in one["writers"]]


def test_an_answer_is_the_whole_historys_less_the_runs_removed(
    stores: tuple[str, str, Any],
) -> None:
    """Less the runs removed, and those reached only through them (the readers of what a
    removed run wrote): the answer says so; about what was written after the time, as
    before."""
    whole, pruned, _ = stores
    ended = _ended(whole)
    remaining = set(_ended(pruned))
    removed = set(ended) - remaining
    assert removed and all(ended[run_id] < "2024-10-15T01:00" for run_id in removed)
    for name in DATASETS:
        for date in (DATES[1], DATES[8]):
            partition = {"day": date}
            for ask in (impact, history):
                one = ask(whole, name, partition=partition).as_json()
                other = ask(pruned, name, partition=partition).as_json()
                kept = _runs(one) - removed
                # a run reached through a removed one is not reached: said, as the removed are
                assert _runs(other) <= kept, (ask.__name__, name, date)
                if date == DATES[8]:  # written and read after the time: as before
                    assert _runs(other) == kept, (ask.__name__, name, date)
                reaches = ask is history or _runs(one) != _runs(other)
                assert bool(other.get("notes")) >= bool(reaches), "a pruned run is said"
    late = impact(pruned, "raw", partition={"day": DATES[8]}, since=at(80)).as_json()
    assert not late.get("notes"), "an answer from after the time has nothing pruned to say"


def test_nothing_of_a_removed_run_is_left(stores: tuple[str, str, Any]) -> None:
    whole, pruned, report = stores
    with sqlite3.connect(pruned) as connection:
        for table in INDEXES:
            (orphans,) = connection.execute(
                f"SELECT count(*) FROM {table} WHERE access_id NOT IN "
                "(SELECT access_id FROM accesses)"
            ).fetchone()
            assert orphans == 0, table
        for table in ("events", "accesses", "run_parents"):
            (orphans,) = connection.execute(
                f"SELECT count(*) FROM {table} WHERE run_id NOT IN (SELECT run_id FROM runs)"
            ).fetchone()
            assert orphans == 0, table
        families = connection.execute("SELECT runs, newest_run FROM run_families").fetchall()
        (batches,) = connection.execute(
            "SELECT count(*) FROM run_parents WHERE parent_run_id IS NOT NULL"
        ).fetchone()
        (events,) = connection.execute("SELECT count(*) FROM events").fetchone()
    assert 0 < batches < 8, "some of the stream's batches ended before the time"
    assert families == [(batches, run_id(957))], "the family counted again, its newest kept"
    with sqlite3.connect(whole) as connection:
        (all_events,) = connection.execute("SELECT count(*) FROM events").fetchone()
    assert all_events - events == report.events
    assert report.bytes_after < report.bytes_before
    assert_counts_kept(pruned)  # each dataset's reads and writes, less those removed
    with sqlite3.connect(pruned) as connection, sqlite3.connect(whole) as before:
        counted = "SELECT sum(reads + writes) FROM dataset_counts"
        assert connection.execute(counted).fetchone() < before.execute(counted).fetchone()


def _prune_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openlineage_subset", "lineage", "prune", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_time_that_is_not_iso_is_the_users_error(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "e.jsonl", pipeline_history(2))], db)
    with pytest.raises(LineageQueryError, match="before: 'last week' is not an ISO-8601"):
        prune(db, "last week")
    done = _prune_command("--before", "2024-10-16", "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    # every run of the two days ended before: removed, or kept as a partition's last writer
    assert said["runsRemoved"] + said["runsKept"] == 10 and said["runsRemoved"] > 0, said
    bad = _prune_command("--before", "soon", "--db", str(db))
    assert bad.returncode == 2 and "is not an ISO-8601 time" in bad.stderr


def test_a_prune_while_an_ingest_writes_loses_nothing(tmp_path: Path) -> None:
    """Pruning the first days while the next days are ingested (another connection, another
    thread): every new event is stored, and the store is what pruning after gives."""
    events = pipeline_history(DAYS)
    first, later = events[: len(events) // 2], events[len(events) // 2 :]
    db, calm = tmp_path / "busy.db", tmp_path / "calm.db"
    for store in (db, calm):
        ingest([write_events(tmp_path / "first.jsonl", first)], store)
    source = write_events(tmp_path / "later.jsonl", later)
    reports: list[Any] = []
    writer = threading.Thread(target=lambda: reports.append(ingest([source], db)))
    writer.start()
    prune(db, CUT, vacuum=False)
    writer.join()
    assert reports[0].stored == len(later), "every event stored"
    ingest([source], calm)
    whole = tmp_path / "whole.db"
    ingest([write_events(tmp_path / "all.jsonl", events)], whole)
    prune(calm, CUT, vacuum=False)
    # What was pruned depends on what had come when: at most what a prune after removes (a
    # run the ingest changed meanwhile stays), never a run that ended after the time.
    late = {item["run"]["runId"] for item in later if item["eventTime"] >= CUT}
    assert late <= set(_ended(str(db)))
    for name, date in [(name, date) for name in DATASETS for date in DATES[::3]]:
        asked = {"day": date}
        runs = {
            store: _runs(impact(store, name, partition=asked).as_json())
            for store in (db, calm, whole)
        }
        assert runs[calm] <= runs[db] <= runs[whole], (name, date)


def test_a_run_that_changed_since_the_snapshot_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run the prune found old (started before the time, never ended, so not a writer)
    whose end is stored between the prune's snapshot and its removal stays, with its end: it
    is the last writer of what it wrote now."""
    start, end = run(990, 5, 95, writes=[("late", day(DATES[0]))])
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "first.jsonl", [*pipeline_history(DAYS), start])], db)
    ended = write_events(tmp_path / "end.jsonl", [end])
    stored: list[Any] = []
    found_old = pruning._mark_gone

    def end_meanwhile(connection: sqlite3.Connection, before: str) -> int:
        old = found_old(connection, before)
        stored.append(ingest([ended], db))  # another connection, while the snapshot is open
        return old

    monkeypatch.setattr(pruning, "_mark_gone", end_meanwhile)
    report = prune(db, CUT, vacuum=False)
    assert stored[0].stored == 1 and report.runs > 0, report
    assert _ended(str(db))[run_id(990)] == normal_time(end["eventTime"]), "it stays, ended"
    (writer,) = _runs(dataset_partitions(db, "late").as_json())
    assert writer == run_id(990)


def test_memory_follows_a_batch_not_the_runs_kept(tmp_path: Path) -> None:
    """Pruning holds a batch of runs at a time, not every old run: four times the old runs
    kept (each the last writer of its partition) take no more of Python's memory (traced).
    A run whose id is the empty string (not a UUID, stored all the same) is removed as any."""
    peaks = []
    for runs in (1_000, 4_000):
        events = [
            item
            for number in range(runs)
            for item in run(
                number, number / 100, number / 100 + 0.005, writes=[("kept", day(f"p{number}"))]
            )
        ]
        events += [
            item
            for number in range(runs, runs + 20)
            for item in run(number, 1, 2, writes=[("kept", day("p0"))], status="FAIL")
        ]
        nameless = run(runs + 20, 3, 4, writes=[("kept", day("p0"))], status="FAIL")
        for item in nameless:
            item["run"]["runId"] = ""  # not a UUID, and the least of strings: removed too
        events += nameless
        db = tmp_path / f"{runs}.db"
        ingest([write_events(tmp_path / f"{runs}.jsonl", events)], db)
        tracemalloc.start()
        try:
            report = prune(db, CUT, vacuum=False)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert (report.runs, report.kept) == (21, runs), report
    assert peaks[1] < peaks[0] * 1.25, peaks
