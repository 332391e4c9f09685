"""The runs listing shows the runs of one job under one parent run (a streaming query's
micro-batches) as one row, the newest of them with their count: whatever order and chunks the
events came in, and without reading the runs it does not list."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from openlineage_subset.lineage import Lineage, LineageStore, RunsQuery, ingest
from tests.helpers import PRODUCER
from tests.lineage.events import Json, event, run_id, write_events

PARENT_URL = "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet"
QUERY, RESTARTED, APP = 1, 2, 3


def _parented(item: Json, parent: int, job: str) -> Json:
    facet = {
        "_producer": PRODUCER,
        "_schemaURL": PARENT_URL,
        "run": {"runId": run_id(parent)},
        "job": {"namespace": "tests", "name": job},
    }
    item["run"] = {**item["run"], "facets": {"parent": facet}}  # type: ignore[dict-item]
    return item


def _history(batches: int, rng: random.Random) -> list[Json]:
    """A query run and its batches, the query restarted (a new run, batches of the same job),
    a daily job with no parent between them, and an application with one action of a job and
    three of another. Some batches name their parent on their end only."""
    events: list[Json] = [
        event(QUERY, "START", 0, job="app.stream.q"),
        event(RESTARTED, "START", 5000, job="app.stream.q"),
        event(APP, "START", 0.5, job="app"),
    ]
    number = 10
    for query, first in ((QUERY, 1), (RESTARTED, 5001)):
        for batch in range(batches):
            number += 1
            start = first + batch * 2 + rng.choice([0, 0, 0.5])  # some start together
            begin = event(number, "START", start, job="app.stream.q.batch")
            end = event(number, "COMPLETE", start + 1, job="app.stream.q.batch")
            if rng.random() < 0.8:
                _parented(begin, query, "app.stream.q")
            events += [begin, _parented(end, query, "app.stream.q")]
    for day in range(4):
        number += 1
        events += [
            event(number, "START", 1000 * day + 3, job="daily"),
            event(number, "COMPLETE", 1000 * day + 4, job="daily"),
        ]
    for job, count in (("app.save.a", 1), ("app.save.b", 3)):
        for _ in range(count):
            number += 1
            events.append(
                _parented(event(number, "COMPLETE", 2 + number / 100, job=job), APP, "app")
            )
    return events


def _expected(events: list[Json]) -> list[tuple[str, int]]:
    """The rows the listing must give, from the events: each run's start (its START's time,
    else its earliest event's), grouped by (parent, job), newest first."""
    runs: dict[str, dict[str, object]] = {}
    for item in events:
        found = runs.setdefault(item["run"]["runId"], {"job": item["job"]["name"], "times": []})  # type: ignore[index]
        found["times"].append((item["eventType"] != "START", item["eventTime"]))  # type: ignore[attr-defined]
        parent = item["run"].get("facets", {}).get("parent")  # type: ignore[attr-defined]
        if parent is not None:
            found["parent"] = parent["run"]["runId"]
    groups: dict[tuple[object, ...], list[tuple[str, str]]] = {}
    for number, found in runs.items():
        started = min(found["times"])[1]  # type: ignore[type-var]
        parent = found.get("parent")
        key = (number,) if parent is None else (parent, found["job"])
        groups.setdefault(key, []).append((started, number))  # type: ignore[arg-type]
    rows = []
    for members in groups.values():
        newest = min(members, key=lambda member: (_descending(member[0]), member[1]))
        rows.append((newest, len(members)))
    rows.sort(key=lambda row: (_descending(row[0][0]), row[0][1]))
    return [(member[1], count) for member, count in rows]


def _descending(text: str) -> list[int]:
    return [-ord(char) for char in text]


def _listed(db: str, limit: int | None = None) -> list[tuple[str, int]]:
    with Lineage(db) as lineage:
        report = lineage.runs(RunsQuery(limit=limit))
    assert report.shown == sum(item.family.runs if item.family else 1 for item in report.runs)
    return [(item.run.run_id, item.family.runs if item.family else 1) for item in report.runs]


def _chunks(events: list[Json], rng: random.Random) -> Iterator[list[Json]]:
    while events:
        size = rng.randint(1, max(1, len(events) // 3))
        yield events[:size]
        events = events[size:]


@pytest.mark.parametrize("seed", range(5))
def test_a_jobs_runs_under_one_parent_are_one_row_whatever_order_they_came_in(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    events = _history(12, rng)
    expected = _expected(events)
    assert (run_id(11), 1) not in expected and any(count == 12 for _, count in expected)
    assert any(count == 3 for _, count in expected), "the application's three actions of a job"
    shuffled = list(events)
    rng.shuffle(shuffled)
    db = str(tmp_path / "lineage.db")
    for number, chunk in enumerate(_chunks(shuffled, rng)):  # ingests of a few events each
        ingest([write_events(tmp_path / f"chunk-{number}.jsonl", chunk)], db)
    assert _listed(db) == expected
    assert _listed(db, limit=3) == expected[:3]
    with Lineage(db) as lineage:
        report = lineage.runs(RunsQuery(limit=None))
        assert report.total == report.shown == len({e["run"]["runId"] for e in events})  # type: ignore[index]
        (family,) = [item for item in report.runs if item.run.run_id == expected[0][0]]
        assert family.family is not None and family.family.parent_run_id == run_id(RESTARTED)
        assert family.as_json()["family"] == {"parentRunId": run_id(RESTARTED), "runs": 12}
        assert lineage.runs(RunsQuery(job="daily", limit=None)).shown == 4


def test_a_layout_8_database_gets_the_families_of_its_runs(tmp_path: Path) -> None:
    events = _history(6, random.Random(7))
    source = write_events(tmp_path / "events.jsonl", events)
    fresh, old = str(tmp_path / "fresh.db"), str(tmp_path / "old.db")
    ingest([source], fresh)
    ingest([source], old)
    with sqlite3.connect(old) as connection:
        for name in ("run_families_joined", "run_families_joined_later", "run_families_moved"):
            connection.execute(f"DROP TRIGGER {name}")
        connection.execute("DROP TABLE run_families")
        connection.execute("DROP INDEX runs_alone_by_start")
        connection.execute("ALTER TABLE runs DROP COLUMN parented")
        connection.execute("PRAGMA user_version = 8")
    assert _listed(old) == _listed(fresh) == _expected(events)
    with sqlite3.connect(old) as connection, sqlite3.connect(fresh) as made:
        table = "SELECT * FROM run_families ORDER BY 1, 2, 3"
        assert connection.execute(table).fetchall() == made.execute(table).fetchall()
    later = write_events(tmp_path / "later.jsonl", _history(8, random.Random(7))[-40:])
    ingest([later], old)  # the triggers keep it as an ingest into a new file would
    ingest([later], fresh)
    assert _listed(old) == _listed(fresh)


def _steps(db: str) -> int:
    """SQLite's virtual machine steps (in hundreds) the latest 20 rows of the listing take."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    with LineageStore.open(db, create=False) as store:
        store.connection.set_progress_handler(count, 100)
        Lineage(store).runs(RunsQuery(limit=20))
    return steps


def test_the_listing_does_not_read_the_runs_it_does_not_list(tmp_path: Path) -> None:
    steps = []
    for batches in (50, 400):
        db = str(tmp_path / f"lineage-{batches}.db")
        events = _history(batches, random.Random(1))
        ingest([write_events(tmp_path / f"events-{batches}.jsonl", events)], db)
        steps.append(_steps(db))
    # Eight times the batches, the same rows listed: the same work (the total is SQLite's
    # count of the table's rows, which steps through none of them).
    assert steps[1] <= steps[0] + 1, steps


def test_a_start_that_comes_late_moves_the_newest_back(tmp_path: Path) -> None:
    parent = [event(QUERY, "START", 0, job="q")]
    first = [
        _parented(event(21, "START", 10, job="q.batch"), QUERY, "q"),
        _parented(event(21, "COMPLETE", 11, job="q.batch"), QUERY, "q"),
        _parented(event(22, "COMPLETE", 12, job="q.batch"), QUERY, "q"),  # its START: later
    ]
    db = str(tmp_path / "lineage.db")
    ingest([write_events(tmp_path / "first.jsonl", parent + first)], db)
    assert _listed(db) == [(run_id(22), 2), (run_id(QUERY), 1)]
    late = [_parented(event(22, "START", 9, job="q.batch"), QUERY, "q")]
    ingest([write_events(tmp_path / "late.jsonl", late)], db)
    assert _listed(db) == [(run_id(21), 2), (run_id(QUERY), 1)]


def test_the_command_says_what_a_row_stands_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from openlineage_subset.cli import main

    db = str(tmp_path / "lineage.db")
    ingest([write_events(tmp_path / "events.jsonl", _history(5, random.Random(3)))], db)
    assert main(["lineage", "runs", "--db", db, "--limit", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "6 of 21 run(s), the latest first, in 2 row(s): a job's runs under one parent run are one"
    )
    assert out[1].startswith(f"{run_id(20)} tests.app.stream.q.batch COMPLETE ")
    assert out[2] == (
        f"  the newest of 5 runs of this job under run {run_id(RESTARTED)} "
        "(its page in the web UI lists them all)"
    )
