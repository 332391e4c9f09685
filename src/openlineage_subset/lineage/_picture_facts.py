"""What the report's picture needs of the store, beyond the answers: who read and wrote which
partitions, each dataset's known partitions, and for the overview the jobs and their runs.

The report room (:mod:`openlineage_subset.report`) draws; it reads the store only through
:func:`picture_source`, so that its SQL and the walk of :class:`~._graph.Graph` stay here, in
the store's room. Every fact comes back as a frozen dataclass (or a tuple of them), in the order
the walk found it: the picture's notes list runs in that order.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Iterator

from openlineage_subset.lineage._arguments import Database, opened
from openlineage_subset.lineage._conditions import Unit
from openlineage_subset.lineage._graph import Graph, write_overlap
from openlineage_subset.lineage._model import DatasetRef, Dimensions, Label, RunRef
from openlineage_subset.lineage._store import LineageStore

__all__ = [
    "DatasetPartitions",
    "JobUse",
    "PictureSource",
    "Touched",
    "picture_source",
]


@dataclasses.dataclass(frozen=True, slots=True)
class DatasetPartitions:
    """A dataset's known partitions (listed by some read or write) and its partition columns
    in the order its events give them."""

    known: tuple[Dimensions, ...]
    order: tuple[str, ...]


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
        self._graph = Graph(store)

    def dataset(self, dataset_id: int) -> DatasetRef:
        return self._graph.dataset(dataset_id)

    def partitions(self, dataset: DatasetRef) -> DatasetPartitions:
        """The known partitions of ``dataset`` and its columns' order."""
        dataset_id = self._graph.resolve(dataset.name, dataset.namespace)
        return self.partitions_of(dataset_id)

    def partitions_of(self, dataset_id: int) -> DatasetPartitions:
        return DatasetPartitions(
            tuple(self._graph.known(dataset_id)), self._graph.column_order(dataset_id)
        )

    def reads(self, run: RunRef) -> tuple[Touched, ...]:
        """What ``run`` read: the parts each read may cover."""
        graph = self._graph
        return tuple(
            Touched(graph.dataset(read.dataset_id), run, tuple(graph.read_units(read)))
            for read in graph.inputs(run)
        )

    def writes(self, run: RunRef, label: Label) -> tuple[Touched, ...]:
        """What ``run`` wrote: the parts each write covers, labelled no surer than ``label``."""
        graph = self._graph
        return tuple(
            Touched(graph.dataset(write.dataset_id), run, tuple(graph.written(write, label)))
            for write in graph.outputs(run)
        )

    def overlaps(
        self, run: RunRef, dataset: DatasetRef, units: Iterable[Unit]
    ) -> tuple[tuple[Unit, bool | None], ...]:
        """For each write of ``dataset`` by ``run``, each of ``units`` it may have written:
        True if surely, None if possibly (those it surely did not write left out)."""
        graph = self._graph
        dataset_id = graph.resolve(dataset.name, dataset.namespace)
        units = list(units)
        found: list[tuple[Unit, bool | None]] = []
        for write in graph.outputs(run):
            if write.dataset_id != dataset_id:
                continue
            for unit in units:
                overlap = write_overlap(graph, write, unit)
                if overlap is not False:
                    found.append((unit, overlap))
        return tuple(found)

    def latest_writes(self, dataset_id: int) -> Iterator[Touched]:
        """The completed writes of the dataset, the latest first, each with the parts it
        covers; read as they are asked for, so a caller that has seen enough stops early."""
        graph = self._graph
        dataset = graph.dataset(dataset_id)
        for write in graph.writers_of(dataset_id, [], None):
            yield Touched(dataset, write.run, tuple(graph.written(write, "definite")))

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
