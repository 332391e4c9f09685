"""The timeline a query walks: which runs read (``input``) and wrote (``output``) a dataset,
and when, as :class:`Access` records read from SQL once per query.

- a read depends on a write only if the write's run completed before the read's run started;
- only completed runs wrote anything: a failed, aborted or unfinished run is listed when it
  read affected data, and its outputs go no further.

The reads and writes that only list partitions and list none of those asked about are left out
by SQLite (the ``access_partitions`` index, the ranges of dates of ``access_ranges`` and
``access_bounds``), unread.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import json
import sqlite3
import sys
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

from openlineage_subset.lineage.engine._narrowing import (
    READERS,
    READERS_BY_ID,
    WRITERS,
    WRITERS_BY_ID,
    WRITES,
    WRITES_BY_ID,
)
from openlineage_subset.lineage.engine._partition_catalog import PartitionCatalog
from openlineage_subset.lineage.model import (
    AnswerTooLarge,
    RunRef,
    Side,
    Unit,
    canonical_unit,
    date_spans,
    places_around,
    plain_values,
    range_probes,
)
from openlineage_subset.lineage.store import LATEST_ACCESSES, ReadCounts

__all__ = ["Access", "ParsedConditions", "Timeline"]

_RUN_COLUMNS = (
    "SELECT r.run_id, r.job_namespace, r.job_name, r.status, r.started_at, r.ended_at, "
    "a.condition FROM accesses a "
)
_RUN_ROW = _RUN_COLUMNS + "JOIN runs r USING (run_id) "
_READERS_AT = (
    _RUN_ROW + "WHERE a.access_id IN ("
    "SELECT access_id FROM accesses WHERE dataset_id = ? AND direction = 'input' "
    "AND located = 0 "
    "UNION SELECT access_id FROM access_locations WHERE dataset_id = ? "
    "AND place IN (SELECT value FROM json_each(?)) "
    "UNION SELECT access_id FROM access_locations WHERE dataset_id = ? "
    "AND place > ? AND place < ?) "
    "AND a.direction = 'input' AND (? IS NULL OR {since}) ORDER BY r.started_at, r.run_id"
)
"""The reads of a dataset by runs started after a time (``{since}``: ``>`` or ``>=``) that
may have read a place: those not decided by places (``located``), and those that list it, a
directory above it or a place below it. Parameters: dataset id, dataset id, the place and the
directories above it (a JSON array), dataset id, the range below it, time twice."""


class ParsedConditions:
    """The conditions read, by their JSON: shared by the accesses of a query, so that a
    condition many accesses have (a day's partition list, read and written) is read once."""

    def __init__(self, counts: ReadCounts) -> None:
        self._found: dict[str, Any] = {}
        self._counts = counts

    def of(self, text: str) -> Any:
        found = self._found.get(text)
        if found is None:
            found = self._found[text] = json.loads(text)
            self._counts.conditions += 1
        return found


@dataclasses.dataclass(frozen=True)
class Access:
    """A run's read (``input``) or write (``output``) of a dataset, under its condition."""

    run: RunRef
    dataset_id: int
    direction: Side
    text: str | None  # the condition's canonical JSON; None: the whole dataset
    parsed: ParsedConditions = dataclasses.field(
        default_factory=lambda: ParsedConditions(ReadCounts()), compare=False, repr=False
    )

    @functools.cached_property
    def condition(self) -> Any:
        """The condition (JSON), read when first asked: most accesses a query loads are only
        compared by time."""
        return None if self.text is None else self.parsed.of(self.text)


class Timeline:
    """The reads and writes of one query, read from the database as it asks."""

    def __init__(
        self, db: sqlite3.Connection, catalog: PartitionCatalog, most: int | None = None
    ) -> None:
        self.db = db
        self.catalog = catalog
        self.most = most
        """The most reads and writes it loads (None: any): one more raises
        :class:`~openlineage_subset.lineage.AnswerTooLarge`, whatever the question, however
        far what it reaches fans out."""
        self._most = sys.maxsize if most is None else most
        self.loaded = 0
        """How many times a read or write was loaded so far: each row a statement gave (a later
        step may load again what an earlier one did: loading is the work bounded)."""
        self._accesses: dict[tuple[int, Side], list[Access]] = {}
        self._starts: dict[tuple[int, Side], list[str]] = {}
        # The reads of a dataset by runs started at or after a time, by dataset: (the time,
        # the reads, their starts); widened to an earlier time as asked.
        self._later: dict[int, tuple[str, list[Access], list[str]]] = {}
        self._by_run: dict[tuple[str, Side], list[Access]] = {}
        self._parsed = ParsedConditions(catalog.counts)
        self._columns: dict[int, list[str]] = {}

    def accesses(self, dataset_id: int, direction: Side) -> list[Access]:
        """Reads (``input``) or writes (``output``) of a dataset, by run start time."""
        key = (dataset_id, direction)
        found = self._accesses.get(key)
        if found is None:
            # In the order of the index of the direction's accesses by start (a.started_at is
            # r.started_at): the first rows come before the others are read, not after a sort
            # of all of them, so that an answer past its limit stops early.
            index = "reads_by_start" if direction is Side.INPUT else "writes_by_start"
            found = [
                self._access(row, dataset_id, direction)
                for row in self.db.execute(
                    _RUN_COLUMNS + f"INDEXED BY {index} JOIN runs r USING (run_id) "
                    f"WHERE a.dataset_id = ? AND a.direction = '{direction.value}' "
                    "ORDER BY a.started_at, a.run_id",
                    (dataset_id,),
                )
            ]
            self._accesses[key] = found
            self._starts[key] = [access.run.started_at for access in found]
        return found

    def every_access(self, dataset_id: int) -> Iterator[Access]:
        """Every read and write of a dataset in the order a whole history lists them (by run
        start, then run id, a run's read before its write), read from SQL as they are taken and
        kept nowhere (each reads its own condition, not shared): a dataset read and written
        millions of times is gone through without holding them. Not counted against
        :attr:`most`."""
        for row in self.db.execute(
            "SELECT r.run_id, r.job_namespace, r.job_name, r.status, r.started_at, r.ended_at, "
            "a.condition, a.direction FROM accesses a JOIN runs r USING (run_id) "
            "WHERE a.dataset_id = ? ORDER BY a.started_at, a.run_id, a.direction",
            (dataset_id,),
        ):
            yield Access(RunRef(*row[:6]), dataset_id, Side(row[7]), row[6])

    def latest(self, dataset_id: int, most: int) -> tuple[list[Access], int]:
        """The ``most`` reads and writes of a dataset by the runs started last (in the order
        :meth:`accesses` gives, reads before writes of a run), and how many it has in all:
        found by SQLite, the others unread."""
        # a.started_at is r.started_at (layout 12): the indexes of reads and of writes by it
        # give the latest of each first.
        rows = self.db.execute(
            "SELECT r.run_id, r.job_namespace, r.job_name, r.status, r.started_at, "
            f"r.ended_at, a.condition, a.direction FROM ({LATEST_ACCESSES}) l "
            "JOIN accesses a ON a.access_id = l.access_id JOIN runs r ON r.run_id = a.run_id "
            "ORDER BY r.started_at, r.run_id, a.direction",
            (dataset_id, most, dataset_id, most, most),
        ).fetchall()
        (total,) = self.db.execute(
            "SELECT coalesce(sum(reads + writes), 0) FROM dataset_counts WHERE dataset_id = ?",
            (dataset_id,),
        ).fetchone()
        return [self._access(row, dataset_id, Side(row[7])) for row in rows], total

    def completed_writes(self, dataset_id: int) -> Iterator[Access]:
        """The writes of a dataset by completed runs, the latest ended first (as
        :meth:`writers_of` gives them all), read from SQL as they are taken."""
        # A completed run's writes are done, written at its end (layout 12): the index of
        # writes by that time gives them the latest first, the others unread.
        for row in self.db.execute(
            _RUN_COLUMNS + "INDEXED BY writes_by_time JOIN runs r USING (run_id) "
            "WHERE a.dataset_id = ? AND a.direction = 'output' AND a.done = 1 "
            "AND r.status = 'COMPLETE' AND r.ended_at IS NOT NULL "
            "ORDER BY a.written_at DESC, r.run_id DESC",
            (dataset_id,),
        ):
            yield self._access(row, dataset_id, Side.OUTPUT)

    def failed_writes(self, dataset_id: int, states: Collection[str]) -> list[Access]:
        """The writes of a dataset by runs in one of ``states`` (not ``COMPLETE``: those of
        the index of writes not done), by start time."""
        assert "COMPLETE" not in states, states
        return [
            self._access(row, dataset_id, Side.OUTPUT)
            for row in self.db.execute(
                _RUN_COLUMNS + "INDEXED BY writes_not_done JOIN runs r USING (run_id) "
                "WHERE a.dataset_id = ? AND a.direction = 'output' AND a.done = 0 "
                "AND r.status IN (SELECT value FROM json_each(?)) ORDER BY r.started_at, r.run_id",
                (dataset_id, json.dumps(sorted(states))),
            )
        ]

    def failed_listing(
        self, dataset_id: int, units: Sequence[Unit]
    ) -> tuple[set[str], dict[Unit, set[str]]]:
        """The runs whose writes of the dataset, not done (failed, aborted, running), only
        list partitions, and of each unit the runs among them whose writes list it: read from
        the index of listed partitions, when the units are :meth:`indexed` (then such a write
        that does not list a unit does not write it); else none (every write is to be
        evaluated)."""
        if not self.indexed(dataset_id, list(units)):
            return set(), {}
        listed = {
            run_id
            for (run_id,) in self.db.execute(
                "SELECT run_id FROM accesses INDEXED BY writes_not_done WHERE dataset_id = ? "
                "AND direction = 'output' AND done = 0 AND listed = 1",
                (dataset_id,),
            )
        }
        if not listed:
            return listed, {}
        ids = self.catalog.of(dataset_id).partition_ids()
        by_id = {ids[unit]: unit for unit in units if unit in ids}  # type: ignore[index]
        listing: dict[Unit, set[str]] = {}
        for partition_id, run_id in self.db.execute(
            "SELECT p.partition_id, a.run_id FROM access_partitions p JOIN accesses a "
            "ON a.access_id = p.access_id WHERE p.partition_id IN (SELECT value FROM "
            "json_each(?)) AND a.direction = 'output' AND a.done = 0 AND a.listed = 1",
            (json.dumps(list(by_id)),),
        ):
            listing.setdefault(by_id[partition_id], set()).add(run_id)
        return listed, listing

    def readers_after(self, dataset_id: int, after: str | None, inclusive: bool) -> list[Access]:
        """Reads of the dataset by runs started after ``after`` (``inclusive``: or then; None:
        any time), by start time. Those started before the earliest time asked are unread
        (the index of accesses by start): an impact from a recent time costs the reads since
        then, not the dataset's history."""
        key = (dataset_id, Side.INPUT)
        if after is None or key in self._accesses:
            reads = self.accesses(dataset_id, Side.INPUT)
            if after is None:
                return reads
            starts = self._starts[key]
        else:
            _, reads, starts = self._reads_from(dataset_id, after)
        cut = bisect.bisect_left if inclusive else bisect.bisect_right
        return reads[cut(starts, after) :]

    def _reads_from(self, dataset_id: int, after: str) -> tuple[str, list[Access], list[str]]:
        """The reads of the dataset by runs started at ``after`` or later, kept: only those
        started before what was kept are read (a query reaching a dataset from several times
        reads each of its reads once)."""
        kept = self._later.get(dataset_id)
        if kept is not None and kept[0] <= after:
            return kept
        until = "" if kept is None else "AND a.started_at < ? "
        rows = self.db.execute(
            _RUN_COLUMNS + "INDEXED BY reads_by_start JOIN runs r USING (run_id) "
            "WHERE a.dataset_id = ? AND a.started_at >= ? " + until + "AND a.direction = 'input' "
            "ORDER BY a.started_at, a.run_id",
            (dataset_id, after) if kept is None else (dataset_id, after, kept[0]),
        )
        earlier = [self._access(row, dataset_id, Side.INPUT) for row in rows]
        reads = earlier + ([] if kept is None else kept[1])
        starts = [access.run.started_at for access in earlier] + ([] if kept is None else kept[2])
        self._later[dataset_id] = found = (after, reads, starts)
        return found

    def readers_at(
        self, dataset_id: int, place: str, after: str | None, inclusive: bool
    ) -> list[Access]:
        """:meth:`readers_after`, less the reads whose places (``access_locations``) leave
        ``place`` out: found by SQLite, the others unread. In the same order."""
        exact, low, high = places_around(place)
        since = "r.started_at >= ?" if inclusive else "r.started_at > ?"
        params = (dataset_id, dataset_id, json.dumps(exact), dataset_id, low, high, after, after)
        rows = self.db.execute(_READERS_AT.format(since=since), params)
        return [self._access(row, dataset_id, Side.INPUT) for row in rows]

    def readers_of(
        self, dataset_id: int, units: Iterable[Unit], after: str | None, inclusive: bool
    ) -> list[Access]:
        """:meth:`readers_after`, less the reads that only list partitions and list none of
        ``units``: known partitions of a dataset with a ``plain_shape``, which such a read
        does not select (found with the ``access_partitions`` index), and the reads whose date
        ranges (``access_bounds``) leave every unit out. In the same order."""
        units = list(units)
        spans = date_spans(units)
        columns = self._range_columns(dataset_id)
        # '' keys the reads bounded in no column: all taken, as those of a column not in spans
        probes = range_probes({c: spans[c] for c in columns if c and c in spans})
        whole = [column for column in columns if not column or column not in spans]
        since = "r.started_at >= ?" if inclusive else "r.started_at > ?"
        by_id, listed = self._listing(dataset_id, units, self.catalog.of(dataset_id).restricted())
        sql = (READERS_BY_ID if by_id else READERS).format(since=since)
        ranged = (json.dumps(probes), dataset_id, dataset_id, json.dumps(whole))
        rows = self.db.execute(sql, (*ranged, *listed[1:], after, after, json.dumps(spans)))
        return [self._access(row, dataset_id, Side.INPUT) for row in rows]

    def _range_columns(self, dataset_id: int) -> list[str]:
        """The columns the reads of a dataset that do not only list partitions are keyed by in
        ``access_ranges`` ('' for those bounded in none): one search of the key each."""
        found = self._columns.get(dataset_id)
        if found is None:
            found = self._columns[dataset_id] = []
            sql = "SELECT min(column_name) FROM access_ranges WHERE dataset_id = ? AND column_name "
            (column,) = self.db.execute(sql + ">= ''", (dataset_id,)).fetchone()
            while column is not None:
                found.append(column)
                (column,) = self.db.execute(sql + "> ?", (dataset_id, column)).fetchone()
        return found

    def writers_of(self, dataset_id: int, units: list[Unit], before: str | None) -> list[Access]:
        """The writes of the dataset by runs that completed before ``before`` (None: ever),
        the latest first; less, when the units are :meth:`indexed`, the writes that only list
        partitions and list none of the units (found with the ``access_partitions`` index),
        which do not write them."""
        if not self.indexed(dataset_id, units):
            writes = [
                write
                for write in self.accesses(dataset_id, Side.OUTPUT)
                if write.run.status == "COMPLETE"
                and write.run.ended_at is not None
                and (before is None or write.run.ended_at < before)
            ]
            writes.sort(key=lambda write: (write.run.ended_at or "", write.run.run_id))
            return writes[::-1]
        by_id, listed = self._listing(dataset_id, units, True)
        rows = self.db.execute(WRITERS_BY_ID if by_id else WRITERS, (*listed, before, before))
        return [self._access(row, dataset_id, Side.OUTPUT) for row in rows]

    def touching(self, dataset_id: int, direction: Side, units: list[Unit]) -> list[Access]:
        """:meth:`accesses`, less, when the units are :meth:`indexed`, those that only list
        partitions and list none of the units (and the reads whose date ranges leave every
        unit out), found with the indexes: what may touch the units. In the same order."""
        if not self.indexed(dataset_id, units):
            return self.accesses(dataset_id, direction)
        if direction is Side.INPUT:
            return self.readers_of(dataset_id, units, None, True)
        by_id, listed = self._listing(dataset_id, units, True)
        rows = self.db.execute(WRITES_BY_ID if by_id else WRITES, listed)
        return [self._access(row, dataset_id, Side.OUTPUT) for row in rows]

    def indexed(self, dataset_id: int, units: Sequence[Unit]) -> bool:
        """Whether the indexes find what may touch the units: the dataset has a
        ``plain_shape`` (its partition lists name known partitions only, each selecting exactly
        those it names), and each unit is a known partition of it, or a partition of its
        columns that holds none (not written yet, a value mistyped; of plain values, as
        :meth:`~PartitionCatalog.expand` takes them). Then an access that only lists
        partitions, and none of the units, touches none of them: it is left unread, however
        many there are."""
        catalog = self.catalog.of(dataset_id)
        shape = catalog.plain_shape()
        if not units or shape is None or None in units:
            return False
        catalog.look_up(units)
        columns = frozenset(shape)
        for unit in units:
            if catalog.identifier(unit) is not None:
                continue
            assert unit is not None
            names = frozenset(name for name, _ in unit)
            if not names <= columns or not plain_values(value for _, value in unit):
                return False
            if names != columns and catalog.coarser(unit) != []:
                return False  # known partitions inside it (or not known whether)
        return True

    def _listing(
        self, dataset_id: int, units: list[Unit], by_id: bool
    ) -> tuple[bool, tuple[Any, ...]]:
        """Whether :func:`listing` is given the units by their partition ids (``by_id``
        allows it, and each was found by key already: no key's text looked up again), and
        its parameters."""
        ids = self.catalog.of(dataset_id).partition_ids()
        found = [ids.get(unit) for unit in units]  # type: ignore[arg-type]
        if by_id and units and None not in found:
            return True, (dataset_id, json.dumps(found))
        wanted = json.dumps([canonical_unit(unit) for unit in units if unit is not None])
        return False, (dataset_id, dataset_id, wanted)

    def outputs(self, run: RunRef) -> list[Access]:
        return self._of_run(run, Side.OUTPUT)

    def inputs(self, run: RunRef) -> list[Access]:
        return self._of_run(run, Side.INPUT)

    def _of_run(self, run: RunRef, direction: Side) -> list[Access]:
        key = (run.run_id, direction)
        found = self._by_run.get(key)
        if found is None:
            found = [
                Access(run, dataset_id, direction, text, self._parsed)
                for dataset_id, text in self.db.execute(
                    # by name: the order of ids is the order the datasets arrived in
                    "SELECT a.dataset_id, a.condition FROM accesses a JOIN datasets d "
                    "USING (dataset_id) WHERE a.run_id = ? AND a.direction = ? "
                    "ORDER BY d.namespace, d.name",
                    (run.run_id, direction.value),
                )
            ]
            self._counted(len(found))
            self._by_run[key] = found
        return found

    def _access(self, row: tuple[Any, ...], dataset_id: int, direction: Side) -> Access:
        self._counted(1)
        return Access(RunRef(*row[:6]), dataset_id, direction, row[6], self._parsed)

    def _counted(self, count: int) -> None:
        """Count reads and writes loaded; past :attr:`most`, the answer is given up on (the
        rows a statement has not given yet stay unread)."""
        self.loaded += count
        if self.loaded > self._most:
            raise AnswerTooLarge(
                f"working the answer out loads reads and writes of runs more than {self._most:,} "
                "times, the most one answer may load here (lineage serve --max-whole-answer): "
                "ask about fewer partitions, with a smaller depth, or (impact) from a later "
                "since; 'ol-subset lineage' answers it whole on the database"
            )
