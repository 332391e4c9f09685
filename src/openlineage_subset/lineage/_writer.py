"""Ingest's storing side: the checked events of a chunk into the database, a few statements each.

A chunk's events are stored together: one query finds those already stored, one the runs they
merge into, and each table gets its new rows in one ``executemany``. Ids of new datasets,
accesses and partitions are given here (this connection holds the write lock), so that no row
has to be read back after it is written. Should storing a chunk fail, it is undone and its events
are stored one at a time, so that only the event that fails is left out.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from openlineage_subset.lineage._events import (
    EVENT,
    Condition,
    any_of_json,
    canonical,
)

_TERMINAL = ("COMPLETE", "FAIL", "ABORT")
_COMMIT_EVENTS = 2000  # events per transaction: few syncs to disk, and a bounded journal
# Known ids, so that an event naming a dataset or partition seen lately costs no query; cleared
# when full, a few MB at most.
_CACHED_IDS = 16384
_NEW, _CHANGED, _SAME = 0, 1, 2  # an access: made by this chunk, given a condition, unchanged

Outcome = tuple[Any, ...]
Counter = Callable[[Outcome, bool | str], None]


class Writer:
    """Stores the outcomes of checked chunks, in order; :meth:`commit` at the end."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.db = connection
        self.dataset_ids: dict[tuple[str, str], int] = {}
        self.partition_ids: dict[tuple[int, str], int] = {}
        self.unnamed: set[int] = set()
        """Partitions among ``partition_ids`` stored without an identifier."""
        self.catalog: set[tuple[Any, ...]] = set()
        """(dataset id, columns) and (dataset id, column, kind) stored."""
        self.pending = 0
        self.open = False
        self._begin()

    def store(self, outcomes: list[Outcome], conditions: list[Condition], count: Counter) -> None:
        """Store the events among a chunk's outcomes; ``count`` is told each outcome in order,
        with True for an event stored, False for one already there, or why it was not stored."""
        events = [outcome for outcome in outcomes if outcome[0] == EVENT]
        self.db.execute("SAVEPOINT chunk")
        try:
            stored = iter(self._store(events, conditions))
        except (sqlite3.IntegrityError, ValueError, TypeError):
            self._undo("chunk")
            self._one_by_one(outcomes, conditions, count)
        else:
            self.db.execute("RELEASE chunk")
            for outcome in outcomes:
                count(outcome, next(stored) if outcome[0] == EVENT else False)
        self.pending += len(events)
        if self.pending >= _COMMIT_EVENTS:
            self.db.execute("COMMIT")
            self.open = False
            self._begin()

    def commit(self) -> None:
        if self.open:
            self.db.execute("COMMIT")
            self.open = False

    def rollback(self) -> None:
        if self.open:
            self.db.execute("ROLLBACK")
            self.open = False

    def _begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self.open = True
        self.pending = 0
        self._read_next_ids()

    def _read_next_ids(self) -> None:
        # Read at each transaction's start: another process may have written in between.
        def after(column: str, table: str) -> int:
            return (
                int(
                    self.db.execute(f"SELECT coalesce(max({column}), 0) FROM {table}").fetchone()[0]
                )
                + 1
            )

        self.next_dataset = after("dataset_id", "datasets")
        self.next_access = after("access_id", "accesses")
        self.next_partition = after("partition_id", "partitions")

    def _undo(self, savepoint: str) -> None:
        self.db.execute(f"ROLLBACK TO {savepoint}")
        self.db.execute(f"RELEASE {savepoint}")
        # What the undone statements added is gone: forget it.
        self.dataset_ids.clear()
        self.partition_ids.clear()
        self.unnamed.clear()
        self.catalog.clear()
        self._read_next_ids()

    def _one_by_one(
        self, outcomes: list[Outcome], conditions: list[Condition], count: Counter
    ) -> None:
        for outcome in outcomes:
            if outcome[0] != EVENT:
                count(outcome, False)
                continue
            self.db.execute("SAVEPOINT event")
            try:
                (stored,) = self._store([outcome], conditions)
            except (sqlite3.IntegrityError, ValueError, TypeError) as error:
                self._undo("event")
                count(outcome, f"not stored: {error}")
            else:
                self.db.execute("RELEASE event")
                count(outcome, stored)

    def _store(self, events: list[Outcome], conditions: list[Condition]) -> list[bool]:
        """Store the events; for each, whether it was new."""
        known = set(
            self._each("SELECT digest FROM events WHERE digest IN {}", [e[3] for e in events])
        )
        fresh = []
        new = []
        for event in events:
            is_new = event[3] not in known
            if is_new:
                known.add(event[3])
                fresh.append(event)
            new.append(is_new)
        if fresh:
            merged = self._runs(fresh)
            self.db.executemany(
                "INSERT INTO events (digest, run_id, event_type, event_time, source) "
                "VALUES (?, ?, ?, ?, ?)",
                [(e[3], e[4], e[7], e[8], _where(e[1], e[2])) for e in fresh],
            )
            self._accesses(fresh, [run for run, state in merged.items() if state[8]], conditions)
        return new

    def _each(self, query: str, values: Iterable[Any]) -> list[Any]:
        """The first column of ``query``'s rows, its ``{}`` the given values (as an IN list)."""
        listed = json.dumps(list(values))
        found = self.db.execute(query.format("(SELECT value FROM json_each(?))"), (listed,))
        return [row[0] for row in found]

    def _runs(self, events: list[Outcome]) -> dict[str, list[Any]]:
        """Merge the events into their runs, whatever order they come in; the runs' states
        (job namespace and name, then what ``runs`` merges from, then whether it was there)."""
        states: dict[str, list[Any]] = {}
        for row in self.db.execute(
            "SELECT run_id, job_namespace, job_name, start_event_at, first_event_at, "
            "latest_state, latest_state_at, terminal_state, ended_at FROM runs "
            "WHERE run_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(dict.fromkeys(event[4] for event in events))),),
        ):
            states[row[0]] = [*row[1:], True]
        for _, _, _, _, run_id, namespace, name, event_type, event_time, _ in events:
            state = states.get(run_id)
            if state is None:
                state = states[run_id] = [
                    namespace,
                    name,
                    None,
                    event_time,
                    None,
                    None,
                    None,
                    None,
                    False,
                ]
            _merge(state, event_type, event_time)
        new, old = [], []
        for run_id, state in states.items():
            namespace, name, start_at, first_at, latest, latest_at, terminal, ended, there = state
            status, started = terminal or latest, start_at or first_at
            if there:
                old.append(
                    (
                        status,
                        started,
                        ended,
                        start_at,
                        first_at,
                        latest,
                        latest_at,
                        terminal,
                        run_id,
                    )
                )
            else:
                new.append(
                    (
                        run_id,
                        namespace,
                        name,
                        status,
                        started,
                        ended,
                        start_at,
                        first_at,
                        latest,
                        latest_at,
                        terminal,
                    )
                )
        self.db.executemany(
            "INSERT INTO runs (run_id, job_namespace, job_name, status, started_at, "
            "ended_at, start_event_at, first_event_at, latest_state, latest_state_at, "
            "terminal_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            new,
        )
        self.db.executemany(
            "UPDATE runs SET status = ?, started_at = ?, ended_at = ?, start_event_at = ?, "
            "first_event_at = ?, latest_state = ?, latest_state_at = ?, terminal_state = ? "
            "WHERE run_id = ?",
            old,
        )
        return states

    def _dataset_ids(self, events: list[Outcome]) -> dict[tuple[str, str], int]:
        ids = self.dataset_ids
        if len(ids) > _CACHED_IDS:
            ids.clear()
        missing = list(
            dict.fromkeys(
                (namespace, name)
                for event in events
                for namespace, name, _, _ in event[9]
                if (namespace, name) not in ids
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
            rows = []
            for key in missing:
                if key not in ids:
                    ids[key] = self.next_dataset
                    rows.append((self.next_dataset, *key))
                    self.next_dataset += 1
            self.db.executemany(
                "INSERT INTO datasets (dataset_id, namespace, name) VALUES (?, ?, ?)", rows
            )
        return ids

    def _accesses(
        self, events: list[Outcome], old_runs: list[str], conditions: list[Condition]
    ) -> None:
        """The events' reads and writes, the conditions new to each, and what those list."""
        dataset_ids = self._dataset_ids(events)
        accesses: dict[tuple[str, int, str], list[Any]] = {}
        if old_runs:
            by_id = {}
            for access_id, run_id, dataset_id, direction, listed in self.db.execute(
                "SELECT access_id, run_id, dataset_id, direction, listed FROM accesses "
                "WHERE run_id IN (SELECT value FROM json_each(?))",
                (json.dumps(old_runs),),
            ):
                by_id[access_id] = accesses[run_id, dataset_id, direction] = [
                    access_id,
                    [],
                    bool(listed),
                    _SAME,
                ]
            for access_id, text in self.db.execute(
                "SELECT access_id, condition FROM access_conditions "
                "WHERE access_id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(by_id)),),
            ):
                by_id[access_id][1].append(text)
        added = []  # (access id, dataset id, condition index) of each condition new to an access
        for event in events:
            run_id = event[4]
            for namespace, name, direction, index in event[9]:
                dataset_id = dataset_ids[namespace, name]
                access = accesses.get((run_id, dataset_id, direction))
                if access is None:
                    access = accesses[run_id, dataset_id, direction] = [
                        self.next_access,
                        [],
                        False,
                        _NEW,
                    ]
                    self.next_access += 1
                if index < 0:
                    continue  # no facet: says nothing about the subset, and overrides nothing
                text, lists = conditions[index][:2]
                texts = access[1]
                if text in texts:
                    continue  # a condition stored before: its partitions were recorded with it
                # A condition only lists partitions when each of those it is the OR of does.
                access[2] = (access[2] or not texts) and lists
                texts.append(text)
                if access[3] == _SAME:
                    access[3] = _CHANGED
                added.append((access[0], dataset_id, index))
        new, changed = [], []
        for (run_id, dataset_id, direction), (access_id, texts, listed, state) in accesses.items():
            if state == _NEW:
                new.append((access_id, run_id, dataset_id, direction, _merged(texts), int(listed)))
            elif state == _CHANGED:
                changed.append((_merged(texts), int(listed), access_id))
        self.db.executemany(
            "INSERT INTO accesses (access_id, run_id, dataset_id, direction, condition, listed) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            new,
        )
        self.db.executemany(
            "UPDATE accesses SET condition = ?, listed = ? WHERE access_id = ?", changed
        )
        self.db.executemany(
            "INSERT INTO access_conditions (access_id, condition) VALUES (?, ?)",
            [(access_id, conditions[index][0]) for access_id, _, index in added],
        )
        self._partitions(added, conditions)

    def _partitions(self, added: list[tuple[int, int, int]], conditions: list[Condition]) -> None:
        """Record the partitions the conditions new to accesses list, and their columns."""
        ids = self._partition_ids(
            (dataset_id, dimensions)
            for _, dataset_id, index in added
            for dimensions, _ in conditions[index][2]
        )
        unnamed = self.unnamed
        catalog = self.catalog
        made: dict[int, list[Any]] = {}
        named, links, columns, kinds = [], [], [], []
        for access_id, dataset_id, index in added:
            _, _, rows, shapes, column_kinds = conditions[index]
            for dimensions, identifier in rows:
                partition_id = ids.get((dataset_id, dimensions))
                if partition_id is None:
                    partition_id = ids[dataset_id, dimensions] = self.next_partition
                    self.next_partition += 1
                    made[partition_id] = [dataset_id, dimensions, identifier, partition_id]
                    if identifier is None:
                        unnamed.add(partition_id)
                elif identifier is not None and partition_id in unnamed:
                    unnamed.discard(partition_id)  # the first identifier given is kept
                    if partition_id in made:
                        made[partition_id][2] = identifier
                    else:
                        named.append((identifier, partition_id))
                links.append((partition_id, access_id))
            for shape in shapes:
                if (dataset_id, shape) not in catalog:
                    catalog.add((dataset_id, shape))
                    columns.append((dataset_id, shape))
            for column, kind in column_kinds:
                if (dataset_id, column, kind) not in catalog:
                    catalog.add((dataset_id, column, kind))
                    kinds.append((dataset_id, column, kind))
        self.db.executemany(
            "INSERT INTO partitions (dataset_id, dimensions, identifier, partition_id) "
            "VALUES (?, ?, ?, ?)",
            made.values(),
        )
        self.db.executemany(
            "UPDATE partitions SET identifier = ? WHERE partition_id = ? AND identifier IS NULL",
            named,
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO access_partitions (partition_id, access_id) VALUES (?, ?)",
            links,
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO partition_columns (dataset_id, columns) VALUES (?, ?)",
            columns,
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO partition_kinds (dataset_id, column_name, kind) "
            "VALUES (?, ?, ?)",
            kinds,
        )
        if len(catalog) > _CACHED_IDS:
            catalog.clear()

    def _partition_ids(self, keys: Iterable[tuple[int, str]]) -> dict[tuple[int, str], int]:
        """Known partition ids, with those of the given partitions that are stored."""
        ids = self.partition_ids
        if len(ids) > _CACHED_IDS:
            ids.clear()
            self.unnamed.clear()
        missing: dict[int, dict[str, None]] = {}
        for key in keys:
            if key not in ids:
                missing.setdefault(key[0], {})[key[1]] = None
        for dataset_id, wanted in missing.items():
            for dimensions, partition_id, unnamed in self.db.execute(
                "SELECT dimensions, partition_id, identifier IS NULL FROM partitions "
                "WHERE dataset_id = ? AND dimensions IN (SELECT value FROM json_each(?))",
                (dataset_id, json.dumps(list(wanted))),
            ):
                ids[dataset_id, dimensions] = partition_id
                if unnamed:
                    self.unnamed.add(partition_id)
        return ids


def _where(source: str, line: int | None) -> str:
    return source if line is None else f"{source}:{line}"


def _merge(state: list[Any], event_type: str, event_time: str) -> None:
    """Merge one event into a run's state (see :meth:`Writer._runs`)."""
    start_at, first_at, latest, latest_at, terminal, ended = state[2:8]
    first_at = min(first_at, event_time)
    if event_type == "START":
        start_at = event_time if start_at is None else min(start_at, event_time)
    if event_type in _TERMINAL:
        # The latest terminal event wins; ties go to the state named last alphabetically,
        # so that the outcome never depends on the order the events were read in.
        if ended is None or (event_time, event_type) > (ended, terminal):
            terminal, ended = event_type, event_time
    elif latest_at is None or (event_time, event_type) > (latest_at, latest):
        latest, latest_at = event_type, event_time
    if latest is None:  # only terminal events so far: nothing ran before the end
        latest, latest_at = terminal, ended
    state[2:8] = start_at, first_at, latest, latest_at, terminal, ended


def _merged(texts: list[str]) -> str | None:
    """The condition of an access: the ``OR`` of its distinct conditions (None: whole)."""
    if len(texts) <= 1:
        return texts[0] if texts else None
    return canonical(any_of_json([json.loads(text) for text in sorted(texts)]))
