""":class:`Lineage`: one lineage database, opened once, asked any number of questions; what
the command line, the service and Python callers share. The functions :func:`impact`,
:func:`provenance` and the like open the database for one answer each."""

from __future__ import annotations

from collections.abc import Iterator
from types import TracebackType

from openlineage_subset.lineage.model import (
    DatasetRef,
    Dimensions,
    HistoryReport,
    ImpactReport,
    PartitionsReport,
    PartitionState,
    ProvenanceReport,
    RunRef,
)
from openlineage_subset.lineage.pages import (
    DatasetFacets,
    RunDetails,
    dataset_facets,
    history_in_pieces,
    partitions_in_pieces,
    run_details,
)
from openlineage_subset.lineage.queries import (
    DatasetsReport,
    DatasetSummary,
    HistoryQuery,
    ImpactQuery,
    PartitionsQuery,
    ProvenanceQuery,
    RunsQuery,
    RunsReport,
    WholeQuestion,
    check_whole,
    datasets_answer,
    failed_answer,
    history_answer,
    impact_answer,
    partitions_answer,
    provenance_answer,
    runs_answer,
)
from openlineage_subset.lineage.store import Database, open_store

__all__ = ["Lineage"]

PIECE = 10_000
"""Partitions (history entries) a piece of :meth:`Lineage.partitions_in_pieces`
(:meth:`Lineage.history_in_pieces`) holds by default: tens of MB."""


class Lineage:
    """The lineage database ``db`` (a path, or a :class:`LineageStore` the caller opened and
    closes), opened once for every question asked of it; each answer is the one the function
    of the same name gives (:func:`~openlineage_subset.lineage.impact` and the like).

    >>> from openlineage_subset.lineage import ImpactQuery, LineageStore, RunsQuery
    >>> store = LineageStore.open(":memory:", create=True)
    >>> with Lineage(store) as lineage:
    ...     print(lineage.datasets().datasets, lineage.runs(RunsQuery(limit=10)).total)
    () 0
    >>> with Lineage(store) as lineage:
    ...     lineage.impact(ImpactQuery("lake/sales"))
    Traceback (most recent call last):
    ...
    openlineage_subset.lineage.model._errors.LineageQueryError: no dataset named 'lake/sales' ...
    >>> store.close()

    ``most_accesses`` bounds the work of each impact, provenance, history and partitions
    answer: the most times it may load a read or write of a run, each time counted (None: any).
    One more raises :class:`~openlineage_subset.lineage.AnswerTooLarge` (what ``lineage serve``
    says with a 422), however far what the question reaches fans out.
    """

    def __init__(self, db: Database, *, most_accesses: int | None = None) -> None:
        self.store, self._close = open_store(db)
        self.most_accesses = most_accesses

    def __enter__(self) -> Lineage:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the database if it was opened here (a store given is the caller's)."""
        if self._close:
            self._close = False
            self.store.close()

    def check_whole(self, query: WholeQuestion, most: int) -> None:
        """Raise :class:`~openlineage_subset.lineage.AnswerTooLarge` when ``query`` asks about
        the whole of a dataset whose answer starts from more than ``most`` of it (reads,
        writes, partitions), before working it out: see
        :func:`~openlineage_subset.lineage.queries._listings.check_whole`."""
        check_whole(self.store, query, most)

    def impact(self, query: ImpactQuery) -> ImpactReport:
        """What depends on the part asked about: see :func:`~openlineage_subset.lineage.impact`."""
        return impact_answer(self.store, query, most_accesses=self.most_accesses)

    def provenance(self, query: ProvenanceQuery) -> ProvenanceReport:
        """Where the part asked about came from: see
        :func:`~openlineage_subset.lineage.provenance`."""
        return provenance_answer(self.store, query, most_accesses=self.most_accesses)

    def history(self, query: HistoryQuery) -> HistoryReport:
        """The runs that read or wrote the part asked about: see
        :func:`~openlineage_subset.lineage.history`."""
        return history_answer(self.store, query, most_accesses=self.most_accesses)

    def history_in_pieces(
        self, query: HistoryQuery, size: int | None = None
    ) -> Iterator[HistoryReport]:
        """:meth:`history`'s answer about a whole dataset ``size`` entries at a time (:data:`PIECE`
        when None), in its order, never all of them in memory; about a partition, one piece:
        the whole answer. The answer limit does not apply to a whole dataset's pieces. A
        ``size`` under 1 raises ``ValueError``."""
        return history_in_pieces(self.store, query, PIECE if size is None else size)

    def partitions(self, query: PartitionsQuery) -> PartitionsReport:
        """Each known partition of a dataset: see
        :func:`~openlineage_subset.lineage.dataset_partitions`."""
        return partitions_answer(self.store, query, most_accesses=self.most_accesses)

    def partitions_in_pieces(
        self, query: PartitionsQuery, size: int | None = None
    ) -> Iterator[PartitionsReport]:
        """:meth:`partitions`'s answer ``size`` partitions at a time, in its order, never all
        of them in memory (a dataset of a million partitions took gigabytes whole); one piece,
        the whole answer, for a dataset whose partitions have several sets of columns or none.
        The answer limit does not apply: each piece is a page's work. ``size``: :data:`PIECE`
        when None; under 1, ``ValueError``."""
        return partitions_in_pieces(self.store, query, PIECE if size is None else size)

    def datasets(self) -> DatasetsReport:
        """Every dataset, the most recently written first."""
        return datasets_answer(self.store)

    def dataset_summary(self, dataset: DatasetRef) -> DatasetSummary | None:
        """What :meth:`datasets` says of ``dataset`` (stored under that name); None when the
        database has no dataset of that name."""
        found = datasets_answer(self.store, dataset).datasets
        return found[0] if found else None

    def runs(self, query: RunsQuery | None = None) -> RunsReport:
        """The runs, the most recently started first (100 of them without a query)."""
        return runs_answer(self.store, query or RunsQuery())

    def run_details(self, run_id: str, *, before: str | None = None) -> RunDetails | None:
        """The run ``run_id``, its events, reads, writes and facets; None when there is none.
        ``before``: the page of the runs it started (see ``RunDetails.children_older``)."""
        return run_details(self.store, run_id, before=before)

    def dataset_facets(self, dataset: DatasetRef) -> DatasetFacets | None:
        """The facets the latest of ``dataset``'s recent runs gave it; None when none did."""
        return dataset_facets(self.store, dataset)

    def failed_writes(
        self, dataset: DatasetRef, states: tuple[PartitionState, ...]
    ) -> dict[Dimensions, RunRef]:
        """For each of ``states``' partitions a failed run may have written since its last
        completed writer: the latest such run."""
        return failed_answer(self.store, dataset, states)
