"""What an on-call engineer came for: the latest failed runs, and the partitions whose last
write failed (a failed or aborted run may have written them, and no completed run has
rewritten them since), the newest first.

A partition counts when the failed write may have touched it (its condition selects it or
possibly does) and no completed write that started later surely covers it: what is not known
stays as the other answers leave it, "possible", never dropped.
"""

from __future__ import annotations

import dataclasses

from openlineage_subset.lineage.engine import Access, Engine
from openlineage_subset.lineage.model import DatasetRef, Label, PartitionRef, RunRef, Unit
from openlineage_subset.lineage.store import Database, LineageStore, opened
from openlineage_subset.producer import FAILED_EVENT_TYPES

MAX_RUNS = 10
"""Failed runs an incidents answer looks at: the latest."""
MAX_PARTITIONS = 40
"""Partitions an incidents answer lists at most (the newest failures first)."""


@dataclasses.dataclass(frozen=True)
class FailedWrite:
    """What a failed run may have left half written of one dataset: the partitions no
    completed run rewrote since (``whole``: the whole dataset, a write without partitions)."""

    dataset: DatasetRef
    whole: bool
    partitions: tuple[tuple[PartitionRef, Label], ...]
    """Each with how sure it is that the failed run wrote it."""
    more: bool = False
    """More partitions than :data:`MAX_PARTITIONS` were left: the first ones are listed."""


@dataclasses.dataclass(frozen=True)
class FailedRun:
    run: RunRef
    writes: tuple[FailedWrite, ...]
    """Only the writes that are still the partitions' last (empty: all rewritten since)."""


@dataclasses.dataclass(frozen=True)
class Incidents:
    """The latest failed runs (newest first), each with what it left as the last write."""

    runs: tuple[FailedRun, ...]
    failed_total: int
    """Failed runs in the database (``runs`` holds the latest :data:`MAX_RUNS`)."""

    @property
    def partitions(self) -> list[tuple[PartitionRef | None, DatasetRef, RunRef, Label]]:
        """Every (partition, dataset, failed run, label) of :attr:`runs`, newest run first,
        at most :data:`MAX_PARTITIONS`; a None partition: the whole dataset."""
        found: list[tuple[PartitionRef | None, DatasetRef, RunRef, Label]] = []
        for item in self.runs:
            for write in item.writes:
                if write.whole:
                    found.append((None, write.dataset, item.run, "definite"))
                found += ((ref, write.dataset, item.run, label) for ref, label in write.partitions)
        return found[:MAX_PARTITIONS]


def incidents(db: Database, *, limit: int = MAX_RUNS) -> Incidents:
    """The latest ``limit`` failed (or aborted) runs of ``db`` and what each left as the last
    write of a partition."""
    with opened(db) as store:
        return incidents_answer(store, limit=limit)


def incidents_answer(store: LineageStore, *, limit: int = MAX_RUNS) -> Incidents:
    """:func:`incidents`'s answer from the open ``store``."""
    connection = store.connection
    (total,) = connection.execute(f"SELECT COUNT(*) FROM runs WHERE {_FAILED}").fetchone()
    rows = connection.execute(
        "SELECT run_id, job_namespace, job_name, status, started_at, ended_at FROM runs "
        f"WHERE {_FAILED} ORDER BY coalesce(ended_at, started_at) DESC, run_id DESC LIMIT ?",
        (limit,),
    ).fetchall()
    engine = Engine(store)
    runs = tuple(FailedRun(run, _left(engine, run)) for run in (RunRef(*row) for row in rows))
    return Incidents(runs, total)


_FAILED = f"status IN ({', '.join(repr(kind) for kind in FAILED_EVENT_TYPES)})"
"""The failed and aborted runs, spelled as the partial index ``runs_failed`` is (SQLite uses
it for a query whose condition is its own, not for one with parameters): counted and listed
without reading the other runs."""


def _left(engine: Engine, run: RunRef) -> tuple[FailedWrite, ...]:
    found = []
    for write in engine.outputs(run):
        dataset = engine.partitions(write.dataset_id).dataset()
        if write.text is None:
            later = (write.dataset_id, run.started_at)
            if engine.db.execute(_LATER_WHOLE_WRITE, later).fetchone() is None:
                found.append(FailedWrite(dataset, True, ()))
            continue
        units: dict[Unit, Label] = {}
        more = False
        for unit, surely in engine.selected(write, by_dates=True):
            if _rewritten(engine, write, unit):
                continue
            if len(units) == MAX_PARTITIONS:  # a wide failed write: the first ones, and "more"
                more = True
                break
            units[unit] = "definite" if surely else "possible"
        if units:
            parts = engine.partitions(write.dataset_id).partition_set(units)
            listed: list[tuple[PartitionRef, Label]] = [(r, "definite") for r in parts.definite]
            listed += [(r, "possible") for r in parts.possible]
            found.append(FailedWrite(dataset, False, tuple(listed), more))
    return tuple(found)


# A completed write of the whole dataset by a run started after a time (the writes of completed
# runs that do not only list partitions are those of writes_done; the newest first: the one
# looked for, most often). Each write of the dataset read as an Access took 20 s at ten million
# events for each failed run the front page lists.
_LATER_WHOLE_WRITE = (
    "SELECT 1 FROM accesses a INDEXED BY writes_done JOIN runs r ON r.run_id = a.run_id "
    "WHERE a.dataset_id = ? AND a.direction = 'output' AND a.listed = 0 AND a.done = 1 "
    "AND a.condition IS NULL AND r.status = 'COMPLETE' AND r.ended_at IS NOT NULL "
    "AND r.started_at > ? ORDER BY a.access_id DESC LIMIT 1"
)


def _rewritten(engine: Engine, failed: Access, unit: Unit) -> bool:
    """Whether a completed write started after the ``failed`` one surely covers ``unit``: of
    the writes that may write it (found by the partitions they list, where the database can),
    the latest first, until one ended before the failed run started."""
    since = failed.run.started_at
    for other in engine.writers_of(failed.dataset_id, [unit], None):
        if (other.run.ended_at or "") < since:
            return False
        if other.run.started_at > since and engine.write_overlap(other, unit) is True:
            return True
    return False
