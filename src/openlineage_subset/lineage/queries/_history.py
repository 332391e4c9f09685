"""History: the runs that touched a dataset or partition; each known partition's state; and
the partitions a failed run may have left half written since their last completed write."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from openlineage_subset.lineage.engine import Access, Engine, read_label, region
from openlineage_subset.lineage.model import (
    DatasetRef,
    Dimensions,
    HistoryEntry,
    HistoryReport,
    Label,
    PartitionRef,
    PartitionsReport,
    PartitionState,
    RunRef,
    Side,
    sort_key,
)
from openlineage_subset.lineage.queries._questions import HistoryQuery, PartitionsQuery
from openlineage_subset.lineage.store import (
    Database,
    LineageStore,
    opened,
    pruned_before,
    pruned_note,
)
from openlineage_subset.producer import FAILED_EVENT_TYPES

"""Run states whose writes may have left a partition half written."""


def history(
    db: Database,
    dataset: str,
    *,
    partition: Mapping[str, str | None] | None = None,
    namespace: str | None = None,
) -> HistoryReport:
    """The runs that read or wrote a dataset (or may have touched ``partition`` of it), in
    the order they started, each with its condition and how sure the overlap is. Raises as
    :func:`~openlineage_subset.lineage.impact` raises."""
    query = HistoryQuery(dataset, partition, namespace)
    with opened(db) as store:
        return history_answer(store, query)


def history_answer(
    store: LineageStore, query: HistoryQuery, *, most_accesses: int | None = None
) -> HistoryReport:
    """The answer to ``query`` from the open ``store``: :func:`history`'s.
    ``most_accesses``: the most reads and writes of runs it may load (None: any); one more
    raises :class:`~openlineage_subset.lineage.AnswerTooLarge`."""
    engine = Engine(store, most_accesses=most_accesses)
    values = query.partition
    dataset_id = engine.resolve(query.dataset, query.namespace)
    engine.check_columns(dataset_id, values)
    units = region(engine, dataset_id, values)
    target = engine.partitions(dataset_id).partition_set(dict.fromkeys(units, "definite"))
    entries = []
    for side in Side:
        # Those that may touch the partitions asked about (all of them, for the whole dataset).
        for access in engine.touching(dataset_id, side, [] if values is None else units):
            label: Label | None = "definite"
            if values is not None:
                label, _ = read_label(engine, access, tuple((u, "definite") for u in units))
            if label is not None:
                entries.append(HistoryEntry(access.run, side.verb, engine.rendered(access), label))
    entries.sort(key=lambda e: (e.run.started_at, e.run.run_id, e.direction))
    # An entry is a read or write that may overlap the part asked about: none, nothing did.
    pruned = pruned_before(engine.db)
    notes = () if pruned is None else (pruned_note(pruned),)
    return HistoryReport(target, tuple(entries), bool(entries), notes)


def dataset_partitions(
    db: Database,
    dataset: str,
    *,
    namespace: str | None = None,
) -> PartitionsReport:
    """Each known partition of a dataset: its last writer (the latest completed run whose
    write may cover it) and how many runs read it (definitely or possibly) since then.

    Each write and each read is evaluated once, on the partitions it may select (those it
    lists, those within its date ranges), not once per partition: a dataset of years of days
    by tens of countries has tens of thousands of partitions and as many writes and reads."""
    query = PartitionsQuery(dataset, namespace)
    with opened(db) as store:
        return partitions_answer(store, query)


def partitions_answer(
    store: LineageStore, query: PartitionsQuery, *, most_accesses: int | None = None
) -> PartitionsReport:
    """The answer to ``query`` from the open ``store``: :func:`dataset_partitions`'s.
    ``most_accesses``: the most reads and writes of runs it may load (None: any); one more
    raises :class:`~openlineage_subset.lineage.AnswerTooLarge`."""
    engine = Engine(store, most_accesses=most_accesses)
    dataset_id = engine.resolve(query.dataset, query.namespace)
    writes = engine.writers_of(dataset_id, [], None)  # completed, the latest first
    return states_report(engine, dataset_id, writes, engine.accesses(dataset_id, Side.INPUT))


def states_report(
    engine: Engine, dataset_id: int, writes: Iterable[Access], reads: Iterable[Access]
) -> PartitionsReport:
    """The state of each partition the catalog of ``engine`` knows of the dataset, from its
    completed ``writes`` (the latest first) and its ``reads`` (in the order they started):
    all of them, or at least those that may select one of the known partitions."""
    found = engine.partitions(dataset_id).dataset()
    known = engine.partitions(dataset_id).known()
    writers = _last_writers(engine, writes, known)
    readers: dict[Dimensions, set[str]] = {}
    for read in reads:
        for unit, _ in _may_select(engine, read, known):
            writer = writers.get(unit)
            if writer is None or read.run.started_at > (writer[0].run.ended_at or ""):
                readers.setdefault(unit, set()).add(read.run.run_id)
    states = []
    for unit in sorted(
        known, key=lambda unit: sort_key(engine.partitions(dataset_id).in_order(unit))
    ):
        writer = writers.get(unit)
        label: Label | None = None
        if writer is not None:
            label = "definite" if writer[1] else "possible"
        states.append(
            PartitionState(
                PartitionRef(engine.partitions(dataset_id).in_order(unit), known[unit]),
                None if writer is None else writer[0].run,
                label,
                len(readers.get(unit, ())),
            )
        )
    if states:
        return PartitionsReport(found, tuple(states))
    # No partition: say how it is written (whole, a dbt model's way, or by conditions that
    # name no partition), not only that none is known.
    writes = engine.accesses(dataset_id, Side.OUTPUT)
    whole = sum(access.text is None for access in writes)
    return PartitionsReport(found, (), len(writes), whole)


def failed_writes(
    db: Database,
    dataset: DatasetRef,
    states: Sequence[PartitionState],
) -> dict[Dimensions, RunRef]:
    """For each partition of ``states`` that a failed (or aborted) run may have written after
    the partition's last completed writer started: the latest such run."""
    with opened(db) as store:
        return failed_answer(store, dataset, states)


def failed_answer(
    store: LineageStore, dataset: DatasetRef, states: Sequence[PartitionState]
) -> dict[Dimensions, RunRef]:
    """:func:`failed_writes`'s answer from the open ``store``."""
    engine = Engine(store)
    dataset_id = engine.resolve(dataset.name, dataset.namespace)
    failed = engine.timeline.failed_writes(dataset_id, FAILED_EVENT_TYPES)[::-1]  # the latest first
    found: dict[Dimensions, RunRef] = {}
    if not failed:
        return found
    units = [tuple(sorted(state.partition.dimensions)) for state in states]
    # The failed writes that only list partitions, and which of the units each lists (found
    # by the index of listed partitions): the others are evaluated, the latest first.
    listed, listing = engine.timeline.failed_listing(dataset_id, units)
    position = {write.run.run_id: index for index, write in enumerate(failed)}
    others = [
        (index, write) for index, write in enumerate(failed) if write.run.run_id not in listed
    ]
    for state, unit in zip(states, units, strict=True):
        since = "" if state.writer is None else state.writer.started_at
        # the first of ``failed`` (the latest) started after ``since`` that may write the unit
        best = min(
            (
                position[run_id]
                for run_id in listing.get(unit, ())
                if run_id in position and failed[position[run_id]].run.started_at > since
            ),
            default=len(failed),
        )
        for index, write in others:
            if index > best or write.run.started_at <= since:
                break
            if engine.write_overlap(write, unit) is not False:
                best = index
                break
        if best < len(failed):
            found[unit] = failed[best].run
    return found


def _last_writers(
    engine: Engine, writes: Iterable[Access], known: Mapping[Dimensions, str | None]
) -> dict[Dimensions, tuple[Access, bool]]:
    """The latest completed write that may cover each known partition, and whether it surely
    does: the writes from the latest, each giving the partitions it may select that no later
    one gave."""
    found: dict[Dimensions, tuple[Access, bool]] = {}
    for write in writes:
        if len(found) == len(known):
            break
        for unit, surely in _may_select(engine, write, known):
            if unit not in found:
                found[unit] = (write, bool(surely))
    return found


def _may_select(
    engine: Engine, access: Access, known: Mapping[Dimensions, str | None]
) -> Iterable[tuple[Dimensions, bool | None]]:
    """The known partitions ``access`` may select (its overlap not False), with the overlap."""
    if access.text is None:
        return ((unit, True) for unit in known)  # the whole dataset
    return engine.selected(access, by_dates=True)
