"""The queries read what a question needs, not the whole history: the known partitions inside a
coarser partition (a day of partitions by day and country) and those a date range keeps are
found by SQLite, and the writers of a partition with the ``access_partitions`` index; their
answers are those of reading every partition and every write (benchmarks/lineage_queries.py
compares them on a large history)."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import (
    AnswerTooLarge,
    DatasetRef,
    HistoryQuery,
    ImpactQuery,
    Lineage,
    LineageStore,
    PagePartitions,
    PartitionsQuery,
    ProvenanceQuery,
    RunRef,
    dataset_partitions,
    failed_writes,
    impact,
    ingest,
    latest_history,
    provenance,
)
from openlineage_subset.lineage.engine import _timeline
from openlineage_subset.lineage.engine._evaluation import Evaluation
from openlineage_subset.lineage.engine._partition_catalog import DatasetCatalog
from openlineage_subset.lineage.engine._timeline import Access, Timeline
from openlineage_subset.lineage.model import Side
from openlineage_subset.lineage.pages._as_stored import dataset_facets
from openlineage_subset.lineage.queries._incidents import incidents_answer
from openlineage_subset.lineage.queries._listings import datasets_answer
from openlineage_subset.producer import FAILED_EVENT_TYPES
from tests.helpers import sqlite_steps
from tests.lineage.events import (
    HOSTILE_NAME,
    LAKE,
    compare,
    day,
    pipeline_history,
    run,
    write_events,
)


def _db(tmp_path: Path, days: int, *, failing: bool = False) -> str:
    events = pipeline_history(days, failed_day=3)
    if failing:  # and each day a run of rolling that fails, said to write it (no facet: whole)
        for number in range(days):
            start = 10_000 + number
            events += run(
                5_000 + number,
                start,
                start + 0.5,
                writes=[("rolling", None)],
                status="FAIL",
                job="rolling",
            )
    source = write_events(tmp_path / f"events{days}.jsonl", events)
    db = str(tmp_path / f"lineage{days}{'-failing' * failing}.db")
    assert ingest([source], db).invalid == 0
    return db


QUESTIONS = {
    "impact of a day of raw": lambda db: impact(db, "raw", partition={"day": "2024-10-04"}),
    "impact of a day of raw, a country": lambda db: impact(
        db, "raw", partition={"day": "2024-10-04", "country": "FR"}
    ),
    "provenance of rolling": lambda db: provenance(db, "rolling", partition={"day": "2024-10-05"}),
    "provenance of the report": lambda db: provenance(db, HOSTILE_NAME),
    "provenance of all of clean": lambda db: provenance(db, "clean", depth=2),
    "provenance of a day of raw": lambda db: provenance(db, "raw", partition={"day": "2024-10-02"}),
}


def _store(db: str) -> LineageStore:
    return LineageStore.open(db, create=False)


def test_a_day_or_a_date_range_does_not_read_every_partition(tmp_path: Path) -> None:
    with _store(_db(tmp_path, 8)) as store:
        impact(store, "raw", partition={"day": "2024-10-04"})
        provenance(store, "rolling", partition={"day": "2024-10-05"})  # reads clean by a range
        assert store.reads.whole_datasets == 0
        assert store.reads.conditions > 0, "the store counts what its queries read"
        dataset_partitions(store, "raw")  # every partition of it, read
        assert store.reads.whole_datasets > 0


def test_the_answers_are_those_of_reading_every_partition_and_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _db(tmp_path, 8)
    fast = {name: question(db).as_json() for name, question in QUESTIONS.items()}
    # The narrowing seams of the catalog and the timeline, turned off: every partition is
    # evaluated, every write read.
    monkeypatch.setattr(DatasetCatalog, "coarser", lambda *arguments: None)
    monkeypatch.setattr(DatasetCatalog, "within_dates", lambda *arguments: None)
    every_write = Timeline.writers_of

    def all_writes(timeline: Timeline, dataset_id: int, units: Any, before: Any) -> Any:
        return every_write(timeline, dataset_id, [], before)  # no unit: every write, unfiltered

    monkeypatch.setattr(Timeline, "writers_of", all_writes)
    slow = {name: question(db).as_json() for name, question in QUESTIONS.items()}
    assert fast == slow
    assert fast["impact of a day of raw"]["runs"], "the day was read"
    assert fast["provenance of rolling"]["writers"], "the partition was written"


def test_provenance_reads_the_conditions_of_a_partitions_writers_not_of_every_write(
    tmp_path: Path,
) -> None:
    """Provenance of the first day: the writes of later days are left out unread, however many
    days the history holds."""
    counts = []
    for days in (6, 18):
        with _store(_db(tmp_path, days)) as store:
            answer = provenance(store, "rolling", partition={"day": "2024-10-01"})
            assert answer.writers
            counts.append(store.reads.conditions)
    assert counts[0] == counts[1], counts


def test_impact_leaves_out_unread_the_reads_of_other_days_partitions_and_a_filter(
    tmp_path: Path,
) -> None:
    """Impact of a day of ``rolling``, read each day by the report as that day's partition
    ``AND score > 0.5`` (not only a partition list, so ``access_partitions`` alone cannot
    leave it out): the range of days ingest stores for such a read leaves out the reads of
    other days, however many days the history holds."""
    counts = []
    for days in (6, 18):
        with _store(_db(tmp_path, days)) as store:
            answer = impact(store, "rolling", partition={"day": "2024-10-02"})
            assert [run.run.job_name for run in answer.runs] == ["report"]
            assert answer.runs[0].label == "possible", "the score decides"
            counts.append(store.reads.conditions)
    assert counts[0] == counts[1], counts


def test_partitions_are_found_by_key_whether_neighbours_or_far_apart(tmp_path: Path) -> None:
    """``partitions_keyed`` reads a range of the key when the partitions asked for are
    neighbours, and searches each otherwise: either way exactly the known ones among them
    (with their identifiers and ids), whatever else the dataset holds."""
    import sqlite3

    from openlineage_subset.lineage.engine._narrowing import partitions_keyed
    from openlineage_subset.lineage.model._conditions import canonical_unit

    db = sqlite3.connect(_db(tmp_path, 8))
    ((dataset_id,),) = db.execute("SELECT dataset_id FROM datasets WHERE name LIKE '%/raw'")
    stored = {
        text: (identifier, partition_id)
        for text, identifier, partition_id in db.execute(
            "SELECT dimensions, identifier, partition_id FROM partitions WHERE dataset_id = ?",
            (dataset_id,),
        )
    }
    keys = sorted(stored)
    unknown = canonical_unit((("country", "XX"), ("day", "2024-10-04")))
    lone = canonical_unit((("country", "\ud800"), ("day", "2024-10-04")))
    for wanted in (
        keys[3:6],  # neighbours: a day's countries
        [keys[0], keys[-1]],  # far apart: more between them than asked for
        [*keys[3:6], unknown],  # one of them not known
        [keys[0], lone],  # a lone surrogate, which only JSON takes to SQLite
        keys,
    ):
        found = partitions_keyed(db, dataset_id, wanted)
        expected = sorted((key, *stored[key]) for key in wanted if key in stored)
        assert sorted(found) == expected, wanted


def test_a_partitions_readers_and_writers_cost_the_same_however_long_the_history(
    tmp_path: Path,
) -> None:
    """What SQLite steps through (its virtual machine's steps, not the time) to answer the
    impact of a day of ``clean``, read by ``rolling`` as 3-day windows (ranges of dates, no
    list), and the provenance of a day of ``rolling``, which a failed run says it wrote whole
    each day, is the same at 70 and at 140 days: the windows of other days (``access_ranges``)
    and the writes of failed runs (``writes_done``) are left unread, not checked one by one."""
    steps: dict[str, list[int]] = {"impact": [], "provenance": []}
    for days in (70, 140):  # more partitions than the few a query samples (64)
        with _store(_db(tmp_path, days, failing=True)) as store:
            questions = {
                "impact": lambda: impact(store, "clean", partition={"day": "2024-10-02"}),
                "provenance": lambda: provenance(
                    store, "rolling", partition={"day": "2024-10-02"}, depth=1
                ),
            }
            answers = {}
            for name, question in questions.items():
                count, answers[name] = sqlite_steps(store.connection, question)
                steps[name].append(count)
            windows = [run.run for run in answers["impact"].runs if run.run.job_name == "rolling"]
            assert len(windows) == 3, "the windows of days 2, 3 and 4 read day 2"
            (writer,) = answers["provenance"].writers
            assert writer.run.status == "COMPLETE"
    assert steps["impact"][0] == steps["impact"][1], steps
    assert steps["provenance"][0] == steps["provenance"][1], steps


@contextlib.contextmanager
def _timelines() -> Iterator[list[Timeline]]:
    """The timelines the queries asked meanwhile walk with (what each loaded)."""
    timelines: list[Timeline] = []
    made = Timeline.__init__

    def kept(self: Timeline, *arguments: Any) -> None:
        made(self, *arguments)
        timelines.append(self)

    Timeline.__init__ = kept  # type: ignore[method-assign]
    try:
        yield timelines
    finally:
        Timeline.__init__ = made  # type: ignore[method-assign]


def test_an_answer_loads_at_most_the_reads_and_writes_its_caller_allows(tmp_path: Path) -> None:
    """``Lineage(db, most_accesses=N)``: an answer that loads exactly N reads and writes is
    the unbounded one; one that would load N + 1 raises AnswerTooLarge instead, saying how to
    ask; the impact of the whole of ``raw`` loads most (what its readers wrote is read too)."""
    db = _db(tmp_path, 20)
    questions: dict[str, Callable[[Lineage], Any]] = {
        "impact": lambda lineage: lineage.impact(ImpactQuery("raw")),
        "provenance": lambda lineage: lineage.provenance(ProvenanceQuery("rolling")),
        "history": lambda lineage: lineage.history(HistoryQuery("clean")),
        "partitions": lambda lineage: lineage.partitions(PartitionsQuery("clean")),
    }
    loads = {}
    for name, question in questions.items():
        with Lineage(db) as lineage, _timelines() as timelines:
            expected = question(lineage).as_json()
        loads[name] = most = timelines[-1].loaded
        with Lineage(db, most_accesses=most) as lineage:
            assert question(lineage).as_json() == expected, name
        bounded = Lineage(db, most_accesses=most - 1)
        with bounded, pytest.raises(AnswerTooLarge, match=f"more than {most - 1:,} times"):
            question(bounded)
    assert loads["impact"] > 3 * 20, loads


def test_a_read_loaded_again_by_a_later_step_is_counted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``most_accesses`` bounds is loading, the work: the whole impact of ``raw`` loads
    some reads and writes more than once (a later step asks again of a dataset an earlier one
    reached), and each time counts, as the 422 says ("loads reads and writes of runs more than N
    times"), not each read once."""
    db = _db(tmp_path, 20)
    loads: list[tuple[str, int, Side]] = []

    def loaded(run: RunRef, dataset_id: int, direction: Side, *rest: Any) -> Access:
        loads.append((run.run_id, dataset_id, direction))
        return Access(run, dataset_id, direction, *rest)

    monkeypatch.setattr(_timeline, "Access", loaded)
    with Lineage(db) as lineage, _timelines() as timelines:
        lineage.impact(ImpactQuery("raw"))
    assert timelines[-1].loaded == len(loads) > len(set(loads)), (len(loads), len(set(loads)))


def test_an_answer_past_its_limit_stops_as_early_at_any_length_of_history(
    tmp_path: Path,
) -> None:
    """The impact of the whole of ``clean`` with a limit of 10 reads and writes: a 422 after
    as many SQLite steps at 70 as at 140 days (a dataset's reads come in the order of their
    index, not from a sort of all of them, which would read every one before the first)."""
    steps = []
    for days in (70, 140):
        db = _db(tmp_path, days)
        with Lineage(db, most_accesses=10) as lineage:
            calls: list[int] = []
            lineage.store.connection.set_progress_handler(functools.partial(calls.append, 1), 1)
            with pytest.raises(AnswerTooLarge, match="runs more than 10 times"):
                lineage.impact(ImpactQuery("clean"))
            lineage.store.connection.set_progress_handler(None, 1)
            steps.append(len(calls))
    assert steps[0] == steps[1], steps


def _from_every_read(store: LineageStore, since: str) -> Any:
    """The impact of the whole of ``clean`` from ``since``, each dataset's reads all read
    before those after a time are taken from them."""
    after = Timeline.readers_after

    def every_read_first(self: Timeline, dataset_id: int, *arguments: Any) -> Any:
        self.accesses(dataset_id, Side.INPUT)
        return after(self, dataset_id, *arguments)

    Timeline.readers_after = every_read_first  # type: ignore[method-assign]
    try:
        return impact(store, "clean", since=since)
    finally:
        Timeline.readers_after = after  # type: ignore[method-assign]


def test_an_impact_from_a_recent_time_costs_the_reads_since_then_not_the_history(
    tmp_path: Path,
) -> None:
    """The impact of the whole of ``clean`` from the start of its last 12 reads: at 70 and at
    140 days, SQLite steps through as much (the index of accesses by start time: the reads
    before are unread), and the answer loads as many reads and writes; it is the answer
    found by reading every read of each dataset it reaches first."""
    steps, loaded = [], []
    for days in (70, 140):
        with _store(_db(tmp_path, days)) as store:
            starts = [
                row[0]
                for row in store.connection.execute(
                    "SELECT r.started_at FROM accesses a JOIN runs r USING (run_id) "
                    "JOIN datasets d USING (dataset_id) WHERE d.name LIKE '%/clean' "
                    "AND a.direction = 'input' ORDER BY r.started_at"
                )
            ]
            since = starts[-12]
            with _timelines() as timelines:
                count, answer = sqlite_steps(
                    store.connection, functools.partial(impact, store, "clean", since=since)
                )
            steps.append(count)
            loaded.append(timelines[-1].loaded)
            first = {run.run.run_id for run in answer.runs if run.hops == 1}
            assert len(first) == 12, "its last 12 readers"
            assert answer.as_json() == _from_every_read(store, since).as_json()
    assert steps[0] == steps[1], steps
    assert loaded[0] == loaded[1], loaded


@contextlib.contextmanager
def _overlaps() -> Iterator[list[tuple[Any, ...]]]:
    """The writes and partitions evaluated meanwhile (``write_overlap``'s arguments)."""
    calls: list[tuple[Any, ...]] = []
    overlap = Evaluation.write_overlap

    def counted(self: Evaluation, *arguments: Any) -> Any:
        calls.append(arguments)
        return overlap(self, *arguments)

    Evaluation.write_overlap = counted  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        Evaluation.write_overlap = overlap  # type: ignore[method-assign]


def _failing_writes(tmp_path: Path, days: int) -> str:
    """The pipeline, and each day a failed ``compact`` of that day's partition of ``clean``
    after the day's completed writers (a partition list), and an aborted one of the whole of
    it at two thirds of the history."""
    events = pipeline_history(days, failed_day=3)
    first = dt.date(2024, 10, 1)
    for number in range(days):
        date = (first + dt.timedelta(days=number)).isoformat()
        start = 2 * 5 * (number + 1) - 0.5  # the day's five runs take 2 minutes each
        events += run(
            7_000 + number, start, start + 0.2, writes=[("clean", day(date))], status="FAIL"
        )
    middle = 2 * 5 * (2 * days // 3)
    events += run(9_000, middle, middle + 0.2, writes=[("clean", None)], status="ABORT")
    source = write_events(tmp_path / f"failing{days}.jsonl", events)
    db = str(tmp_path / f"failing{days}.db")
    assert ingest([source], db).invalid == 0
    return db


def test_the_failed_writes_of_a_partition_are_found_by_the_partitions_they_list(
    tmp_path: Path,
) -> None:
    """A dataset page marks each partition a failed run may have written since its last
    writer: the failed writes that list partitions are found by the partitions they list
    (the index), not each evaluated against every partition. The marks are those of
    evaluating each failed write, the latest first; and the writes evaluated for the first
    five partitions are as many at 70 as at 140 days (the aborted write of the whole dataset,
    at two thirds of each, alone)."""
    evaluated = []
    for days in (70, 140):
        db = _failing_writes(tmp_path, days)
        clean = DatasetRef("file", f"{LAKE}/clean")
        states = dataset_partitions(db, "clean").partitions
        marked = failed_writes(db, clean, states)
        late = {unit for unit, run in marked.items() if run.status == "FAIL"}
        assert len(late) > days // 4 and len(marked) == len(states), "some by their own run"
        listing = Timeline.failed_listing
        Timeline.failed_listing = lambda *_: (set(), {})  # type: ignore[method-assign,assignment]
        try:
            assert failed_writes(db, clean, states) == marked
        finally:
            Timeline.failed_listing = listing  # type: ignore[method-assign]
        with _overlaps() as calls:
            failed_writes(db, clean, states[:5])
        evaluated.append(len(calls))
    assert evaluated[0] == evaluated[1] <= 5, evaluated


def _dated_folders(days: int, root: str = f"{LAKE}/landing") -> list[Any]:
    """A run a day that reads the day's folder of ``landing`` (``2024/10/01``: paths that name
    no column, read as partitions by date when under the dataset's ``root``; else a location)
    and writes that day of ``raw``."""
    first = dt.date(2024, 10, 1)
    events = []
    for number in range(days):
        when = first + dt.timedelta(days=number)
        folder = {"type": "location", "locations": [f"{root}/{when:%Y/%m/%d}"]}
        events += run(
            number + 1,
            number,
            number + 0.5,
            reads=[("landing", folder)],
            writes=[("raw", day(when.isoformat()))],
            job="load",
        )
    return events


@pytest.mark.parametrize("root", [f"{LAKE}/landing", "/data/drop/landing"])
def test_the_order_of_columns_of_partitions_from_paths_does_not_read_every_condition(
    tmp_path: Path, root: str
) -> None:
    """A dataset whose partitions came from folders that name no column (``2024/10/01``) has
    no condition that names a location once they are partitions; one read by folders
    elsewhere (the benchmark's ``landing/events``: the day's folder of another bucket) has
    locations only, no partition, and each read decided by its places. Either way its column
    order is found without reading every condition (SQLite's steps for a provenance through
    it: equal at 70 and 140 days; 1,761 and 2,111 on layout 10 for the second)."""
    steps = []
    for days in (70, 140):
        db = tmp_path / f"folders{days}.db"
        events = _dated_folders(days, root)
        ingest([write_events(tmp_path / f"folders{days}.jsonl", events)], db)
        with _store(str(db)) as store:
            count, answer = sqlite_steps(
                store.connection, lambda: provenance(store, "raw", partition={"day": "2024-10-05"})
            )
            steps.append(count)
            (writer,) = answer.writers
            read = writer.inputs[0].partitions.as_json()
            assert bool(read["definite"]) == root.startswith(LAKE), "read as partitions"
    assert steps[0] == steps[1], steps


def test_the_list_of_datasets_and_the_incidents_cost_the_same_however_long_the_history(
    tmp_path: Path,
) -> None:
    """The front page's questions (every dataset with its counts and last write; the failed
    runs, counted, the latest listed) step through as much at 70 as at 140 days of one failed
    run: the counts are kept at ingest, the last write and the failed runs found by their
    indexes (layout 12: 279 steps and 420 at either size; on layout 11 the listing read every
    access, the incidents every run: 10,374 and 20,384 steps, 3,746 and 6,546)."""
    steps: dict[str, list[int]] = {"datasets": [], "incidents": []}
    for days in (70, 140):
        db = _db(tmp_path, days)
        with _store(db) as store:
            for name, question in (
                ("datasets", lambda: datasets_answer(store)),
                ("incidents", lambda: incidents_answer(store, limit=3)),
            ):
                count, answer = sqlite_steps(store.connection, question)
                steps[name].append(count)
                if name == "datasets":
                    counted = {item.dataset.name: item.reads for item in answer.datasets}
                    assert counted[f"{LAKE}/clean"] == 2 * days, "read by compact and rolling"
                else:
                    assert answer.failed_total == 1, "rolling, on day 3"
                    assert answer.runs[0].run.job_name == "rolling"
    assert steps["datasets"][0] == steps["datasets"][1], steps
    assert steps["incidents"][0] == steps["incidents"][1], steps


def test_a_datasets_page_costs_the_same_however_long_the_history(tmp_path: Path) -> None:
    """A dataset page's questions but its grid (its latest runs and how many in all, its
    facets, its latest writer, the failed writes since) step through as much at 70 as at 140
    days: each found by an index of accesses by their runs' times (layout 12), where each read
    every access of the dataset, sorted (on layout 11: 7,169 and 13,329 steps for the latest
    runs, 11,164 and 21,244 for the facets, 3,027 and 5,967, 1,991 and 3,951)."""
    steps: dict[str, list[int]] = {}
    for days in (70, 140):
        with _store(_db(tmp_path, days)) as store:
            query = PartitionsQuery(f"{LAKE}/clean", "file")
            page = PagePartitions(store, query)
            questions: dict[str, Callable[[], Any]] = {
                "latest runs": functools.partial(latest_history, store, query, 5),
                "facets": functools.partial(
                    dataset_facets, store, DatasetRef("file", f"{LAKE}/clean")
                ),
                "latest writer": page.latest_writer,
                "failed writes": functools.partial(
                    page.engine.timeline.failed_writes, page.dataset_id, FAILED_EVENT_TYPES
                ),
            }
            for name, question in questions.items():
                count, answer = sqlite_steps(store.connection, question)
                steps.setdefault(name, []).append(count)
                if name == "latest runs":
                    assert answer[1] == 2 * days + 2 * days, "read and written twice a day"
    for name, counts in steps.items():
        assert counts[0] == counts[1], (name, steps)


def _unwritten_db(tmp_path: Path, days: int) -> str:
    """The pipeline, with a read of ``raw`` from its third day on (a range), one of the whole
    of ``raw``, and a completed write of the whole of ``clean`` before the days: the accesses
    that may touch a partition no run listed."""
    events = pipeline_history(days, failed_day=3)
    events += run(700, -4, -3, writes=[("clean", None)], job="seed")
    events += run(701, 9000, 9001, reads=[("raw", compare("day", "GREATER_EQUAL_THAN", THIRD))])
    events += run(702, 9002, 9003, reads=[("raw", None)])
    source = write_events(tmp_path / f"unwritten{days}.jsonl", events)
    db = str(tmp_path / f"unwritten{days}.db")
    assert ingest([source], db).invalid == 0
    return db


THIRD = "2024-10-03"
UNWRITTEN: dict[str, Callable[[Lineage], Any]] = {
    "impact of a mistyped country": lambda lineage: lineage.impact(
        ImpactQuery("raw", {"day": "2024-10-04", "country": "XX"})
    ),
    "impact of a day not written yet": lambda lineage: lineage.impact(
        ImpactQuery("raw", {"day": "2024-12-31"})
    ),
    "history of a mistyped country": lambda lineage: lineage.history(
        HistoryQuery("raw", {"day": "2024-10-04", "country": "XX"})
    ),
    "provenance of a day not written yet": lambda lineage: lineage.provenance(
        ProvenanceQuery("clean", {"day": "2030-01-01"})
    ),
    "impact of a day of clean not written yet (no run: is it seen?)": lambda lineage: (
        lineage.impact(ImpactQuery("clean", {"day": "2030-01-01"}))
    ),
    "impact of a known partition": lambda lineage: lineage.impact(
        ImpactQuery("raw", {"day": "2024-10-04", "country": "FR"})
    ),
}


def test_a_partition_no_run_listed_is_answered_as_by_reading_every_access(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partition of a plainly shaped dataset that no run listed (mistyped, not written yet):
    the reads and writes that only list partitions list known ones only, so the indexes leave
    them out; the answers are those of evaluating every read and write."""
    db = _unwritten_db(tmp_path, 8)
    with Lineage(db) as lineage:
        fast = {name: question(lineage).as_json() for name, question in UNWRITTEN.items()}
    monkeypatch.setattr(Timeline, "indexed", lambda *arguments: False)
    with Lineage(db) as lineage:
        slow = {name: question(lineage).as_json() for name, question in UNWRITTEN.items()}
    assert fast == slow
    assert len(fast["impact of a mistyped country"]["runs"]) == 2, "the range and the whole"
    assert len(fast["impact of a day not written yet"]["runs"]) == 2
    assert len(fast["history of a mistyped country"]["entries"]) == 2
    assert not fast["impact of a day of clean not written yet (no run: is it seen?)"]["runs"]
    (writer,) = fast["provenance of a day not written yet"]["writers"]
    assert writer["job"]["name"] == "seed"


def test_a_partition_no_run_listed_costs_the_same_however_long_the_history(
    tmp_path: Path,
) -> None:
    """What the questions about partitions no run listed load (reads and writes of runs) is
    the same at 8 and at 24 days: not every read of ``raw`` or write of ``clean``."""
    loads: list[dict[str, int]] = []
    for days in (8, 24):
        db = _unwritten_db(tmp_path, days)
        found = {}
        for name, question in UNWRITTEN.items():
            with Lineage(db) as lineage, _timelines() as timelines:
                question(lineage)
            found[name] = sum(timeline.loaded for timeline in timelines)
        loads.append(found)
    assert loads[0] == loads[1], loads
