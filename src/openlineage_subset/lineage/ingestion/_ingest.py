"""``ingest()``: OpenLineage RunEvents from JSON Lines files into the lineage database.

Each event is read and validated on its own: a line that is not a valid RunEvent is reported
with its file and line and leaves nothing behind, and an event already stored (same canonical
JSON) changes nothing. A run's events are merged whatever order they come in: its datasets are
the union of its events' datasets; the condition of a dataset is the ``OR`` of the distinct subset
conditions its events gave (an event without the facet does not override one with it: this
package's START events list outputs before their partitions are known); a dataset no event gave
a subset facet is accessed whole.

A line is read whole only when it is at most the line limit (``max_line_bytes``, else
``$OL_SUBSET_MAX_LINE_BYTES``, else 16 MiB; :mod:`openlineage_subset._lines`): a longer one is
an invalid line, skipped, and the next one is read. The lines are read in chunks of about a
megabyte. Each chunk is checked (:mod:`._checker`: parsed,
validated, turned into rows), in worker processes for a large input, and stored in input order by
this process alone (:mod:`._writer`: a few statements per chunk; an event is stored whole or not
at all), so that the outcome and the order of the problems never depend on how many workers ran.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from openlineage_subset import (
    LARGEST_LINE_LIMIT,
    LongLine,
    UnusableJson,
    input_start,
    is_blank,
    max_line_bytes,
    parse_json,
    read_at_most,
    read_lines,
    too_big,
)
from openlineage_subset.lineage.ingestion._checker import check_chunk
from openlineage_subset.lineage.ingestion._checkpoints import Checkpoints
from openlineage_subset.lineage.ingestion._shapes import (
    AlreadyStored,
    Checked,
    CheckedEvent,
    Condition,
    EventOutcome,
    Invalid,
    Item,
    Line,
    Skipped,
    Stored,
    Unreadable,
    Whole,
)
from openlineage_subset.lineage.ingestion._workers import Worker, Workers
from openlineage_subset.lineage.ingestion._writer import Writer
from openlineage_subset.lineage.store import (
    LOCK_WAIT,
    LineageDatabaseError,
    LineageStore,
    groups_directories,
    is_busy,
    locked_message,
)

_SUFFIXES = (".jsonl", ".json", ".ndjson")
_STDIN = Path("-")
"""Stands for standard input among the files (told by identity, not by name)."""
_STDIN_NAME = "<stdin>"
_JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
"""Files read as JSON Lines only; any other is one document (or an array of them) when its
first line is not a JSON value by itself, or that line is an array and no other follows: the
rule of ``validate``."""
_PROGRESS_BYTES = 8 * 1024 * 1024  # below this much input, no progress bar and no workers
_CHUNK_BYTES = 1024 * 1024  # lines checked together: cheap to send to a worker, and to hold
# chunks given to a worker at a time: it never waits for the next one while this process
# stores a chunk and checks one itself (3: +2% events/s against 2 with one worker, alternated)
_AHEAD = 3
_CACHE_KIB = 32 * 1024  # SQLite's page cache while ingesting


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
    grouped: set[tuple[str, str, str]] = dataclasses.field(default_factory=set)
    """(namespace, name, table root) of each dataset name read as partition directories of a
    table (see :mod:`._directories`), in the events stored."""
    groups_directories: bool = True
    """The store's ``partition_directories`` setting was ``as-partitions``."""
    problems: list[IngestProblem] = dataclasses.field(default_factory=list)
    aliased: dict[str, tuple[int, tuple[str, ...]]] = dataclasses.field(default_factory=dict)
    """By producer: how many events (stored, or there already) held a subset facet elsewhere
    than the spec's place, and where (each place once; see :func:`alias_note`)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "stored": self.stored,
            "duplicates": self.duplicates,
            "invalid": self.invalid,
            "skipped": self.skipped,
            "unreadable": self.unreadable,
            "runs": self.runs,
            "partition_directories": {
                "setting": "as-partitions" if self.groups_directories else "as-datasets",
                "names": self.grouped_names,
                "tables": self.grouped_tables,
            },
            "problems": [problem.as_json() for problem in self.problems],
            "notes": self.notes(),
        }

    def notes(self) -> list[str]:
        """One line per producer that put the subset facet elsewhere than the spec's place."""
        return [
            alias_note(producer, count, places)
            for producer, (count, places) in sorted(self.aliased.items())
        ]

    def noting_aliases(
        self, count: Callable[[EventOutcome], None]
    ) -> Callable[[EventOutcome], None]:
        """``count``, and each event stored (or there already) that put its subset facet
        elsewhere than the spec's place (its ``misplaced``) counted in :attr:`aliased`."""

        def counted(outcome: EventOutcome) -> None:
            if isinstance(outcome, (Stored, AlreadyStored)) and outcome.event.misplaced:
                event = outcome.event
                events, places = self.aliased.get(event.producer, (0, ()))
                more = tuple(place for place in event.misplaced if place not in places)
                self.aliased[event.producer] = (events + 1, places + more)
            count(outcome)

        return counted

    def summary(self) -> str:
        return (
            f"{self.stored} event(s) stored, {self.duplicates} already there, "
            f"{self.invalid} invalid, {self.skipped} not run events (skipped), "
            f"{self.unreadable} input(s) unreadable; "
            f"{self.runs} run(s) updated"
        )

    @property
    def grouped_names(self) -> int:
        """Distinct dataset names read as partition directories of a table."""
        return len({(namespace, name) for namespace, name, _ in self.grouped})

    @property
    def grouped_tables(self) -> int:
        """The distinct tables they are partitions of."""
        return len({(namespace, root) for namespace, _, root in self.grouped})

    def directories_note(self, db: str | os.PathLike[str] | None = None) -> str | None:
        """A line saying how dataset names that are partition directories were read, when some
        were: the summary's companion (None: there is nothing to say). ``db``: the database,
        named in the command that switches it off."""
        if not self.grouped_names:
            return None
        where = "" if db is None else f" --db {os.fspath(db)}"
        name, root = min((name, root) for _, name, root in self.grouped)
        part = name[len(root) :].strip("/")
        return (
            f"{self.grouped_names} dataset name(s) read as partition directories of "
            f"{self.grouped_tables} table(s) (such as {name}: partition {part} of {root}); "
            "to keep such names as datasets, run 'ol-subset "
            f"lineage settings --partition-directories as-datasets{where}' before ingesting"
        )


def ingest(
    paths: Iterable[str | os.PathLike[str]],
    db: str | os.PathLike[str] = "lineage.db",
    *,
    progress: TextIO | None = None,
    jobs: int | None = None,
    max_line_bytes: int | None = None,
    wait: float = LOCK_WAIT,
) -> IngestReport:
    """Store the RunEvents of JSON Lines files (or folders of them) in the database ``db``.

    Folders are read recursively (``*.jsonl``, ``*.json``, ``*.ndjson``); ``"-"`` is standard
    input, read like a file. Each line is one event; a file not named ``.jsonl`` or ``.ndjson``
    whose first line is not a JSON value by itself (or is an array, and alone) is one event or
    an array of them, as ``validate`` reads it. Lines are read a chunk at a time, never a whole
    JSON Lines file. DatasetEvents and JobEvents are skipped and counted. ``progress``: where
    to draw a progress bar (only when it is a terminal and the input is large); ``sys.stderr``
    by default. ``jobs``: how many
    processes check the events (parse, validate): this one, which alone stores them, and
    ``jobs - 1`` worker processes. By default, one per CPU for an input of 8 MB or more, else 1.
    The database and the report are the same whatever the number. ``jobs`` is lowered, with a
    line on ``progress``, to the CPUs available and to one worker per chunk of input.
    ``max_line_bytes``: the longest line read (a longer one is an invalid line); by default
    ``$OL_SUBSET_MAX_LINE_BYTES``, else 16 MiB, and raises ValueError when that variable is not a
    number of bytes. ``wait``: seconds to wait for the database's write lock while another process
    holds it and commits nothing (another ingest that commits is waited for as long as it runs);
    then :class:`LineageDatabaseError`, with what was stored before kept.

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
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs is a number of processes, 1 or more; got {jobs!r}")
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 <= wait < 10**6:
        raise ValueError(f"wait is a number of seconds, 0 to 999999; got {wait!r}")
    limit = _line_limit(max_line_bytes)
    files, report = _input_files(paths)
    total = sum(size for _, size in files)
    stream = sys.stderr if progress is None else progress
    jobs, lowered = job_count(jobs, total)
    if lowered:
        stream.write(f"ingest: {lowered}\n")
        stream.flush()
    bar = _Progress(stream, total) if total >= _PROGRESS_BYTES and _is_terminal(stream) else None
    runs: set[str] = set()

    def count(outcome: EventOutcome) -> None:
        match outcome:
            case Stored(event):
                _count_stored(report, runs, event)
            case AlreadyStored():
                report.duplicates += 1
            case Invalid(source, line, message):
                report.invalid += 1
                report.problems.append(IngestProblem(source, line, message))
            case Skipped():
                report.skipped += 1  # a DatasetEvent or JobEvent: no run to attach it to
            case Unreadable(source, message):
                _unreadable(report, source, message)

    with LineageStore.open(db, create=True, wait=wait) as store, Checkpoints(store) as copies:
        writer = _bulk_writer(store, copies)
        try:
            group = _groups_directories(store, report)
            for (outcomes, conditions), done in _checked(_chunks(files, limit), jobs, group):
                writer.store(outcomes, conditions, report.noting_aliases(count))
                if bar is not None:
                    bar.show(done, report.stored)
            writer.commit()
        except sqlite3.OperationalError as error:
            writer.rollback()
            if is_busy(error):  # a reader kept a commit waiting longer than ``wait``
                raise LineageDatabaseError(locked_message(store.path, wait)) from None
            raise
        except BaseException:
            writer.rollback()
            raise
        finally:
            if bar is not None:
                bar.clear()
    report.runs = len(runs)
    return report


def _bulk_writer(store: LineageStore, copies: Checkpoints) -> Writer:
    """The writer of a bulk ingest: SQLite's page cache at 32 MB rather than 2 (at a million
    events, the rows of a chunk land on pages all over the indexes: 84-93 -> 74-82 us of CPU to
    store an event), its log copied by ``copies``."""
    store.connection.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
    return Writer(store, committed=copies.committed)


def alias_note(producer: str, count: int | None, places: Iterable[str]) -> str:
    """The line saying that ``count`` events (None: events) of ``producer`` put the subset
    facet elsewhere than the spec's place, where, and what was done with it.

    >>> print(alias_note("p", 3, ["facets.inputSubset (read as inputFacets.subset)"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    3 event(s) of producer 'p' put the subset facet under facets.inputSubset (read as
    inputFacets.subset): not the spec's place; ask its maintainers to put it there
    """
    events = "events" if count is None else f"{count} event(s)"
    return (
        f"{events} of producer {producer!r} put the subset facet under {'; '.join(places)}: "
        "not the spec's place; ask its maintainers to put it there"
    )


def _count_stored(report: IngestReport, runs: set[str], event: CheckedEvent) -> None:
    report.stored += 1
    runs.add(event.run_id)
    report.grouped.update(event.grouped)


def _groups_directories(store: LineageStore, report: IngestReport) -> bool:
    """The store's ``partition_directories`` setting (see ``store/_settings.py``), noted in
    the report."""
    report.groups_directories = groups_directories(store)
    return report.groups_directories


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def job_count(requested: int | None, total: int) -> tuple[int, str | None]:
    """How many processes check ``total`` bytes of input, of ``requested`` (None: the
    default), and why fewer than requested, if so.

    Never more than the CPUs available, and never more than one worker per chunk of input (the
    ingesting process stores while the workers check): more would only cost memory.

    >>> job_count(1, 10**9)
    (1, None)
    >>> job_count(None, 1000)
    (1, None)
    >>> job_count(100, 1000)[0] <= 2  # one chunk: this process and one worker at most
    True
    """
    chunks = -(-total // _CHUNK_BYTES)
    cpus = available_cpus()
    if requested is None:
        return (min(cpus, chunks + 1) if total >= _PROGRESS_BYTES else 1), None
    useful = chunks + 1
    jobs = min(requested, cpus, useful)
    if jobs == requested:
        return jobs, None
    reasons = []  # what bounds it (both, when they are equal)
    if cpus == jobs:
        reasons.append(f"{cpus} CPU(s) available to this process")
    if useful == jobs:
        reasons.append(
            f"{chunks} chunk(s) of input to check, of about {_CHUNK_BYTES // 1024} KB each, "
            "and one worker process per chunk at most"
        )
    return jobs, f"jobs {requested} lowered to {jobs}: {'; '.join(reasons)}"


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
        if os.fspath(given) == "-":
            files.append((_STDIN, 0))
            continue
        path = Path(given)
        if path.is_dir():
            before = report.unreadable

            def unreadable(error: OSError, path: Path = path) -> None:  # said, never passed over
                where = str(error.filename or path)
                _unreadable(report, where, f"cannot read: {error.strerror or error}")

            found = sorted(
                Path(folder, name)
                for folder, _, names in os.walk(path, onerror=unreadable)
                for name in names
                if name.endswith(_SUFFIXES)
            )
            if not found and report.unreadable == before:
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


Chunk = tuple[list[Item], int]
"""Items to check (see :mod:`._shapes`), and how many input bytes were read by their end."""

Checks = tuple[list[Checked], list[Condition]]
"""A chunk checked: see :func:`~._checker.check_chunk`."""


def _chunks(files: list[tuple[Path, int]], limit: int) -> Iterator[Chunk]:
    items: list[Item] = []
    size = 0
    done = 0
    for file, file_size in files:
        for item, offset in _items(file, limit):
            items.append(item)
            size += _size_of(item)
            if size >= _CHUNK_BYTES:
                yield items, done + offset
                items, size = [], 0
        done += file_size
    if items:
        yield items, done


def _size_of(item: Item) -> int:
    """The bytes (or the characters of the message) an item holds, for the size of a chunk."""
    match item:
        case Line(raw=raw):
            return len(raw)
        case Whole(data=data):
            return len(data)
        case Invalid(message=message) | Unreadable(message=message):
            return len(message)


def _items(path: Path, limit: int) -> Iterator[tuple[Item, int]]:
    """The items of one file (or of standard input), each with the bytes of the file read by
    its end."""
    source = _STDIN_NAME if path is _STDIN else str(path)
    try:
        if path is not _STDIN:
            stream: BinaryIO | contextlib.nullcontext[BinaryIO] = path.open("rb")
        elif sys.stdin is None:
            yield Unreadable(source, "standard input is closed"), 0
            return
        else:
            stream = contextlib.nullcontext(sys.stdin.buffer)  # read, not closed
    except OSError as error:
        yield Unreadable(source, f"cannot read: {error.strerror}"), 0
        return
    with stream as stream:
        offset = 0
        try:
            maybe_whole = path.suffix not in _JSON_LINES_SUFFIXES
            for item, offset in _lines(source, stream, maybe_whole, limit):
                yield item, offset
        except OSError as error:
            yield Unreadable(source, f"cannot read: {error.strerror}"), offset


def _lines(
    source: str, stream: BinaryIO, maybe_whole: bool, limit: int
) -> Iterator[tuple[Item, int]]:
    """The items of a file's lines, read by ``validate``'s rule: a file that may be one
    document (``maybe_whole``) is, when its first line that is not blank is no JSON value by
    itself; it is then read whole (from its start, blank lines included), up to ``limit``."""
    offset = 0
    first = maybe_whole
    leading: list[bytes] = []  # blank lines before the first that is not
    size = 0  # their bytes, which count in the limit of a document read whole
    start = 0  # where the document starts (after a byte order mark)
    held: tuple[Line, int] | None = None  # a first line holding a JSON array
    for number, at, read in read_lines(stream, limit):
        if held is not None and (isinstance(read, LongLine) or not is_blank(read)):
            yield held  # not alone: JSON Lines, and the array a line that is no event
            held = None
        if isinstance(read, LongLine):
            first = False  # one document or JSON Lines: the lines after it are read as lines
            offset = at + read.size + 1
            yield Invalid(source, number, str(read)), offset
            continue
        offset = at + len(read)
        raw, begins = input_start(read, at)
        if first:
            start = begins if number == 1 else start
            if size <= limit:  # past it, only the size counts: the document is refused
                leading.append(raw)
            size += len(raw)
            if is_blank(raw):
                continue
            first = False
            try:
                parsed = parse_json(raw, offset=begins)
            except UnusableJson:
                # One document over several lines: its first line is not one by itself.
                rest = read_at_most(stream, max(limit - size, 0))
                if rest is None or size > limit:
                    yield Invalid(source, None, too_big(limit)), offset + limit
                else:
                    yield Whole(source, b"".join(leading) + rest, start), offset + len(rest)
                return
            if isinstance(parsed.value, list):  # an array on one line: its events, if alone
                held = Line(source, number, raw, begins), offset
                continue
        yield Line(source, number, raw, begins), offset
    if held is not None:
        line, at = held
        yield Whole(source, line.raw, line.offset), at


def _line_limit(given: int | None) -> int:
    if given is not None and (
        isinstance(given, bool)
        or not isinstance(given, int)
        or not 1 <= given <= LARGEST_LINE_LIMIT
    ):
        raise ValueError(
            f"max_line_bytes is a number of bytes, 1 or more and at most {LARGEST_LINE_LIMIT}; "
            f"got {given!r}"
        )
    return max_line_bytes(given)


def _checked(
    chunks: Iterator[Chunk], jobs: int, group: bool = True
) -> Iterator[tuple[Checks, int]]:
    """The chunks checked, in order: here, and by ``jobs - 1`` worker processes (when there is
    a Python to run them: an embedding application may have none). ``group``: see
    :func:`~._checker.check_chunk`."""
    if jobs == 1 or not sys.executable:
        for items, done in chunks:
            yield check_chunk(items, group=group), done
        return
    with Workers(jobs - 1, group) as workers:
        yield from _in_order(workers.all, chunks, group)


def _in_order(
    workers: list[Worker], chunks: Iterator[Chunk], group: bool = True
) -> Iterator[tuple[Checks, int]]:
    """The chunks checked by the workers, in input order, a bounded number read ahead. While
    the oldest is still being checked, this process checks the next one itself rather than
    wait."""
    # (the worker checking it, or the chunk checked here; bytes read by its end)
    queue: collections.deque[tuple[Worker | Checks, int]] = collections.deque()
    # A worker is sent more as soon as it has checked what it had (not when its outcomes are
    # taken: this process may be checking a chunk itself meanwhile), the whole read ahead
    # bounded: the chunks held never grow with the input.
    most = 2 * _AHEAD * len(workers) + 2
    more = True
    while True:
        while more and len(queue) < most:
            idlest = min(workers, key=lambda worker: worker.unchecked)
            if idlest.unchecked >= _AHEAD:
                break
            chunk = next(chunks, None)
            if chunk is None:
                more = False
            else:
                idlest.send(chunk[0])
                queue.append((idlest, chunk[1]))
        if not queue:
            return
        head, done = queue[0]
        if isinstance(head, Worker) and not head.ready() and more and len(queue) < most:
            chunk = next(chunks, None)
            if chunk is None:
                more = False
            else:
                queue.append((check_chunk(chunk[0], group=group), chunk[1]))
            continue
        queue.popleft()
        yield (head.receive() if isinstance(head, Worker) else head), done


def _unreadable(report: IngestReport, source: str, message: str) -> None:
    report.unreadable += 1
    report.problems.append(IngestProblem(source, None, message))


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
