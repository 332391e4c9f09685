"""Impact: what depends on a dataset or partition, the runs affected and what to recompute."""

from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
from collections.abc import Mapping

from openlineage_subset.lineage.engine import Access, Engine, read_label, region
from openlineage_subset.lineage.model import (
    AffectedRun,
    ImpactReport,
    Label,
    PartitionSet,
    Unit,
    Values,
    excludes_location,
    stronger,
)
from openlineage_subset.lineage.queries._questions import ImpactQuery
from openlineage_subset.lineage.queries._task_runs import task_reruns
from openlineage_subset.lineage.store import (
    Database,
    LineageStore,
    kept_apart_notes,
    opened,
    pruned_before,
    pruned_note,
)


def impact(
    db: Database,
    dataset: str,
    *,
    partition: Mapping[str, str | None] | None = None,
    since: str | _dt.datetime | None = None,
    depth: int | None = None,
    namespace: str | None = None,
    location: str | None = None,
) -> ImpactReport:
    """What depends on a dataset (or one partition of it): the runs affected, and what to redo.

    The starting region is ``partition`` of ``dataset`` (or the whole dataset), as present from
    ``since`` on (from the first recorded run without it). A run that started then or later and
    read an overlapping part is affected: *definite* when its read condition selects the region
    as far as partition values decide, *possible* when that depends on other columns. What an
    affected run that completed wrote is affected from its completion on, and so on, ``depth``
    run hops at most. ``dataset`` is a dataset name or the end of one after a ``/``;
    ``namespace`` tells apart datasets of one name. ``location``: a file or directory of the
    dataset (a bad file that landed in a stream's source, say): of its readers, only those
    whose conditions may include it are affected (a run that lists other files is not).
    Raises :class:`LineageQueryError` for an unknown or ambiguous dataset
    (:class:`UnknownPartitionColumnError` for a partition column the dataset never had),
    :class:`LineageDatabaseError` for a database it cannot read. A partition no recorded run
    read or wrote is answered with ``seen`` False.

    The example in docs/lineage.md runs a three-step pipeline end to end.
    """
    query = ImpactQuery(dataset, partition, since, depth, namespace, location)
    with opened(db) as store:
        return impact_answer(store, query)


def impact_answer(
    store: LineageStore, query: ImpactQuery, *, most_accesses: int | None = None
) -> ImpactReport:
    """The answer to ``query`` from the open ``store``: :func:`impact`'s, checked already.
    ``most_accesses``: the most reads and writes of runs it may load (None: any); one more
    raises :class:`~openlineage_subset.lineage.AnswerTooLarge`."""
    engine = Engine(store, most_accesses=most_accesses)
    start_id = engine.resolve(query.dataset, query.namespace)
    engine.check_columns(start_id, query.partition)
    start_units = region(engine, start_id, query.partition)
    start = engine.partitions(start_id).partition_set(dict.fromkeys(start_units, "definite"))
    since = query.since
    assert not isinstance(since, _dt.datetime)  # made a stored time when the query was made
    runs, backfill, written = _affected(
        engine, start_id, start_units, since, query.depth, query.location
    )
    seen = bool(runs) or engine.seen(start_id, start_units)
    notes = tuple(kept_apart_notes(store.connection, [start_id]))
    pruned = pruned_before(store.connection)
    if pruned is not None and (since is None or since < pruned):
        notes += (pruned_note(pruned),)  # a reader before then may be gone
    tasks = task_reruns(store.connection, runs, written, engine.partitions)
    return ImpactReport(
        start,
        since,
        query.depth,
        runs,
        backfill,
        seen,
        notes=notes,
        tasks=tasks,
        location=query.location,
    )


@dataclasses.dataclass(frozen=True)
class _Reached:
    """Part of a dataset affected from a time on: what a work item of impact() follows."""

    dataset_id: int
    units: tuple[tuple[Unit, Label], ...]
    after: str | None
    inclusive: bool
    hops: int
    upstream: str | None


def _affected(
    engine: Engine,
    start_id: int,
    start_units: list[Unit],
    start_time: str | None,
    limit: int | None,
    location: str | None = None,
) -> tuple[
    tuple[AffectedRun, ...], tuple[PartitionSet, ...], dict[str, dict[int, dict[Unit, Label]]]
]:
    """The affected runs, the plan per dataset, and what each run wrote of the plan."""
    queue = collections.deque(
        [_Reached(start_id, tuple((u, "definite") for u in start_units), start_time, True, 1, None)]
    )
    found: dict[str, AffectedRun] = {}
    written: dict[str, dict[int, dict[Unit, Label]]] = {}
    while queue:
        reached = queue.popleft()
        if limit is not None and reached.hops > limit:
            continue
        place = location if reached.upstream is None else None
        known, reads = _reads_of(engine, reached, place)
        for read in reads:
            if _elsewhere(read, place):
                continue  # it read other files of the dataset, not the one asked about
            label, matched = read_label(engine, read, reached.units, known)
            if label is None:
                continue
            run_id = read.run.run_id
            previous = found.get(run_id)
            again = previous is not None and stronger(previous.label, label) == previous.label
            if again and not engine.states_mappings(run_id):
                continue  # seen already with this label or a stronger one: once per label
            if not again:
                found[run_id] = AffectedRun(
                    read.run,
                    label,
                    reached.hops,
                    engine.partitions(read.dataset_id).dataset(),
                    None
                    if None in matched
                    else engine.partitions(read.dataset_id).partition_refs(matched),
                    engine.rendered(read),
                    reached.upstream,
                    previous.mapped_by if previous is not None else (),
                )
            if read.run.status != "COMPLETE" or read.run.ended_at is None:
                continue  # nothing it wrote is known to be there
            queue.extend(_followed(engine, read, label, matched, reached.hops, found, written))
    backfill: dict[int, dict[Unit, Label]] = {}
    for parts in written.values():
        for dataset_id, units in parts.items():
            whole_plan = backfill.setdefault(dataset_id, {})
            for unit, unit_label in units.items():
                whole_plan[unit] = stronger(whole_plan.get(unit), unit_label) or unit_label
    runs = tuple(sorted(found.values(), key=lambda item: (item.run.started_at, item.run.run_id)))
    plan = tuple(
        sorted(
            (
                engine.partitions(dataset_id).partition_set(parts)
                for dataset_id, parts in backfill.items()
            ),
            key=lambda item: (item.dataset.namespace, item.dataset.name),
        )
    )
    return runs, plan, written


def _reads_of(
    engine: Engine, reached: _Reached, place: str | None
) -> tuple[dict[Unit, Values], list[Access]]:
    """The reads of what was reached, after it was there: those the indexes find where its
    units are :meth:`~openlineage_subset.lineage.engine.Timeline.indexed` (and the values of
    its known partitions), else all (those that may have read ``place``, when one is asked
    about)."""
    engine.partitions(reached.dataset_id).look_up((unit for unit, _ in reached.units))
    known: dict[Unit, Values] = {
        unit: tuple(value for _, value in unit)
        for unit, _ in reached.units
        if unit is not None and engine.partitions(reached.dataset_id).identifier(unit) is not None
    }
    if engine.partitions(reached.dataset_id).plain_shape() is None:
        known = {}
    units = [unit for unit, _ in reached.units]
    if engine.indexed(reached.dataset_id, units):  # known partitions, or ones holding none
        return known, engine.readers_of(reached.dataset_id, units, reached.after, reached.inclusive)
    if place is not None:
        return known, engine.readers_at(reached.dataset_id, place, reached.after, reached.inclusive)
    return known, engine.readers_after(reached.dataset_id, reached.after, reached.inclusive)


def _elsewhere(read: Access, location: str | None) -> bool:
    """Whether ``read`` is known to have read nothing at ``location`` (None: asked of none)."""
    return (
        location is not None
        and read.text is not None
        and excludes_location(read.condition, location)
    )


def _followed(
    engine: Engine,
    read: Access,
    label: Label,
    matched: list[Unit],
    hops: int,
    found: dict[str, AffectedRun],
    written: dict[str, dict[int, dict[Unit, Label]]],
) -> list[_Reached]:
    """What an affected run wrote that its read reaches and was not followed yet with a label
    as strong: all it wrote, or the partitions its writes' mappings take the read ones to.
    Noted in ``written`` (and the mapping columns in its ``found`` entry); to follow next."""
    run_id = read.run.run_id
    following = []
    for write in engine.outputs(read.run):
        units, mapped_by = engine.narrowed(
            run_id, write.dataset_id, read.dataset_id, matched, engine.written(write, label)
        )
        if mapped_by:
            known = found[run_id]
            mapped = tuple(sorted({*known.mapped_by, *mapped_by}))
            found[run_id] = dataclasses.replace(known, mapped_by=mapped)
        own = written.setdefault(run_id, {}).setdefault(write.dataset_id, {})
        new = [(u, ul) for u, ul in units if stronger(own.get(u), ul) != own.get(u)]
        if not new:
            continue
        for unit, unit_label in new:
            own[unit] = stronger(own.get(unit), unit_label) or unit_label
        assert read.run.ended_at is not None  # followed only when it completed
        following.append(
            _Reached(write.dataset_id, tuple(new), read.run.ended_at, False, hops + 1, run_id)
        )
    return following
