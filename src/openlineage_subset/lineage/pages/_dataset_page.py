"""What a dataset's page draws, computed for what it draws only: the values of its first
partition column, the known partitions from a value of it on, the state of some partitions,
the dataset's latest writer and the latest entries of its history.

A dataset of three years of days by 300 countries has 328,500 known partitions, and its page
draws the newest few hundred days of 120 of them; working out every partition's state took
seconds. Here SQLite finds the values of the first column (a search of the ``partitions`` key
per value), the partitions of the newest ones (one range of the key), and the reads and
writes that may select one of them (the ``access_partitions`` index, the date ranges of
``access_bounds``); each read and write is then evaluated on those partitions only. The state
of each is the one :func:`~openlineage_subset.lineage.dataset_partitions` gives it
(tests/lineage/test_scale_pages.py holds them to an answer worked out from the events).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Iterable, Iterator
from typing import TypeVar

from openlineage_subset.lineage.engine import Access, Engine
from openlineage_subset.lineage.model import (
    DatasetRef,
    Dimensions,
    HistoryEntry,
    HistoryReport,
    PartitionSet,
    PartitionsReport,
    Unit,
)
from openlineage_subset.lineage.queries import (
    HistoryQuery,
    PartitionsQuery,
    history_answer,
    partitions_answer,
    states_report,
)
from openlineage_subset.lineage.store import LineageStore, pruned_before, pruned_note

_Item = TypeVar("_Item")

__all__ = [
    "PagePartitions",
    "PartitionAxis",
    "history_in_pieces",
    "latest_history",
    "partitions_in_pieces",
]


@dataclasses.dataclass(frozen=True)
class PartitionAxis:
    """The first partition column (by name) of a dataset and its distinct values."""

    dataset: DatasetRef
    order: tuple[str, ...]
    """The dataset's partition columns, in the order its events give them."""
    first: str
    """The column (:meth:`PagePartitions.second_axis`: the second one)."""
    values: tuple[str, ...]
    """In the order of their text (the second column's: in no order); all of them, or with
    ``uncounted`` a stretch of them."""
    uncounted: tuple[bool, bool] = (False, False)
    """Whether there are values before ``values`` (and after them) that are not there (too
    many to count: :meth:`PagePartitions.axis` with ``near``); False: ``values`` starts (ends)
    with the first (last) value."""
    least: int = 0
    """How many values the column has at least: ``len(values)`` unless ``uncounted``."""

    def __post_init__(self) -> None:
        if not any(self.uncounted):
            object.__setattr__(self, "least", len(self.values))


class PagePartitions:
    """The partitions of one dataset as its page asks for them, from the open ``store``: one
    catalog for the calls, which know the partitions the ones before found. Raises as
    :func:`~openlineage_subset.lineage.impact` does for a dataset it does not know."""

    def __init__(self, store: LineageStore, query: PartitionsQuery) -> None:
        self.store = store
        self.query = query
        self.engine = Engine(store)
        self.dataset_id = self.engine.resolve(query.dataset, query.namespace)
        self._first: dict[int, tuple[str, list[str], bool] | None] = {}

    def axis(self, most: int, near: tuple[str | None, int] | None = None) -> PartitionAxis | None:
        """The first column of the dataset's partitions and its values, when all its
        partitions have the same columns, of plain names, and that one has at most ``most``
        values, each plain ASCII text; else None. With ``near`` (``(value, count)``), a column
        of more values gives a stretch of them (``uncounted``): ``count`` values before
        ``value`` and ``count`` from it on (None: the ``count`` greatest), a search of the key
        each, so that a page of a million days costs what one of a thousand does."""
        catalog = self.engine.catalog.of(self.dataset_id)
        found = self._first.get(most)
        if found is None:
            found = self._first[most] = catalog.first_values_or_more(most)
        if found is None or (found[2] and near is None):
            return None  # other columns than one set of plain names, a value not plain
        first, values, more = found
        order = self.engine.partitions(self.dataset_id).column_order()
        dataset = self.engine.partitions(self.dataset_id).dataset()
        if not more:
            return PartitionAxis(dataset, order, first, tuple(values))
        assert near is not None
        if len(order) == 2 and self._tails() > most:
            return None  # which of the two columns has more values is not known
        value, count = near
        below = catalog.first_values_near(first, value, count + 1, later=False)
        above = (
            [] if value is None else catalog.first_values_near(first, value, count + 1, later=True)
        )
        if below is None or above is None:
            return None
        stretch = [*reversed(below[:count]), *above[:count]]
        uncounted = (len(below) > count, len(above) > count)
        if uncounted[0] and stretch[0] in values:  # among the first ones: those before known
            stretch[:0] = values[: values.index(stretch[0])]
            uncounted = (False, uncounted[1])
        return PartitionAxis(dataset, order, first, tuple(stretch), uncounted, most + 1)

    def _tails(self) -> int:
        (count,) = self.store.connection.execute(
            "SELECT count(*) FROM partition_tails WHERE dataset_id = ?", (self.dataset_id,)
        ).fetchone()
        return int(count)

    def second_axis(self, axis: PartitionAxis) -> PartitionAxis | None:
        """The second of a dataset's two partition columns and its distinct values (from the
        ends of its keys kept at ingest: no partition read), when that one is the grid's rows:
        it has more values than ``axis.first``, or as many and comes first in the dataset's
        order; each value text. None otherwise."""
        if len(axis.order) != 2:
            return None
        (second,) = [name for name in axis.order if name != axis.first]
        values: list[str] = []
        for (tail,) in self.store.connection.execute(
            "SELECT tail FROM partition_tails WHERE dataset_id = ?", (self.dataset_id,)
        ):
            value = json.loads("{" + tail).get(second)
            if not isinstance(value, str):
                return None
            values.append(value)
        if len(values) < axis.least or (
            len(values) == axis.least and axis.order.index(axis.first) < axis.order.index(second)
        ):
            return None
        return PartitionAxis(axis.dataset, axis.order, second, tuple(values))

    def newest(
        self, axis: PartitionAxis, value: str, before: str | None = None
    ) -> list[Dimensions]:
        """The known partitions whose value of ``axis.first`` is ``value`` or after it (and
        before ``before``)."""
        return self.engine.catalog.of(self.dataset_id).known_from(axis.first, value, before)

    def states(self, units: Collection[Dimensions]) -> PartitionsReport:
        """The state of each known partition among ``units`` (the others are left out), as
        :func:`~openlineage_subset.lineage.dataset_partitions` gives it, from the writes and
        the reads that may select one of them alone. The last call: this catalog knows
        those partitions alone after it."""
        engine, dataset_id = self.engine, self.dataset_id
        engine.catalog.of(dataset_id).restrict(units)
        known: list[Unit] = list(engine.partitions(dataset_id).known())
        if not known:
            return states_report(engine, dataset_id, [], [])
        writes = engine.writers_of(dataset_id, known, None)
        reads = engine.readers_of(dataset_id, known, None, True)
        return states_report(engine, dataset_id, writes, reads)

    def latest_writer(self) -> str | None:
        """The run id of the latest completed write of the dataset that may cover one of its
        known partitions (the latest of their last writers); None when there is none."""
        engine = Engine(self.store)  # all the known partitions, whatever states() kept
        shapes = engine.partitions(self.dataset_id).shapes()
        for write in engine.timeline.completed_writes(self.dataset_id):
            if write.text is None:
                if shapes:
                    return write.run.run_id
                continue
            if next(iter(engine.selected(write, by_dates=True)), None) is not None:
                return write.run.run_id
        return None


def latest_history(
    store: LineageStore, query: PartitionsQuery, most: int
) -> tuple[HistoryReport, int]:
    """The ``most`` latest entries of the dataset's history (every read and write, as
    :func:`~openlineage_subset.lineage.history` of the whole dataset gives them), and how many
    entries it has in all; only those given are read and their conditions rendered."""
    engine = Engine(store)
    dataset_id = engine.resolve(query.dataset, query.namespace)
    accesses, total = engine.timeline.latest(dataset_id, most)
    entries = tuple(
        HistoryEntry(access.run, access.direction.verb, engine.rendered(access), "definite")
        for access in accesses
    )
    target = engine.partitions(dataset_id).partition_set({None: "definite"})
    return HistoryReport(target, entries, total > 0), total


def partitions_in_pieces(
    store: LineageStore, query: PartitionsQuery, size: int
) -> Iterator[PartitionsReport]:
    """:func:`~openlineage_subset.lineage.dataset_partitions`'s answer, ``size`` partitions
    at a time, in its order: the same states, each piece's worked out as a page's (from the
    reads and writes that may select one of its partitions), so that no more than a piece is
    held, however many partitions the dataset has. A dataset whose partitions do not all have
    one set of simple column names (or that has none) is one piece: the whole answer."""
    _check_size(size)
    engine = Engine(store)
    dataset_id = engine.resolve(query.dataset, query.namespace)
    ordered = engine.catalog.of(dataset_id).in_answer_order()
    if ordered is None:
        yield partitions_answer(store, query)
        return
    given = False
    for piece in _in_pieces(ordered, size):
        yield PagePartitions(store, query).states(piece)
        given = True
    if not given:  # no partition: the answer says how the dataset is written
        yield partitions_answer(store, query)


def history_in_pieces(
    store: LineageStore, query: HistoryQuery, size: int
) -> Iterator[HistoryReport]:
    """:func:`~openlineage_subset.lineage.history`'s answer about a whole dataset, ``size``
    entries at a time, in its order, never all of them held (each piece's conditions rendered
    by an engine of its own, let go with it). A partition asked about is one piece: the whole
    answer (what may touch a partition is found by the indexes, not every access)."""
    _check_size(size)
    if query.partition is not None:
        yield history_answer(store, query)
        return
    engine = Engine(store)
    dataset_id = engine.resolve(query.dataset, query.namespace)
    target = engine.partitions(dataset_id).partition_set({None: "definite"})
    pruned = pruned_before(store.connection)
    notes = () if pruned is None else (pruned_note(pruned),)
    given = False
    for piece in _in_pieces(engine.timeline.every_access(dataset_id), size):
        yield _history_piece(store, target, piece, notes)
        given = True
    if not given:
        yield _history_piece(store, target, [], notes)


def _check_size(size: int) -> None:
    if size < 1:
        raise ValueError(f"size: a piece holds 1 item or more; got {size}")


def _in_pieces(items: Iterable[_Item], size: int) -> Iterator[list[_Item]]:
    """``items`` taken ``size`` at a time (the last piece may hold fewer)."""
    piece: list[_Item] = []
    for item in items:
        piece.append(item)
        if len(piece) == size:
            yield piece
            piece = []
    if piece:
        yield piece


def _history_piece(
    store: LineageStore, target: PartitionSet, accesses: list[Access], notes: tuple[str, ...]
) -> HistoryReport:
    engine = Engine(store)
    entries = tuple(
        HistoryEntry(access.run, access.direction.verb, engine.rendered(access), "definite")
        for access in accesses
    )
    return HistoryReport(target, entries, bool(entries), notes)
