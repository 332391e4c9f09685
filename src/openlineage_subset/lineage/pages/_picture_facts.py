"""What the report's picture needs of the store, beyond the answers: who read and wrote which
partitions, each dataset's known partitions, and for the overview the jobs and their runs.

The report room (:mod:`openlineage_subset.report`) draws; it reads the store only through
:func:`picture_source`, so that its SQL and the walk of the query engine
(:class:`~openlineage_subset.lineage.engine.Engine`) stay here, in the lineage room. Every
fact comes back as a frozen dataclass (or a tuple of them), in the order the walk found it:
the picture's notes list runs in that order.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from collections.abc import Iterable, Iterator, Mapping

from openlineage_subset.lineage.engine import DatasetCatalog, Engine
from openlineage_subset.lineage.model import (
    DatasetRef,
    Dimensions,
    Label,
    RunRef,
    Unit,
    canonical_unit,
)
from openlineage_subset.lineage.store import Database, LineageStore, opened

__all__ = [
    "DatasetColumns",
    "DatasetPartitions",
    "JobUse",
    "PictureSource",
    "Touched",
    "picture_source",
]

_MOST_VALUES = 2_000
"""Values of a first partition column listed by a search each, at most; more: stretches of
them around the partitions an answer marks (:meth:`PictureSource.columns`)."""
_MOST_STRETCHES = 20
"""Stretches of values around marked partitions at most (more: the grid reads every known
partition)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DatasetPartitions:
    """A dataset's known partitions (listed by some read or write) and its partition columns
    in the order its events give them."""

    known: tuple[Dimensions, ...]
    order: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class DatasetColumns:
    """The partition columns of a dataset whose known partitions all have the same ones
    (``shape``, by name), their order in its events, and each one's distinct values."""

    shape: tuple[str, ...]
    order: tuple[str, ...]
    first: tuple[str, ...]
    """The values of ``shape[0]`` (plain ASCII text)."""
    others: Mapping[tuple[str | None, ...], str]
    """The values of ``shape[1:]`` together, as the known partitions have them, each with
    the end of their keys (``"b":"x"}``: after the first column's pair and its comma)."""
    uncounted: frozenset[str] = frozenset()
    """With stretches of ``shape[0]``'s values (too many to list): those of ``first`` just
    after values not listed (none: ``first`` is every value from the first one)."""
    more_after: bool = False
    """Whether there are values after the last of ``first`` that are not listed."""

    def key(self, first: str, other: tuple[str | None, ...]) -> str:
        """The key (``partitions.dimensions``) of the partition of these values."""
        pair = _first_pair(self.shape[0], first)
        return pair[:-1] + "," + self.others[other] if other else pair


@functools.lru_cache(maxsize=4096)
def _first_pair(column: str, value: str) -> str:
    """The key of the partition of one column: the start of the others' (a grid asks for a
    row's value with each of its columns)."""
    return canonical_unit(((column, value),))


@dataclasses.dataclass(frozen=True, slots=True)
class Touched:
    """One read or write of ``dataset`` by ``run``: the parts it covers, each labelled."""

    dataset: DatasetRef
    run: RunRef
    units: tuple[tuple[Unit, Label], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class JobUse:
    """A job's reads (``input``) or writes (``output``) of one dataset: how many runs."""

    job_namespace: str
    job_name: str
    dataset_id: int
    """The dataset's key in the store: :meth:`PictureSource.dataset` names it."""
    direction: str
    runs: int


class PictureSource:
    """The facts of one open store, with the caches of one walk (open it with
    :func:`picture_source`)."""

    def __init__(self, store: LineageStore) -> None:
        self.store = store
        self._engine = Engine(store)

    def dataset(self, dataset_id: int) -> DatasetRef:
        return self._engine.partitions(dataset_id).dataset()

    def partitions(self, dataset: DatasetRef) -> DatasetPartitions:
        """The known partitions of ``dataset`` and its columns' order."""
        dataset_id = self._engine.resolve(dataset.name, dataset.namespace)
        return self.partitions_of(dataset_id)

    def partitions_of(self, dataset_id: int) -> DatasetPartitions:
        return DatasetPartitions(
            tuple(self._engine.partitions(dataset_id).known()),
            self._engine.partitions(dataset_id).column_order(),
        )

    def columns(
        self, dataset: DatasetRef, near: Iterable[str] = (), radius: int = 0
    ) -> DatasetColumns | None:
        """The partition columns of ``dataset`` and their values, found by SQLite: the first
        column's a search of the key per value, the others' together from the ends of the
        keys kept at ingest (``partition_tails``). None unless all its known partitions have
        the same columns, of simple names, and the first column's values are plain ASCII text
        (see
        :meth:`~openlineage_subset.lineage.engine._partition_catalog.PartitionCatalog.first_values`).
        A first column of more values than are listed gives stretches of them: ``radius``
        values each side of each of ``near`` (the first ``radius`` without ``near``), those
        left out said (``uncounted``, ``more_after``), not counted."""
        dataset_id = self._engine.resolve(dataset.name, dataset.namespace)
        catalog = self._engine.catalog
        found = catalog.of(dataset_id).first_values_or_more(_MOST_VALUES)
        shape = catalog.of(dataset_id).plain_shape()
        if found is None or shape is None:
            return None
        first, values, more = found
        uncounted: frozenset[str] = frozenset()
        if more:
            if len(shape) > 1 and self._tails(dataset_id) > _MOST_VALUES:
                return None  # which column has more values is not known
            stretches = self._stretches(dataset_id, first, values, sorted(set(near)), radius)
            if stretches is None:
                return None
            values, uncounted, more_after = stretches
        rest = shape[1:]
        others: dict[tuple[str | None, ...], str] = {(): ""}
        if rest:
            # The first value is plain text (no quote): each key's end after its first '",'
            # is the other columns' values (distinct ends: distinct values), kept at ingest.
            tails = self.store.connection.execute(
                "SELECT tail FROM partition_tails WHERE dataset_id = ?", (dataset_id,)
            )
            others = {
                tuple(json.loads("{" + text)[column] for column in rest): text for (text,) in tails
            }
        order = self._engine.partitions(dataset_id).column_order()
        if not more:
            return DatasetColumns(shape, order, tuple(values), others)
        return DatasetColumns(shape, order, tuple(values), others, uncounted, more_after)

    def _tails(self, dataset_id: int) -> int:
        (count,) = self.store.connection.execute(
            "SELECT count(*) FROM partition_tails WHERE dataset_id = ?", (dataset_id,)
        ).fetchone()
        return int(count)

    def _stretches(
        self, dataset_id: int, first: str, listed: list[str], near: list[str], radius: int
    ) -> tuple[list[str], frozenset[str], bool] | None:
        """The values of ``first`` within ``radius`` of each of ``near`` (sorted; without
        them, the first ``radius`` values: ``listed``'s), in order; those just after values
        left out; whether values after the last are left out. One walk up the key through
        each cluster of ``near`` and one down from its least, a search of the key a value.
        None for more than :data:`_MOST_STRETCHES` clusters or a value not plain text."""
        catalog = self._engine.catalog.of(dataset_id)
        found: set[str] = set(near) if near else set(listed[:radius])
        starts: list[str] = []  # the first value of each stretch
        pending = 0  # the first of near not reached yet
        while pending < len(near):
            if len(starts) == _MOST_STRETCHES:
                return None
            below = catalog.first_values_near(first, near[pending], radius, later=False)
            if below is None:
                return None
            found.update(below)
            starts.append(below[-1] if below else near[pending])
            walked = self._walked(catalog, first, near, pending, radius)
            if walked is None:
                return None
            found.update(walked[0])
            pending = walked[1]
        values = sorted(found)
        uncounted = set()
        for start in {values[0], *starts}:  # a stretch's start: is the value before it listed?
            before = catalog.first_values_near(first, start, 1, later=False)
            if before is None:
                return None
            if before and before[0] not in found:
                uncounted.add(start)
        after = catalog.first_values_near(first, values[-1], 2, later=True)
        if after is None:
            return None
        return values, frozenset(uncounted), any(value != values[-1] for value in after)

    @staticmethod
    def _walked(
        catalog: DatasetCatalog, first: str, near: list[str], pending: int, radius: int
    ) -> tuple[list[str], int] | None:
        """The values from ``near[pending]`` up to ``radius`` after the last of ``near`` met on
        the way (each one met asks for ``radius`` more), and the index of the first of
        ``near`` after them."""
        walked: list[str] = []
        cursor, remaining = near[pending], radius
        while remaining > 0:
            chunk = catalog.first_values_near(first, cursor, remaining + 1, later=True)
            if chunk is None:
                return None
            if walked and chunk and chunk[0] == cursor:
                chunk = chunk[1:]  # the last value taken: taken
            if not chunk:
                break
            for value in chunk:
                while pending < len(near) and near[pending] <= value:
                    remaining, pending = radius, pending + 1  # a marked value: its radius
                walked.append(value)
                remaining -= 1
                if remaining == 0:
                    break
            cursor = walked[-1]
        while pending < len(near) and walked and near[pending] <= walked[-1]:
            pending += 1
        return walked, pending

    def known_among(self, dataset: DatasetRef, keys: Iterable[str]) -> set[str]:
        """Those of ``keys`` (``partitions.dimensions`` texts) that are known partitions of
        ``dataset``: a search of the key each."""
        dataset_id = self._engine.resolve(dataset.name, dataset.namespace)
        return {
            key
            for (key,) in self.store.connection.execute(
                "SELECT dimensions FROM partitions WHERE dataset_id = ? "
                "AND dimensions IN (SELECT value FROM json_each(?))",
                (dataset_id, json.dumps(list(keys))),
            )
        }

    def reads(self, run: RunRef) -> tuple[Touched, ...]:
        """What ``run`` read: the parts each read may cover."""
        engine = self._engine
        return tuple(
            Touched(
                engine.partitions(read.dataset_id).dataset(), run, tuple(engine.read_units(read))
            )
            for read in engine.inputs(run)
        )

    def writes(self, run: RunRef, label: Label) -> tuple[Touched, ...]:
        """What ``run`` wrote: the parts each write covers, labelled no surer than ``label``."""
        engine = self._engine
        return tuple(
            Touched(
                engine.partitions(write.dataset_id).dataset(),
                run,
                tuple(engine.written(write, label)),
            )
            for write in engine.outputs(run)
        )

    def overlaps(
        self, run: RunRef, dataset: DatasetRef, units: Iterable[Unit]
    ) -> tuple[tuple[Unit, bool | None], ...]:
        """For each write of ``dataset`` by ``run``, each of ``units`` it may have written:
        True if surely, None if possibly (those it surely did not write left out)."""
        engine = self._engine
        dataset_id = engine.resolve(dataset.name, dataset.namespace)
        units = list(units)
        found: list[tuple[Unit, bool | None]] = []
        for write in engine.outputs(run):
            if write.dataset_id != dataset_id:
                continue
            for unit in units:
                overlap = engine.write_overlap(write, unit)
                if overlap is not False:
                    found.append((unit, overlap))
        return tuple(found)

    def latest_writes(self, dataset_id: int) -> Iterator[Touched]:
        """The completed writes of the dataset, the latest first, each with the parts it
        covers; read as they are asked for, so a caller that has seen enough stops early."""
        engine = self._engine
        dataset = engine.partitions(dataset_id).dataset()
        for write in engine.writers_of(dataset_id, [], None):
            yield Touched(dataset, write.run, tuple(engine.written(write, "definite")))

    def job_uses(self) -> tuple[JobUse, ...]:
        """Every job's reads and writes of each dataset, with how many runs made them."""
        return tuple(
            JobUse(*row)
            for row in self.store.connection.execute(
                "SELECT r.job_namespace, r.job_name, a.dataset_id, a.direction, "
                "count(DISTINCT r.run_id) FROM accesses a JOIN runs r USING (run_id) "
                "GROUP BY r.job_namespace, r.job_name, a.dataset_id, a.direction"
            )
        )

    def runs(self) -> tuple[RunRef, ...]:
        """Every run, the earliest started first."""
        return tuple(
            RunRef(*row)
            for row in self.store.connection.execute(
                "SELECT run_id, job_namespace, job_name, status, started_at, ended_at FROM runs "
                "ORDER BY started_at, run_id"
            )
        )


@contextlib.contextmanager
def picture_source(db: Database) -> Iterator[PictureSource]:
    """The facts of the store ``db`` is or names (opened here, then closed, if a path)."""
    with opened(db) as store:
        yield PictureSource(store)
