"""``ingest()``: OpenLineage RunEvents from JSON Lines files into the lineage database.

Each event is read, validated and stored on its own: a line that is not a valid RunEvent is
reported with its file and line and leaves nothing behind (each event is stored under a
savepoint), and an event already stored (same canonical JSON) changes nothing. A run's events
are merged whatever order they come in: its datasets are the union of its events' datasets; the
condition of a dataset is the ``OR`` of the distinct subset conditions its events gave (an event
without the facet does not override one with it: this package's START events list outputs before
their partitions are known); a dataset no event gave a subset facet is accessed whole.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from json.encoder import encode_basestring as _string  # json.dumps of a str, non-ASCII kept
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from openlineage_subset._evaluate import _guessed_type
from openlineage_subset._issues import SubsetDocumentError
from openlineage_subset._validate import validate
from openlineage_subset.lineage._store import LineageStore
from openlineage_subset.lineage._time import normal_time

_SUFFIXES = (".jsonl", ".json", ".ndjson")
_TERMINAL = ("COMPLETE", "FAIL", "ABORT")
_EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER")
_BATCH = 500  # events per transaction: one fsync per batch, not per event
_PROGRESS_BYTES = 8 * 1024 * 1024  # below this much input, no progress bar
_PLACES = (("inputs", "inputFacets", "input"), ("outputs", "outputFacets", "output"))


@dataclasses.dataclass(frozen=True)
class IngestProblem:
    """An input line (or file) that was not stored, and why."""

    source: str
    line: int | None
    message: str

    @property
    def where(self) -> str:
        return self.source if self.line is None else f"{self.source}:{self.line}"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def as_json(self) -> dict[str, Any]:
        return {"file": self.source, "line": self.line, "message": self.message}


@dataclasses.dataclass
class IngestReport:
    """What :func:`ingest` did: events stored, duplicates, invalid lines, skipped events."""

    stored: int = 0
    duplicates: int = 0
    invalid: int = 0
    skipped: int = 0
    unreadable: int = 0
    """Inputs that could not be read at all: missing, unreadable, a folder without events."""
    runs: int = 0
    problems: list[IngestProblem] = dataclasses.field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "stored": self.stored,
            "duplicates": self.duplicates,
            "invalid": self.invalid,
            "skipped": self.skipped,
            "unreadable": self.unreadable,
            "runs": self.runs,
            "problems": [problem.as_json() for problem in self.problems],
        }

    def summary(self) -> str:
        return (
            f"{self.stored} event(s) stored, {self.duplicates} already there, "
            f"{self.invalid} invalid, {self.skipped} not run events (skipped), "
            f"{self.unreadable} input(s) unreadable; "
            f"{self.runs} run(s) updated"
        )


def ingest(
    paths: Iterable[str | os.PathLike[str]],
    db: str | os.PathLike[str] = "lineage.db",
    *,
    progress: TextIO | None = None,
) -> IngestReport:
    """Store the RunEvents of JSON Lines files (or folders of them) in the database ``db``.

    Folders are read recursively (``*.jsonl``, ``*.json``, ``*.ndjson``). Each line is one
    event; a ``.json`` file whose first line is not a JSON value by itself is one event or an
    array of them. Lines are read one at a time, never a whole JSON Lines file. DatasetEvents
    and JobEvents are skipped and counted. ``progress``: where to draw a progress bar (only
    when it is a terminal and the input is large); ``sys.stderr`` by default.

    >>> import json, os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> event = {"eventType": "START", "eventTime": "2024-10-15T10:00:00Z",
    ...     "producer": "https://example.com/p",
    ...     "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    ...     "run": {"runId": "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11"},
    ...     "job": {"namespace": "demo", "name": "daily"}}
    >>> with open(os.path.join(folder, "events.jsonl"), "w") as out:
    ...     _ = out.write(json.dumps(event) + "\\n" + "{oops\\n")
    >>> report = ingest([folder], os.path.join(folder, "lineage.db"))
    >>> report.stored, report.invalid, report.problems[0].line
    (1, 1, 2)
    >>> ingest([folder], os.path.join(folder, "lineage.db")).duplicates
    1
    """
    files, report = _input_files(paths)
    total = sum(size for _, size in files)
    stream = sys.stderr if progress is None else progress
    bar = _Progress(stream, total) if total >= _PROGRESS_BYTES and _is_terminal(stream) else None
    runs: set[str] = set()
    done = 0
    with LineageStore.open(db, create=True) as store:
        writer = _Writer(store.connection)
        try:
            for file, size in files:
                for item in _events(file, report):
                    if isinstance(item, int):
                        if bar is not None:
                            bar.show(done + item, report.stored)
                        continue
                    _take(writer, report, runs, item)
                done += size
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            if bar is not None:
                bar.clear()
    report.runs = len(runs)
    return report


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _input_files(
    paths: Iterable[str | os.PathLike[str]],
) -> tuple[list[tuple[Path, int]], IngestReport]:
    report = IngestReport()
    files: list[tuple[Path, int]] = []
    if isinstance(paths, (str, os.PathLike)):
        raise TypeError("ingest() takes a list of paths, not a single path")
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(
                Path(folder, name)
                for folder, _, names in os.walk(path)
                for name in names
                if name.endswith(_SUFFIXES)
            )
            if not found:
                _unreadable(report, str(path), "folder holds no .jsonl, .json or .ndjson file")
            files.extend((file, _size(file)) for file in found)
        elif path.is_file():
            files.append((path, _size(path)))
        else:
            _unreadable(report, str(path), "no such file or folder")
    return files, report


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class _Duplicate(Exception):
    pass


def _strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        repeated = next(key for key, count in Counter(k for k, _ in pairs).items() if count > 1)
        raise ValueError(f"the key {repeated!r} appears more than once in one object")
    return result


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_strict_object, parse_constant=_no_constant)


def _parse(text: str) -> Any:
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not valid JSON: {error.msg} (column {error.colno})") from None
    except RecursionError:
        raise ValueError("not usable JSON: nested too deeply") from None


Item = tuple[str, int | None, Any] | int


def _events(path: Path, report: IngestReport) -> Iterator[Item]:
    """The documents of one file as (source, line, document); ints report bytes read so far."""
    source = str(path)
    try:
        stream = path.open("rb")
    except OSError as error:
        _unreadable(report, source, f"cannot read: {error.strerror}")
        return
    with stream:
        try:
            yield from _lines(source, stream, path.suffix == ".json", report)
        except OSError as error:
            _unreadable(report, source, f"cannot read: {error.strerror}")


def _lines(
    source: str, stream: BinaryIO, maybe_whole: bool, report: IngestReport
) -> Iterator[Item]:
    number = 0
    offset = 0
    first = True
    for read in stream:
        number += 1
        offset += len(read)
        raw = read[3:] if number == 1 and read.startswith(b"\xef\xbb\xbf") else read
        if not raw.strip():
            continue
        try:
            document = _parse(raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            _invalid(report, source, number, f"not UTF-8 text ({error.reason})")
            continue
        except ValueError as problem:
            if first and maybe_whole:
                yield from _whole(source, raw + stream.read(), report)
                return
            _invalid(report, source, number, str(problem))
            continue
        first = False
        yield source, number, document
        if number % 256 == 0:
            yield offset


def _whole(source: str, data: bytes, report: IngestReport) -> Iterator[Item]:
    """A ``.json`` file holding one document over several lines: an event or an array."""
    try:
        document = _parse(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        _invalid(report, source, None, f"not UTF-8 text ({error.reason})")
        return
    except ValueError as problem:
        _invalid(report, source, None, str(problem))
        return
    if isinstance(document, list):
        for index, item in enumerate(document):
            yield f"{source}[{index}]", None, item
    else:
        yield source, None, document


def _unreadable(report: IngestReport, source: str, message: str) -> None:
    report.unreadable += 1
    report.problems.append(IngestProblem(source, None, message))


def _invalid(report: IngestReport, source: str, line: int | None, message: str) -> None:
    report.invalid += 1
    report.problems.append(IngestProblem(source, line, message))


def _take(
    writer: _Writer,
    report: IngestReport,
    runs: set[str],
    item: tuple[str, int | None, Any],
) -> None:
    source, line, document = item
    if (
        isinstance(document, Mapping)
        and "run" not in document
        and ("dataset" in document or "job" in document)
    ):
        report.skipped += 1  # a DatasetEvent or JobEvent: no run to attach it to
        return
    problem = _problem(document)
    if problem is not None:
        _invalid(report, source, line, problem)
        return
    where = source if line is None else f"{source}:{line}"
    try:
        stored = writer.store(document, where)
    except (sqlite3.IntegrityError, ValueError, TypeError) as error:
        _invalid(report, source, line, f"not stored: {error}")
        return
    if stored:
        report.stored += 1
        runs.add(document["run"]["runId"])
    else:
        report.duplicates += 1


def _problem(document: Any) -> str | None:
    """Why ``document`` is not a RunEvent this can store, or None."""
    if not isinstance(document, Mapping):
        return f"expected an OpenLineage RunEvent (a JSON object), got {type(document).__name__}"
    try:
        issues = validate(document)
    except SubsetDocumentError as error:  # pragma: no cover - validate() reports, not raises
        return str(error)
    if issues:
        more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
        return f"invalid RunEvent: {issues[0]}{more}"
    run, job = document.get("run"), document.get("job")
    if not isinstance(run, Mapping) or not isinstance(run.get("runId"), str):
        return "invalid RunEvent: $.run.runId: missing; lineage needs the run id"
    if document.get("eventType") not in _EVENT_TYPES:
        return (
            f"invalid RunEvent: $.eventType: {document.get('eventType')!r}; lineage needs one "
            f"of {', '.join(_EVENT_TYPES)}"
        )
    if normal_time(document.get("eventTime")) is None:
        return (
            f"invalid RunEvent: $.eventTime: {document.get('eventTime')!r} is not an ISO-8601 "
            "time such as '2024-10-15T10:00:00Z'"
        )
    if not isinstance(job, Mapping) or not all(
        isinstance(job.get(key), str) for key in ("namespace", "name")
    ):
        return "invalid RunEvent: $.job: lineage needs the job's namespace and name"
    return None


def canonical(value: Any) -> str:
    """JSON text with sorted keys and no spaces: one spelling per value.

    >>> canonical({"b": 1, "a": [True, None]})
    '{"a":[true,null],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class _Writer:
    """Stores events, one savepoint each, committing every ``_BATCH`` events."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.db = connection
        self.pending = 0
        self.dataset_ids: dict[tuple[str, str], int] = {}
        self.catalog: set[tuple[Any, ...]] = set()
        """Dataset ids, partition columns and kinds stored in this transaction or before;
        cleared when an event is rolled back, since what it added is gone."""
        self.db.execute("BEGIN IMMEDIATE")
        self.open = True

    def store(self, event: Mapping[str, Any], where: str) -> bool:
        """Store one valid RunEvent; False when it was already stored."""
        self.db.execute("SAVEPOINT event")
        try:
            stored = self._store(event, where)
        except BaseException:
            self.db.execute("ROLLBACK TO event")
            self.db.execute("RELEASE event")
            self.dataset_ids.clear()
            self.catalog.clear()
            raise
        self.db.execute("RELEASE event")
        self.pending += 1
        if self.pending >= _BATCH:
            self.db.execute("COMMIT")
            self.db.execute("BEGIN IMMEDIATE")
            self.pending = 0
        return stored

    def commit(self) -> None:
        if self.open:
            self.db.execute("COMMIT")
            self.open = False

    def rollback(self) -> None:
        if self.open:
            self.db.execute("ROLLBACK")
            self.open = False

    def _store(self, event: Mapping[str, Any], where: str) -> bool:
        digest = hashlib.sha256(canonical(event).encode("utf-8")).hexdigest()
        run_id: str = event["run"]["runId"]
        event_type: str = event["eventType"]
        event_time = normal_time(event["eventTime"])
        assert event_time is not None  # checked by _problem
        if self.db.execute("SELECT 1 FROM events WHERE digest = ?", (digest,)).fetchone():
            return False
        self._merge_run(run_id, event["job"], event_type, event_time)
        self.db.execute(
            "INSERT INTO events (digest, run_id, event_type, event_time, source) "
            "VALUES (?, ?, ?, ?, ?)",
            (digest, run_id, event_type, event_time, where),
        )
        for list_key, facets_key, direction in _PLACES:
            for dataset in event.get(list_key) or ():
                self._access(run_id, dataset, facets_key, direction)
        return True

    def _merge_run(
        self, run_id: str, job: Mapping[str, Any], event_type: str, event_time: str
    ) -> None:
        row = self.db.execute(
            "SELECT start_event_at, first_event_at, latest_state, latest_state_at, "
            "terminal_state, ended_at FROM runs WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            start_at, first_at, state, state_at, terminal, ended = (
                None,
                event_time,
                None,
                None,
                None,
                None,
            )
        else:
            start_at, first_at, state, state_at, terminal, ended = row
        first_at = min(first_at, event_time)
        if event_type == "START":
            start_at = event_time if start_at is None else min(start_at, event_time)
        if event_type in _TERMINAL:
            # The latest terminal event wins; ties go to the state named last alphabetically,
            # so that the outcome never depends on the order the events were read in.
            if ended is None or (event_time, event_type) > (ended, terminal):
                terminal, ended = event_type, event_time
        elif state_at is None or (event_time, event_type) > (state_at, state):
            state, state_at = event_type, event_time
        if state is None:  # only terminal events so far: nothing ran before the end
            state, state_at = terminal, ended
        status = terminal or state
        started = start_at or first_at
        if row is None:
            self.db.execute(
                "INSERT INTO runs (run_id, job_namespace, job_name, status, started_at, "
                "ended_at, start_event_at, first_event_at, latest_state, latest_state_at, "
                "terminal_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    job["namespace"],
                    job["name"],
                    status,
                    started,
                    ended,
                    start_at,
                    first_at,
                    state,
                    state_at,
                    terminal,
                ),
            )
        else:
            self.db.execute(
                "UPDATE runs SET status = ?, started_at = ?, ended_at = ?, start_event_at = ?, "
                "first_event_at = ?, latest_state = ?, latest_state_at = ?, terminal_state = ? "
                "WHERE run_id = ?",
                (status, started, ended, start_at, first_at, state, state_at, terminal, run_id),
            )

    def _access(
        self, run_id: str, dataset: Mapping[str, Any], facets_key: str, direction: str
    ) -> None:
        dataset_id = self._dataset_id(dataset["namespace"], dataset["name"])
        self.db.execute(
            "INSERT OR IGNORE INTO accesses (run_id, dataset_id, direction) VALUES (?, ?, ?)",
            (run_id, dataset_id, direction),
        )
        facets = dataset.get(facets_key)
        facet = facets.get("subset") if isinstance(facets, Mapping) else None
        condition = _condition_of(facet)
        if condition is None:
            return  # no facet: says nothing about the subset, and overrides no other event
        access_id = self.db.execute(
            "SELECT access_id FROM accesses WHERE run_id = ? AND dataset_id = ? AND direction = ?",
            (run_id, dataset_id, direction),
        ).fetchone()[0]
        text = canonical(condition)
        inserted = self.db.execute(
            "INSERT OR IGNORE INTO access_conditions (access_id, condition) VALUES (?, ?)",
            (access_id, text),
        ).rowcount
        if not inserted:
            return  # a condition stored before: its partitions were recorded with it
        texts = [
            row[0]
            for row in self.db.execute(
                "SELECT condition FROM access_conditions WHERE access_id = ? ORDER BY condition",
                (access_id,),
            )
        ]
        if texts == [text]:  # the first condition: no OR to make
            merged_text, lists = text, _only_lists(condition)
        else:
            merged = any_of_json([json.loads(item) for item in texts])
            merged_text, lists = canonical(merged), _only_lists(merged)
        self.db.execute(
            "UPDATE accesses SET condition = ?, listed = ? WHERE access_id = ?",
            (merged_text, int(lists), access_id),
        )
        self._partitions(dataset_id, access_id, condition)

    def _partitions(self, dataset_id: int, access_id: int, condition: Any) -> None:
        """Record the partitions a new condition of an access lists, and their columns."""
        rows = []
        catalog = []
        for dimensions, identifier in listed_partitions(condition):
            rows.append((dataset_id, _canonical_dimensions(dimensions), identifier))
            shape = tuple(sorted(dimensions))
            if (dataset_id, shape) not in self.catalog:
                self.catalog.add((dataset_id, shape))
                catalog.append((dataset_id, canonical(list(shape))))
            for column, value in dimensions.items():
                kind = (dataset_id, column, "null" if value is None else _kind(value))
                if kind not in self.catalog:
                    self.catalog.add(kind)
                    self.db.execute(
                        "INSERT OR IGNORE INTO partition_kinds (dataset_id, column_name, kind) "
                        "VALUES (?, ?, ?)",
                        kind,
                    )
        self.db.executemany(
            "INSERT INTO partitions (dataset_id, dimensions, identifier) VALUES (?, ?, ?) "
            "ON CONFLICT (dataset_id, dimensions) DO UPDATE SET "
            "identifier = coalesce(partitions.identifier, excluded.identifier)",
            rows,
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO access_partitions (dataset_id, dimensions, access_id) "
            "VALUES (?, ?, ?)",
            [(dataset_id, dimensions, access_id) for _, dimensions, _ in rows],
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO partition_columns (dataset_id, columns) VALUES (?, ?)",
            catalog,
        )

    def _dataset_id(self, namespace: str, name: str) -> int:
        key = (namespace, name)
        found = self.dataset_ids.get(key)
        if found is None:
            self.db.execute(
                "INSERT OR IGNORE INTO datasets (namespace, name) VALUES (?, ?)", (namespace, name)
            )
            found = self.dataset_ids[key] = self.db.execute(
                "SELECT dataset_id FROM datasets WHERE namespace = ? AND name = ?", key
            ).fetchone()[0]
        return found


@functools.lru_cache(maxsize=65536)
def _kind(value: str) -> str:
    """How :func:`~openlineage_subset.partition_overlap` types a partition value."""
    return _guessed_type(value)


def _canonical_dimensions(dimensions: dict[str, str | None]) -> str:
    """:func:`canonical` of a partition's dimensions (string or null values), without the
    general encoder: a partition list of thousands of partitions is recorded partition by
    partition."""
    return (
        "{"
        + ",".join(
            f"{_string(name)}:{'null' if value is None else _string(value)}"
            for name, value in sorted(dimensions.items())
        )
        + "}"
    )


def _condition_of(facet: object) -> Mapping[str, Any] | None:
    if not isinstance(facet, Mapping):
        return None
    for key in ("inputCondition", "outputCondition"):
        condition = facet.get(key)
        if isinstance(condition, Mapping):
            return condition
    return None


def any_of_json(conditions: list[Any]) -> Any:
    """One condition, or a balanced ``OR`` of several (JSON).

    >>> any_of_json([{"type": "location", "locations": ["a"]}])["type"]
    'location'
    >>> any_of_json([{"n": 1}, {"n": 2}, {"n": 3}])["right"]["operator"]
    'OR'
    """
    if len(conditions) == 1:
        return conditions[0]
    middle = len(conditions) // 2
    return {
        "type": "binary",
        "operator": "OR",
        "left": any_of_json(conditions[:middle]),
        "right": any_of_json(conditions[middle:]),
    }


def _only_lists(condition: Any) -> bool:
    """Whether a condition is partition lists joined by OR, each partition's dimensions a
    non-empty object of string or null values: all of which :func:`listed_partitions` lists.

    >>> _only_lists({"type": "partition", "partitions": [{"dimensions": {"day": "1"}}]})
    True
    >>> _only_lists({"type": "binary", "operator": "AND", "left": {}, "right": {}})
    False
    """
    stack = [condition]
    while stack:
        node = stack.pop()
        if not isinstance(node, Mapping):
            return False
        if node.get("type") == "binary" and node.get("operator") == "OR":
            stack.extend((node.get("right"), node.get("left")))
            continue
        items = node.get("partitions")
        if node.get("type") != "partition" or not isinstance(items, list):
            return False
        for item in items:
            dimensions = item.get("dimensions") if isinstance(item, Mapping) else None
            if not isinstance(dimensions, Mapping) or not dimensions:
                return False
            if not all(value is None or isinstance(value, str) for value in dimensions.values()):
                return False
    return True


def listed_partitions(condition: Any) -> Iterator[tuple[dict[str, str | None], str | None]]:
    """(dimensions, identifier) of each partition a condition lists, anywhere in it.

    >>> list(listed_partitions({"type": "partition", "partitions": [
    ...     {"dimensions": {"day": "2024-10-15"}, "identifier": "day=2024-10-15"}]}))
    [({'day': '2024-10-15'}, 'day=2024-10-15')]
    """
    stack = [condition]
    while stack:
        node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        if node.get("type") == "binary":
            stack.extend((node.get("right"), node.get("left")))
        elif node.get("type") == "partition" and isinstance(node.get("partitions"), list):
            for item in node["partitions"]:
                dimensions = item.get("dimensions") if isinstance(item, Mapping) else None
                if not isinstance(dimensions, Mapping) or not dimensions:
                    continue
                if not all(
                    value is None or isinstance(value, str) for value in dimensions.values()
                ):
                    continue
                identifier = item.get("identifier")
                yield dict(dimensions), identifier if isinstance(identifier, str) else None


class _Progress:
    """A one-line progress bar on a terminal: bytes read of the total, and events stored."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = max(total, 1)
        self.last = 0.0

    def show(self, done: int, stored: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.2:
            return
        self.last = now
        share = min(done / self.total, 1.0)
        filled = int(share * 30)
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (30 - filled)}] {share:4.0%}  {stored} event(s) stored"
        )
        self.stream.flush()

    def clear(self) -> None:
        self.stream.write("\r" + " " * 70 + "\r")
        self.stream.flush()
