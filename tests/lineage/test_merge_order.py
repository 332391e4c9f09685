"""One store, one set of answers, however the events arrive: random histories of tables and
locations joined by ``symlinks`` facets, ingested as one file, one event at a time through the
service's writer (as ``lineage serve`` stores each POST), and split into several ingests in a
shuffled order, must leave the same database (but for its internal ids) and give the same
answers.

The histories (:func:`history`) are made to find what depends on arrival: two tables over one
location, a location named before and after the table that claims it, a run reading a dataset
by two of its names, a partition given two identifiers, events of one run at the same instant,
conditions on some events of a run and not others. Many histories share one database (each in
names of its own), so that 1,000 of them cost a few ingests.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import (
    HistoryQuery,
    ImpactQuery,
    Lineage,
    LineageQueryError,
    PartitionsQuery,
    ProvenanceQuery,
    Stored,
    ingest,
)
from openlineage_subset.service import EventSink
from tests.helpers import CORE_URL, PRODUCER
from tests.lineage.counts import assert_counts_kept
from tests.lineage.events import with_subset, write_events

Json = dict[str, Any]
HISTORIES = 1000
PER_DATABASE = 125  # histories in one database: 8 databases per way of ingesting
DAYS = ("2024-11-01", "2024-11-02", "2024-11-03")
ASKED = 2  # questions asked of each history, besides the whole store compared


def names(number: int) -> list[tuple[str, str]]:
    """History ``number``'s dataset names: two tables, three locations, a plain dataset."""
    return [
        (f"hive://m{number}", "db.a"),
        (f"hive://m{number}", "db.b"),
        ("file", f"/h{number}/a"),
        ("file", f"/h{number}/b"),
        ("file", f"/h{number}/shared"),
        ("file", f"/h{number}/plain"),
    ]


def _is_table(name: tuple[str, str]) -> bool:
    return name[0].startswith("hive:")


def _condition(chosen: random.Random, location: str) -> Json | None:
    kind = chosen.randrange(6)
    if kind == 0:
        return None
    if kind == 5:  # files and folders of the dataset's days
        days = chosen.sample(DAYS, chosen.randint(1, 2))
        places = [f"{location}/day={day}" + chosen.choice(("", "/a.parquet")) for day in days]
        return {"type": "location", "locations": places}
    if kind <= 2:
        days = chosen.sample(DAYS, chosen.randint(1, 2))
        return {
            "type": "partition",
            "partitions": [
                {
                    "dimensions": {"day": day},
                    # two spellings of one partition: the least is kept, whichever came first
                    "identifier": chosen.choice((f"day={day}", f"{location}/day={day}")),
                }
                for day in days
            ],
        }
    comparison = "EQUAL" if kind == 3 else "GREATER_EQUAL_THAN"
    return {
        "type": "compare",
        "left": {"type": "field", "field": "day"},
        "right": {"type": "literal", "value": chosen.choice(DAYS)},
        "comparison": comparison,
    }


def _dataset(
    chosen: random.Random, name: tuple[str, str], known: list[tuple[str, str]], role: str
) -> Json:
    dataset: Json = {"namespace": name[0], "name": name[1]}
    others = [other for other in known if _is_table(other) != _is_table(name)]
    if others and chosen.random() < 0.45:  # a table's location, or a location's table
        other = chosen.choice(others)
        kind = "TABLE" if _is_table(other) else "LOCATION"
        dataset["facets"] = {
            "symlinks": {
                "_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
                "identifiers": [{"namespace": other[0], "name": other[1], "type": kind}],
            }
        }
    return with_subset(dataset, _condition(chosen, name[1]), role)


def history(number: int, chosen: random.Random) -> list[Json]:
    """A random history of 2 to 6 runs over :func:`names`, their events in arrival order."""
    known = names(number)
    events: list[Json] = []
    for run in range(chosen.randint(2, 6)):
        run_id = f"{number:08x}-0000-4000-8000-{run:012x}"
        job = chosen.choice(("load", "report", "fix"))
        reads = chosen.sample(known, chosen.randint(0, 2))
        writes = chosen.sample(known, chosen.randint(0, 2))
        start = chosen.randint(0, 40)  # ties between runs, and between a run's events
        types = chosen.choice((["START", "COMPLETE"], ["COMPLETE"], ["START", "FAIL"]))
        for offset, event_type in enumerate(types):
            minute = start + chosen.choice((0, offset, offset * 2))
            events.append(
                {
                    "eventType": event_type,
                    "eventTime": f"2024-11-04T{minute // 60:02d}:{minute % 60:02d}:00Z",
                    "producer": PRODUCER,
                    "schemaURL": CORE_URL,
                    "run": {"runId": run_id},
                    "job": {"namespace": "tests", "name": f"h{number}.{job}"},
                    "inputs": [_dataset(chosen, name, known, "input") for name in reads],
                    "outputs": [_dataset(chosen, name, known, "output") for name in writes],
                }
            )
    return events


def _one_file(tmp: Path, events: list[Json]) -> None:
    report = ingest([write_events(tmp / "all.jsonl", events)], tmp / "lineage.db")
    assert report.invalid == 0, report.problems


def _one_at_a_time(tmp: Path, events: list[Json]) -> None:
    """Each event posted alone, in a shuffled order, as ``lineage serve`` stores them."""
    shuffled = random.Random(len(events)).sample(events, len(events))

    async def post() -> None:
        sink = EventSink(tmp / "lineage.db")
        try:
            for number, event in enumerate(shuffled):
                posted = await sink.store(json.dumps(event).encode(), f"post {number}")
                assert isinstance(posted, Stored), posted
        finally:
            sink.close()

    asyncio.run(post())


def _split(tmp: Path, events: list[Json]) -> None:
    """The events cut into 2 to 5 parts, each shuffled, ingested one part after another (each
    ingest's writer starts knowing nothing of the others)."""
    chosen = random.Random(len(events) + 1)
    shuffled = chosen.sample(events, len(events))
    cuts = sorted(chosen.sample(range(1, len(shuffled)), chosen.randint(1, 4)))
    for number, (low, high) in enumerate(zip([0, *cuts], [*cuts, len(shuffled)], strict=True)):
        part = write_events(tmp / f"part{number}.jsonl", shuffled[low:high])
        report = ingest([part], tmp / "lineage.db")
        assert report.invalid == 0, report.problems


WAYS: dict[str, Callable[[Path, list[Json]], None]] = {
    "one file": _one_file,
    "one event at a time": _one_at_a_time,
    "split and shuffled": _split,
}

# The store as its rows say, every id replaced by what it stands for.
_STORE = {
    "datasets": "SELECT namespace, name FROM datasets",
    "names": "SELECT n.namespace, n.name, d.namespace, d.name, n.reason FROM dataset_names n "
    "JOIN datasets d USING (dataset_id)",
    "runs": "SELECT * FROM runs",
    "parents": "SELECT * FROM run_parents",
    "events": "SELECT digest, run_id, event_type, event_time, facets FROM events",
    "accesses": "SELECT a.run_id, d.namespace, d.name, a.direction, a.condition, a.listed, "
    "a.located FROM accesses a JOIN datasets d USING (dataset_id)",
    "conditions": "SELECT a.run_id, d.name, a.direction, c.condition FROM access_conditions c "
    "JOIN accesses a USING (access_id) JOIN datasets d USING (dataset_id)",
    "bounds": "SELECT a.run_id, d.name, b.column_name, b.low, b.high FROM access_bounds b "
    "JOIN accesses a USING (access_id) JOIN datasets d USING (dataset_id)",
    # the indexes of places and of ranges, under the dataset each access is of
    "places": "SELECT d.name, l.place, a.run_id, a.direction FROM access_locations l "
    "JOIN accesses a USING (access_id) JOIN datasets d ON d.dataset_id = l.dataset_id "
    "AND d.dataset_id = a.dataset_id",
    "ranges": "SELECT d.name, g.column_name, g.span, g.key, a.run_id FROM access_ranges g "
    "JOIN accesses a USING (access_id) JOIN datasets d ON d.dataset_id = g.dataset_id "
    "AND d.dataset_id = a.dataset_id",
    "index rows": "SELECT 'places', count(*) FROM access_locations UNION ALL "
    "SELECT 'ranges', count(*) FROM access_ranges",
    "partitions": "SELECT d.name, p.dimensions, p.identifier FROM partitions p "
    "JOIN datasets d USING (dataset_id)",
    "listed": "SELECT d.name, p.dimensions, a.run_id, a.direction FROM access_partitions l "
    "JOIN partitions p USING (partition_id) JOIN accesses a USING (access_id) "
    "JOIN datasets d ON d.dataset_id = a.dataset_id",
    "columns": "SELECT d.name, c.columns FROM partition_columns c JOIN datasets d USING "
    "(dataset_id)",
    "kinds": "SELECT d.name, k.column_name, k.kind FROM partition_kinds k JOIN datasets d "
    "USING (dataset_id)",
    "tails": "SELECT d.name, t.tail FROM partition_tails t JOIN datasets d USING (dataset_id)",
    # layout 12: what the listing of datasets reads instead of every access
    "counts": "SELECT d.name, c.reads, c.writes, c.known_partitions FROM dataset_counts c "
    "JOIN datasets d USING (dataset_id)",
    "times": "SELECT a.run_id, d.name, a.direction, a.written_at, a.started_at FROM accesses a "
    "JOIN datasets d USING (dataset_id)",
}


def _store(db: Path) -> dict[str, list[str]]:
    with sqlite3.connect(db) as connection:
        return {
            table: sorted(map(repr, connection.execute(query))) for table, query in _STORE.items()
        }


def _questions(number: int, chosen: random.Random) -> Iterator[tuple[str, Any]]:
    """Random questions about history ``number``, by any of its names."""
    for _ in range(ASKED):
        namespace, name = chosen.choice(names(number))
        partition = chosen.choice((None, *({"day": day} for day in DAYS)))
        kind = chosen.choice(("impact", "provenance", "history", "partitions"))
        if kind == "impact" and chosen.random() < 0.5:  # a bad file of a day
            day = chosen.choice(DAYS)
            place = f"{names(number)[chosen.randrange(2, 5)][1]}/day={day}/a.parquet"
            yield kind, ImpactQuery(name, location=place, namespace=namespace)
        elif kind == "impact":
            yield kind, ImpactQuery(name, partition=partition, namespace=namespace)
        elif kind == "provenance":
            yield kind, ProvenanceQuery(name, partition=partition, namespace=namespace)
        elif kind == "history":
            yield kind, HistoryQuery(name, partition=partition, namespace=namespace)
        else:
            yield kind, PartitionsQuery(name, namespace=namespace)


def _answers(db: Path, questions: list[tuple[str, Any]]) -> list[str]:
    answers = []
    with Lineage(db) as lineage:
        for kind, query in questions:
            try:
                answer = getattr(lineage, kind)(query).as_json()
            except LineageQueryError as error:  # no such dataset: said alike too
                answer = {"error": str(error)}
            answers.append(json.dumps(answer, sort_keys=True))
    return answers


@pytest.mark.parametrize("batch", range(HISTORIES // PER_DATABASE))
def test_every_way_of_ingesting_a_history_gives_one_store_and_one_answer(
    tmp_path: Path, batch: int
) -> None:
    chosen = random.Random(batch)
    numbers = range(batch * PER_DATABASE, (batch + 1) * PER_DATABASE)
    events = [event for number in numbers for event in history(number, chosen)]
    questions = [question for number in numbers for question in _questions(number, chosen)]
    stores, answers = {}, {}
    for way, store in WAYS.items():
        folder = tmp_path / way.replace(" ", "-")
        folder.mkdir()
        store(folder, events)
        assert_counts_kept(folder / "lineage.db")
        stores[way] = _store(folder / "lineage.db")
        answers[way] = _answers(folder / "lineage.db", questions)
    first, *others = WAYS
    for way in others:
        for table, rows in stores[first].items():
            assert stores[way][table] == rows, f"{table}: {first} and {way} differ"
        for (kind, query), one, other in zip(questions, answers[first], answers[way], strict=True):
            assert one == other, f"{kind} {query}: {first} and {way} differ"
    # the histories made what they are meant to: joined datasets, and answers that name runs
    assert any("table" in row for row in stores[first]["names"])
    assert sum('"runId"' in answer for answer in answers[first]) > PER_DATABASE
