"""Ingest's storing side: the checked events of a chunk into the database, a few statements each.

A chunk's events are stored together: one query finds those already stored, one the runs they
merge into, and each table gets its new rows in one ``executemany``. Ids of new datasets,
accesses and partitions are given here (this connection holds the write lock), so that no row
has to be read back after it is written, and the references between tables hold by
construction: the writer does not have SQLite check them row by row, which would cost a third of
its time (the tests check them). Should storing a chunk fail, it is undone and its events are
stored one at a time, so that only the event that fails is left out.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from openlineage_subset.lineage.ingestion._merges import aliased, heal_kept_apart, join_names
from openlineage_subset.lineage.ingestion._shapes import (
    AlreadyStored,
    Checked,
    CheckedEvent,
    Condition,
    EventOutcome,
    Invalid,
    Stored,
)
from openlineage_subset.lineage.model import any_of_json, canonical, read_bounds
from openlineage_subset.lineage.store import (
    ADD_COUNTS,
    DELETE_RANGE,
    INSERT_RANGE,
    UPSERT_PARENTS,
    Alias,
    LineageStore,
    RunParents,
    joins_other_names,
    merged_parents,
    parents_row,
    range_row,
    stored_range_rows,
)
from openlineage_subset.producer import TERMINAL_EVENT_TYPES

_COMMIT_EVENTS = 2000  # events per transaction: few syncs to disk, and a bounded journal
# Ids known without a query: the datasets and partitions met lately. Cleared when full; a few MB.
_CACHED_IDS = 16384
_IN = "(SELECT value FROM json_each(?))"  # a list of values given as one JSON parameter

Counter = Callable[[EventOutcome], None]


def relax_sync(connection: sqlite3.Connection) -> bool:
    """``synchronous = NORMAL`` on a WAL database (True), else nothing (False).

    A commit then appends to the log without waiting for the disk (the log is synced at each
    checkpoint): what is committed survives the process being killed, SIGKILL included; only
    an operating system crash or a power loss can lose the last commits, and never corrupts
    the file. Without WAL, ``NORMAL`` could corrupt it on a power loss: left ``FULL`` there.
    """
    mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
    if str(mode).lower() != "wal":
        return False
    connection.execute("PRAGMA synchronous = NORMAL")
    return True


class Writer:
    """Stores the outcomes of checked chunks, in order; :meth:`commit` at the end."""

    def __init__(self, store: LineageStore, *, committed: Callable[[], None] | None = None) -> None:
        """``committed``: called after each commit (a bulk ingest's checkpoints: see
        :mod:`._checkpoints`)."""
        self.database = store
        self.committed = committed
        self.db = store.connection
        self.db.execute("PRAGMA foreign_keys = OFF")
        self.dataset_ids: dict[tuple[str, str], int] = {}
        self.partition_ids: dict[int, dict[str, int]] = {}
        """By dataset id: the ids of partitions, by canonical dimensions."""
        self.cached = 0
        """How many ids ``partition_ids`` holds."""
        self.identifiers: dict[int, str | None] = {}
        """The identifiers of the partitions ``partition_ids`` holds (None: none given)."""
        self.catalog: set[tuple[Any, ...]] = set()
        """(dataset id, columns) and (dataset id, column, kind) stored."""
        self.tails: set[tuple[int, str]] = set()
        """(dataset id, tail) in ``partition_tails``, found or stored in this transaction."""
        self.joined: set[Alias] = set()
        """Other names of datasets recorded (see lineage/store/_dataset_names.py)."""
        self.has_aliases = False
        """Whether the database holds other names of datasets."""
        self.joins_names = True
        """The store's ``other_names`` setting is ``join`` (read at each transaction)."""
        self.healed = False
        """Whether names an earlier version kept apart were joined (the first transaction)."""
        self.pending = 0
        self.open = False

    def store(self, outcomes: list[Checked], conditions: list[Condition], count: Counter) -> None:
        """Store the events among a chunk's outcomes; ``count`` is told what became of each
        in order: an event :class:`Stored`, :class:`AlreadyStored`, or :class:`Invalid` when the
        database refused it; any other outcome as it is."""
        events = [outcome for outcome in outcomes if isinstance(outcome, CheckedEvent)]
        # The first chunk of a transaction is undone by rolling the transaction back: no
        # savepoint (two statements) for it, which a server storing each few events pays.
        first = not self.open
        if first:
            self._begin()
        else:
            self.db.execute("SAVEPOINT chunk")
        try:
            stored = iter(self._store(events, conditions))
        except (sqlite3.IntegrityError, ValueError, TypeError):
            if first:
                self.rollback()
                self._forget()
                self._begin()
            else:
                self._undo("chunk")
            self._one_by_one(outcomes, conditions, count)
        else:
            if not first:
                self.db.execute("RELEASE chunk")
            for outcome in outcomes:
                if isinstance(outcome, CheckedEvent):
                    count(_event_outcome(outcome, next(stored)))
                else:
                    count(outcome)
        self.pending += len(events)
        if self.pending >= _COMMIT_EVENTS:
            # The write lock is let go until the next chunk is stored: another ingest (or a
            # server) waiting for it writes while this one checks its next chunk.
            self.commit()

    def begin(self) -> None:
        """Start the next transaction after :meth:`commit` or :meth:`rollback` (the writer
        starts its first itself)."""
        if not self.open:
            self._begin()

    def commit(self) -> None:
        if self.open:
            self.db.execute("COMMIT")
            self.open = False
            if self.committed is not None:
                self.committed()

    def rollback(self) -> None:
        if self.open:
            self.db.execute("ROLLBACK")
            self.open = False

    def _begin(self) -> None:
        self.database.begin_write()
        self.open = True
        self.pending = 0
        self.tails.clear()  # another process may have pruned some since
        self._read_next_ids()
        self.joins_names = joins_other_names(self.database)
        if not self.healed:
            self.healed = True
            if self.has_aliases and heal_kept_apart(self.db):
                self._forget()

    def _read_next_ids(self) -> None:
        # Read at each transaction's start: another process may have written in between.
        (self.next_dataset, self.next_access, self.next_partition, aliases) = self.db.execute(
            "SELECT (SELECT coalesce(max(dataset_id), 0) + 1 FROM datasets), "
            "(SELECT coalesce(max(access_id), 0) + 1 FROM accesses), "
            "(SELECT coalesce(max(partition_id), 0) + 1 FROM partitions), "
            "EXISTS (SELECT 1 FROM dataset_names)"
        ).fetchone()
        self.has_aliases = bool(aliases)

    def _undo(self, savepoint: str) -> None:
        self.db.execute(f"ROLLBACK TO {savepoint}")
        self.db.execute(f"RELEASE {savepoint}")
        self._forget()
        self._read_next_ids()

    def _forget(self) -> None:
        """Forget the ids of what undone statements added: it is gone."""
        self.dataset_ids.clear()
        self.partition_ids.clear()
        self.cached = 0
        self.identifiers.clear()
        self.catalog.clear()
        self.tails.clear()
        self.joined.clear()

    def _many(self, statement: str, rows: Any) -> None:
        """``executemany``, skipped without rows: most chunks of a server's few events leave
        half of the tables as they were."""
        if rows:
            self.db.executemany(statement, rows)

    def _one_by_one(
        self, outcomes: list[Checked], conditions: list[Condition], count: Counter
    ) -> None:
        for outcome in outcomes:
            if not isinstance(outcome, CheckedEvent):
                count(outcome)
                continue
            self.db.execute("SAVEPOINT event")
            try:
                (stored,) = self._store([outcome], conditions)
            except (sqlite3.IntegrityError, ValueError, TypeError) as error:
                self._undo("event")
                count(Invalid(outcome.source, outcome.line, f"not stored: {error}"))
            else:
                self.db.execute("RELEASE event")
                count(_event_outcome(outcome, stored))

    def _store(self, events: list[CheckedEvent], conditions: list[Condition]) -> list[bool]:
        """Store the events; for each, whether it was new."""
        # by (run id, digest): the events' key (layout 14), near the last one added
        known = {
            row[0]
            for row in self.db.execute(
                "SELECT digest FROM events WHERE (run_id, digest) IN "
                "(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') "
                "FROM json_each(?))",
                (json.dumps([(event.run_id, event.digest) for event in events]),),
            )
        }
        fresh = []
        new = []
        for event in events:
            is_new = event.digest not in known
            if is_new:
                known.add(event.digest)
                fresh.append(event)
            new.append(is_new)
        if fresh:
            old_runs, completed = self._runs(fresh)
            self._many(
                "INSERT INTO events (digest, run_id, event_type, event_time, source, facets) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        event.digest,
                        event.run_id,
                        event.event_type,
                        event.event_time,
                        event.where,
                        event.facets,
                    )
                    for event in fresh
                ],
            )
            self._accesses(fresh, (old_runs, completed), conditions)
        return new

    def _runs(
        self, events: list[CheckedEvent]
    ) -> tuple[list[str], dict[str, tuple[bool, str, str]]]:
        """Merge the events into their runs, whatever order they come in; the ids of the runs
        that were stored before, and for each run whether it completed (so far), the time its
        writes are written at (its end, else its start) and its start."""
        states: dict[str, list[Any]] = {}
        jobs: dict[str, tuple[str, str]] = {}
        for run_id, *state in self.db.execute(
            "SELECT run_id, start_event_at, first_event_at, latest_state, latest_state_at, "
            f"terminal_state, ended_at FROM runs WHERE run_id IN {_IN}",
            (json.dumps(list(dict.fromkeys(event.run_id for event in events))),),
        ):
            states[run_id] = state
        old = list(states)
        for event in events:
            state = states.get(event.run_id)
            if state is None:
                state = states[event.run_id] = [None, event.event_time, None, None, None, None]
                jobs[event.run_id] = (event.job_namespace, event.job_name)
            _merge(state, event.event_type, event.event_time)
        rows = [
            (
                *jobs.get(run_id, (None, None)),
                terminal or latest,
                start_at or first_at,
                start_at,
                first_at,
                latest,
                latest_at,
                terminal,
                ended,
                run_id,
            )
            for run_id, (start_at, first_at, latest, latest_at, terminal, ended) in states.items()
        ]
        self._many(
            "INSERT INTO runs (job_namespace, job_name, status, started_at, start_event_at, "
            "first_event_at, latest_state, latest_state_at, terminal_state, ended_at, run_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows[len(old) :],
        )
        self._many(
            "UPDATE runs SET status = ?, started_at = ?, start_event_at = ?, "
            "first_event_at = ?, latest_state = ?, latest_state_at = ?, terminal_state = ?, "
            "ended_at = ? WHERE run_id = ?",
            [row[2:] for row in rows[: len(old)]],
        )
        # Parent, root and orchestrator task: only events whose facets name one have them; a
        # run's events (START, COMPLETE) mostly name the same: one row per run of the chunk.
        parents: dict[str, RunParents] = {}
        for event in events:
            if event.parents is not None:
                parents[event.run_id] = merged_parents(parents.get(event.run_id), event.parents)
        self._many(UPSERT_PARENTS, [parents_row(*item) for item in parents.items()])
        # A write is when its run ended, or while it runs its start (written_at).
        return old, {row[-1]: (row[2] == "COMPLETE", row[9] or row[3], row[3]) for row in rows}

    def _dataset_ids(self, events: list[CheckedEvent]) -> dict[tuple[str, str], int]:
        ids = self.dataset_ids
        if len(ids) > _CACHED_IDS:
            ids.clear()
        claims = [alias for event in events for alias in event.aliases if alias not in self.joined]
        # Other names of datasets (symlinks), unless the store ignores them: see
        # lineage/store/_dataset_names.py.
        if claims and self.joins_names:
            if join_names(self.db, dict.fromkeys(claims), self._new_dataset):
                self._forget()  # merged or renamed: ids and partitions cached may be wrong
            self.joined.update(claims)
            self.has_aliases = True
        missing = list(
            dict.fromkeys(
                (access.namespace, access.name)
                for event in events
                for access in event.accesses
                if (access.namespace, access.name) not in ids
            )
        )
        if missing:
            for dataset_id, namespace, name in self.db.execute(
                "SELECT d.dataset_id, d.namespace, d.name FROM json_each(?) j JOIN datasets d "
                "ON d.namespace = json_extract(j.value, '$[0]') "
                "AND d.name = json_extract(j.value, '$[1]')",
                (json.dumps(missing),),
            ):
                ids[namespace, name] = dataset_id
            unknown = [key for key in missing if key not in ids]
            if unknown and self.has_aliases:  # another name of a stored dataset
                ids.update(aliased(self.db, unknown))
            rows = []
            for key in unknown:
                if key not in ids:
                    ids[key] = self.next_dataset
                    rows.append((self.next_dataset, *key))
                    self.next_dataset += 1
            self._many("INSERT INTO datasets (dataset_id, namespace, name) VALUES (?, ?, ?)", rows)
        return ids

    def _new_dataset(self, key: tuple[str, str]) -> int:
        """Store a new dataset named ``key``; its id."""
        dataset_id = self.dataset_ids[key] = int(self.next_dataset)
        self.next_dataset += 1
        self.db.execute(
            "INSERT INTO datasets (dataset_id, namespace, name) VALUES (?, ?, ?)",
            (dataset_id, *key),
        )
        return dataset_id

    def _accesses(
        self,
        events: list[CheckedEvent],
        runs: tuple[list[str], dict[str, tuple[bool, str, str]]],
        conditions: list[Condition],
    ) -> None:
        """The events' reads and writes, the conditions new to each, and what those list;
        ``runs``: the ids of the events' runs stored before, and of each run whether it
        completed, when it wrote and when it started (a new access of one has them; a stored
        run that completes or moves marks its accesses by trigger)."""
        old_runs, completed = runs
        accesses, added = self._gathered(events, old_runs, conditions)
        self._write_accesses(accesses, completed)
        self._partitions(added, conditions)
        self._many(
            "INSERT OR IGNORE INTO access_locations (dataset_id, place, access_id) "
            "VALUES (?, ?, ?)",
            [
                (dataset_id, place, access_id)
                for access_id, dataset_id, index, _ in added
                for place in conditions[index].places or ()
            ],
        )

    def _gathered(
        self, events: list[CheckedEvent], old_runs: list[str], conditions: list[Condition]
    ) -> tuple[dict[tuple[str, int, str], list[Any]], list[tuple[int, int, int, bool]]]:
        """The accesses of the events' runs, stored and new, with the conditions the events
        add to each; and each condition added: (access id, dataset id, condition index,
        whether a read)."""
        dataset_ids = self._dataset_ids(events)
        # By (run, dataset, direction): [access id, distinct conditions, whether they only list
        # partitions, how many of them access_conditions holds (None: a new access), whether
        # this chunk adds one, whether lists of places decide them all].
        accesses: dict[tuple[str, int, str], list[Any]] = self._stored_accesses(old_runs)
        # (access id, dataset id, condition index, whether a read) of each condition new to an
        # access
        added: list[tuple[int, int, int, bool]] = []
        for event in events:
            run_id = event.run_id
            for read_or_write in event.accesses:
                dataset_id = dataset_ids[read_or_write.namespace, read_or_write.name]
                direction, index = read_or_write.direction, read_or_write.condition
                access = accesses.get((run_id, dataset_id, direction))
                if access is None:
                    access = [self.next_access, [], False, None, False, False]
                    accesses[run_id, dataset_id, direction] = access
                    self.next_access += 1
                if index < 0:
                    continue  # no facet: says nothing about the subset, and overrides nothing
                condition = conditions[index]
                text, lists = condition.text, condition.lists_only
                texts = access[1]
                if text in texts:
                    continue  # a condition stored before: its partitions were recorded with it
                # The OR of conditions only lists partitions when each of them does, and is
                # decided by places when each of them is.
                access[2] = (access[2] or not texts) and lists
                access[5] = (access[5] or not texts) and condition.places is not None
                texts.append(text)
                access[4] = True
                added.append((access[0], dataset_id, index, direction == "input"))
        return accesses, added

    def _write_accesses(
        self,
        accesses: dict[tuple[str, int, str], list[Any]],
        completed: dict[str, tuple[bool, str, str]],
    ) -> None:
        """Store the accesses new or given conditions (as :meth:`_gathered` keeps them), with
        their conditions, the ranges of dates of the reads and their rows in ``access_ranges``."""
        new: list[tuple[Any, ...]] = []
        changed: list[tuple[Any, ...]] = []
        several: list[tuple[int, str]] = []
        bounds: list[tuple[int, str, str | None, str | None]] = []
        ranged: list[tuple[int, str, int, str, int]] = []  # access_ranges rows
        regrown: list[tuple[int, int]] = []  # stored reads given a condition: their old rows go
        for key, (access_id, texts, lists, held, grown, located) in accesses.items():
            if held is None:
                merged = _merged(texts)
                done, written_at, started_at = completed[key[0]]
                write = key[2] == "output"  # a read is not done, nor written at a time
                new.append(
                    (
                        access_id,
                        *key,
                        merged,
                        lists,
                        located,
                        done and write,
                        written_at if write else None,
                        started_at,
                    )
                )
            elif grown:
                merged = _merged(texts)
                changed.append((merged, lists, located, access_id))
            else:
                continue
            if len(texts) > 1:  # the one condition of an access is its condition
                several.extend((access_id, text) for text in texts[held or 0 :])
            if key[2] == "input":
                if held is not None:
                    regrown.append((key[1], access_id))
                if not lists:
                    ranges = read_bounds(json.loads(merged)) if merged is not None else {}
                    bounds.extend((access_id, column, *pair) for column, pair in ranges.items())
                    ranged.append(range_row(key[1], access_id, ranges))
        self._many(
            "INSERT INTO accesses "
            "(access_id, run_id, dataset_id, direction, condition, listed, located, done, "
            "written_at, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            new,
        )
        counts: dict[int, list[int]] = {}
        for row in new:  # access id, run id, dataset id, direction, ...
            counts.setdefault(row[2], [0, 0, 0])[row[3] == "output"] += 1
        self._many(ADD_COUNTS, [(*counted, dataset_id) for dataset_id, counted in counts.items()])
        self._many(
            "UPDATE accesses SET condition = ?, listed = ?, located = ? WHERE access_id = ?",
            changed,
        )
        self._many("INSERT INTO access_conditions (access_id, condition) VALUES (?, ?)", several)
        # A grown read's condition is a wider OR: its old ranges go, the new ones are stored.
        self._many(DELETE_RANGE, stored_range_rows(self.db, regrown))
        self._many("DELETE FROM access_bounds WHERE access_id = ?", [(row[3],) for row in changed])
        self._many(INSERT_RANGE, ranged)
        self._many(
            "INSERT INTO access_bounds (access_id, column_name, low, high) VALUES (?, ?, ?, ?)",
            bounds,
        )

    def _stored_accesses(self, runs: list[str]) -> dict[tuple[str, int, str], list[Any]]:
        """The accesses of runs stored before, as :meth:`_accesses` keeps them."""
        accesses: dict[tuple[str, int, str], list[Any]] = {}
        by_id: dict[int, list[Any]] = {}
        if not runs:
            return accesses  # no run stored before: nothing to read (a START, usually)
        for access_id, run_id, dataset_id, direction, condition, listed, located in self.db.execute(
            "SELECT access_id, run_id, dataset_id, direction, condition, listed, located "
            "FROM accesses "
            f"WHERE run_id IN {_IN}",
            (json.dumps(runs),),
        ):
            texts = [] if condition is None else [condition]
            by_id[access_id] = accesses[run_id, dataset_id, direction] = [
                access_id,
                texts,
                bool(listed),
                0,
                False,
                bool(located),
            ]
        several: dict[int, list[str]] = {}
        if not by_id:
            return accesses
        for access_id, text in self.db.execute(
            f"SELECT access_id, condition FROM access_conditions WHERE access_id IN {_IN}",
            (json.dumps(list(by_id)),),
        ):
            several.setdefault(access_id, []).append(text)
        for access_id, texts in several.items():
            by_id[access_id][1] = texts
            by_id[access_id][3] = len(texts)
        return accesses

    def _partitions(
        self, added: list[tuple[int, int, int, bool]], conditions: list[Condition]
    ) -> None:
        """Record the partitions the conditions new to accesses list, their columns, and which
        partitions each access lists (impact looks for the reads of a partition, provenance
        for its writes)."""
        self._look_up_partitions(added, conditions)
        identifiers = self.identifiers
        catalog = self.catalog
        made: dict[int, list[Any]] = {}
        named: dict[int, str] = {}
        links, columns, kinds = [], [], []
        for access_id, dataset_id, index, _ in added:
            condition = conditions[index]
            rows, shapes, column_kinds = (
                condition.partitions,
                condition.column_sets,
                condition.column_kinds,
            )
            ids = self.partition_ids[dataset_id]
            for dimensions, identifier in rows:
                partition_id = ids.get(dimensions)
                if partition_id is None:
                    partition_id = ids[dimensions] = self.next_partition
                    self.next_partition += 1
                    self.cached += 1
                    made[partition_id] = [dataset_id, dimensions, identifier, partition_id]
                    identifiers[partition_id] = identifier
                elif identifier is not None and (
                    (kept := identifiers.get(partition_id)) is None or identifier < kept
                ):
                    # The least identifier given is kept, whatever order they come in.
                    identifiers[partition_id] = identifier
                    if partition_id in made:
                        made[partition_id][2] = identifier
                    else:
                        named[partition_id] = identifier
                links.append((partition_id, access_id))
            for shape in shapes:
                if (dataset_id, shape) not in catalog:
                    catalog.add((dataset_id, shape))
                    columns.append((dataset_id, shape))
            for column, kind in column_kinds:
                if (dataset_id, column, kind) not in catalog:
                    catalog.add((dataset_id, column, kind))
                    kinds.append((dataset_id, column, kind))
        self._many(
            "INSERT INTO partitions (dataset_id, dimensions, identifier, partition_id) "
            "VALUES (?, ?, ?, ?)",
            made.values(),
        )
        added_to: dict[int, int] = {}
        for row in made.values():
            added_to[row[0]] = added_to.get(row[0], 0) + 1
        self._many(
            ADD_COUNTS, [(0, 0, count, dataset_id) for dataset_id, count in added_to.items()]
        )
        self._many(
            "INSERT OR IGNORE INTO partition_tails (dataset_id, tail) VALUES (?, ?)",
            self._new_tails(made.values()),
        )
        self._many(
            "UPDATE partitions SET identifier = ? WHERE partition_id = ? "
            "AND (identifier IS NULL OR identifier > ?)",
            [(identifier, key, identifier) for key, identifier in named.items()],
        )
        self._many(
            "INSERT OR IGNORE INTO access_partitions (partition_id, access_id) VALUES (?, ?)",
            links,
        )
        self._many(
            "INSERT OR IGNORE INTO partition_columns (dataset_id, columns) VALUES (?, ?)",
            columns,
        )
        self._many(
            "INSERT OR IGNORE INTO partition_kinds (dataset_id, column_name, kind) "
            "VALUES (?, ?, ?)",
            kinds,
        )
        if len(catalog) > _CACHED_IDS:
            catalog.clear()

    def _new_tails(self, made: Iterable[list[Any]]) -> list[tuple[int, str]]:
        """The tails of the keys of the partitions ``made`` (dataset id, dimensions, ...) not
        known stored: what follows the first column's pair (a key of one column has none).
        Kept here, a statement per chunk, not by a trigger per partition (10 us of CPU an
        event)."""
        tails = self.tails
        if len(tails) > _CACHED_IDS:
            tails.clear()
        new = []
        for dataset_id, dimensions, *_ in made:
            cut = dimensions.find('",')
            if cut >= 0 and (dataset_id, tail := dimensions[cut + 2 :]) not in tails:
                tails.add((dataset_id, tail))
                new.append((dataset_id, tail))
        return new

    def _look_up_partitions(
        self, added: list[tuple[int, int, int, bool]], conditions: list[Condition]
    ) -> None:
        """Have :attr:`partition_ids` hold the stored ones among the partitions listed."""
        if self.cached > _CACHED_IDS:
            self.partition_ids.clear()
            self.identifiers.clear()
            self.cached = 0
        missing: dict[int, dict[str, None]] = {}
        for _, dataset_id, index, _ in added:
            ids = self.partition_ids.setdefault(dataset_id, {})
            for dimensions, _ in conditions[index].partitions:
                if dimensions not in ids:
                    missing.setdefault(dataset_id, {})[dimensions] = None
        for dataset_id, wanted in missing.items():
            ids = self.partition_ids[dataset_id]
            for dimensions, partition_id, identifier in self.db.execute(
                "SELECT dimensions, partition_id, identifier FROM partitions "
                f"WHERE dataset_id = ? AND dimensions IN {_IN}",
                (dataset_id, json.dumps(list(wanted))),
            ):
                ids[dimensions] = partition_id
                self.cached += 1
                self.identifiers[partition_id] = identifier


def _event_outcome(event: CheckedEvent, new: bool) -> EventOutcome:
    return Stored(event) if new else AlreadyStored(event)


def _merge(state: list[Any], event_type: str, event_time: str) -> None:
    """Merge one event into a run's (start event time, first event time, latest state and
    its time, terminal state, end time)."""
    start_at, first_at, latest, latest_at, terminal, ended = state
    first_at = min(first_at, event_time)
    if event_type == "START":
        start_at = event_time if start_at is None else min(start_at, event_time)
    if event_type in TERMINAL_EVENT_TYPES:
        # The latest terminal event wins; ties go to the state named last alphabetically,
        # so that the outcome never depends on the order the events were read in.
        if ended is None or (event_time, event_type) > (ended, terminal):
            terminal, ended = event_type, event_time
    elif (
        latest_at is None
        or latest in TERMINAL_EVENT_TYPES  # stood in for the states not yet known
        or (event_time, event_type) > (latest_at, latest)
    ):
        latest, latest_at = event_type, event_time
    if latest is None:  # only terminal events so far: nothing ran before the end
        latest, latest_at = terminal, ended
    state[:] = start_at, first_at, latest, latest_at, terminal, ended


def _merged(texts: list[str]) -> str | None:
    """The condition of an access: the ``OR`` of its distinct conditions (None: whole)."""
    if len(texts) <= 1:
        return texts[0] if texts else None
    return canonical(any_of_json([json.loads(text) for text in sorted(texts)]))
