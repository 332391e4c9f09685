"""The outbox: every OpenLineage event kept on local disk until a transport took it.

The promise is **at-least-once**. An event is appended to the outbox (one complete JSON line,
``fdatasync``'d) before any transport sees it, and it leaves the outbox only when a transport
took it or it was quarantined. A dead endpoint, a crash, or a ``close()`` whose time ran out
leaves it there; the next capture that opens the same outbox, or ``ol-subset replay OUTBOX``,
sends it. So an event may be sent twice (it was delivered just before a crash, before the
cursor saying so was saved): receivers are expected to be idempotent, keyed by ``run.runId``
and ``eventType``, as OpenLineage backends are. Limits: the disk must keep what ``fsync``
confirmed; an append that a crash interrupted is cut off at the next open (its producer died
before it was stored, so nothing ever counted it as kept).

Layout of an outbox (a directory created 0700; every file 0600; a symlink in place of any of
them is refused, never followed)::

    OUTBOX/lane-0/lock                  flock'd by the one process writing and sending the lane
    OUTBOX/lane-0/cursor                {"segment": 3, "offset": 1532}: all before it is settled
    OUTBOX/lane-0/000000000003.jsonl    events in the order produced, one JSON line each

A process takes the first lane whose lock is free (two captures on one outbox at the same time
write two lanes, never one file) and also takes over every other free lane that still holds
events, sending those first. A lane held by a running process is left to it. The cursor is
written to a temporary file, fsync'd and renamed; a segment that is fully sent is replaced by a
new empty one once it is larger than 1 MiB, and at close.

What an outbox holds is sent as the user's own events, so, as ssh treats its keys, the outbox
folder, its lanes and the files read in them must be owned by the user (or root) and writable
by neither group nor others: otherwise the whole outbox is refused (:class:`UnsafeOutbox`, one
line naming the path and the fix), never read. Its parents are not checked (``/tmp`` is 1777).
A cursor that cannot be trusted (unreadable, past the end of the data, or inside a line: a
cursor is only ever written at a line end) is reported, and the lane is sent again from its
oldest segment: duplicates are for receivers to drop, a skipped event would be lost.

Files an outbox shares with others (the JSON Lines output, the quarantine) are appended by
:func:`append_line`: a whole line or nothing, under ``flock``, a torn last line cut first.
Sending what an outbox holds is ``_delivery``'s part.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from openlineage_subset import (
    DEFAULT_MAX_LINE_BYTES,
    MAX_LINE_BYTES_VARIABLE,
    OpenLineageSubsetError,
    max_line_bytes,
)
from openlineage_subset.delivery._openlineage_client import to_json
from openlineage_subset.delivery._trust import UnsafeOutbox, ensure_trusted
from openlineage_subset.producer import scrubbed_logger

log = scrubbed_logger("openlineage_subset.outbox")

MAX_LANES = 32
"""Captures that can write one outbox at the same time."""

_SEGMENT = re.compile(r"(\d{12})\.jsonl")
_LANE = re.compile(r"lane-(\d+)")
_ROTATE_BYTES = 1 << 20
_COMMIT_EVERY = 64
_COMMIT_SECONDS = 1.0
_LOCK_WAIT = 2.0
_CHUNK = 1 << 16
_HEAD = 4096
"""Bytes of a line over the line limit kept in its place, for the quarantine."""
_FILE_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_sync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)


class OutboxClosed(OpenLineageSubsetError):
    """The outbox was closed (``close()`` gave up waiting); its files are not touched again."""


# Appending whole lines ------------------------------------------------------------------------


def append_line(path: str | os.PathLike[str], line: bytes) -> None:
    """Append ``line`` (a JSON document and its newline) to ``path``: whole, or not at all.

    The file is created 0600 and never through a symlink (``O_NOFOLLOW``, dangling ones too).
    On a regular file the append holds an exclusive ``flock`` (raising ``OSError`` when another
    process holds it for more than two seconds), first cuts a torn last line (an append a
    crash interrupted), then writes and ``fdatasync``s; a write that fails part way (disk
    full, file size limit) is cut back off before the error is raised, so the next line never
    runs on from a partial one. A device or a pipe is written as is.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "events.jsonl"
    >>> append_line(path, b'{"eventType": "START"}\\n')
    >>> path.read_bytes(), oct(path.stat().st_mode & 0o777)
    (b'{"eventType": "START"}\\n', '0o600')
    """
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise ValueError("append_line takes one line ending with its newline")
    if is_fifo(path):
        fd = open_fifo(path)
        try:
            write_all(fd, line)
        finally:
            os.close(fd)
        return
    fd = os.open(path, _FILE_FLAGS, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            write_all(fd, line)
            return
        _lock_briefly(fd)
        try:
            cut = _cut_torn_tail(fd)
            if cut:
                log.warning("cut a torn last line (%d bytes) off %s before appending", cut, path)
            _append_whole(fd, line)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def is_fifo(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a FIFO (a named pipe) itself, not through a symlink."""
    try:
        return stat.S_ISFIFO(os.lstat(path).st_mode)
    except OSError:
        return False


def open_fifo(path: str | os.PathLike[str]) -> int:
    """The FIFO ``path`` opened for writing, blocking writes; ``OSError`` (ENXIO) at once when
    no process reads it, instead of waiting for one, or of opening it read-write and writing
    into a pipe that no one will ever read (each line then lost, yet counted written)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "a FIFO that no process reads", str(path)) from None
        raise
    os.set_blocking(fd, True)
    return fd


def _lock_briefly(fd: int) -> None:
    deadline = time.monotonic() + _LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise OSError(
                    errno.EWOULDBLOCK, f"locked by another process for over {_LOCK_WAIT:g} s"
                ) from None
            time.sleep(0.01)
        else:
            return


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (looping over short writes); ``OSError`` when it cannot."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, "nothing written")
        view = view[written:]


def _append_whole(fd: int, line: bytes) -> None:
    """Write and sync ``line`` at the end of a regular file, or leave the file as it was."""
    start = os.fstat(fd).st_size
    try:
        write_all(fd, line)
        _sync(fd)
    except OSError:
        with suppress(OSError):
            os.ftruncate(fd, start)
        raise


def _cut_torn_tail(fd: int) -> int:
    """Cut what follows the last newline of a regular file; the number of bytes cut."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return 0
    keep = size
    while keep > 0:
        start = max(0, keep - _CHUNK)
        newline = os.pread(fd, keep - start, start).rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        keep = start
    os.ftruncate(fd, keep)
    _sync(fd)
    return size - keep


def _read_line(fd: int, offset: int, limit: int) -> tuple[bytes, int, bool] | None:
    """The complete line starting at ``offset``: (its bytes with the newline, its size, False);
    None if there is none yet. A line longer than ``limit`` (newline aside) is not held: its
    first bytes stand for it, then True."""
    parts: list[bytes] = []
    at = offset
    while True:
        chunk = os.pread(fd, _CHUNK, at)
        if not chunk:
            return None
        newline = chunk.find(b"\n")
        end = at + newline if newline >= 0 else at + len(chunk)
        if end - offset > limit:
            parts.clear()  # over the limit: only its end is looked for now
        elif newline >= 0:
            parts.append(chunk[: newline + 1])
            line = b"".join(parts)
            return line, len(line), False
        else:
            parts.append(chunk)
        if newline >= 0:
            return os.pread(fd, min(_HEAD, end - offset), offset), end - offset + 1, True
        at += len(chunk)


def outbox_line_limit() -> int:
    """The longest line an outbox reads back: the readers' limit from the environment
    (:mod:`openlineage_subset._lines`), never below the default, as the outbox's lines are the
    capture's own (a lower limit set for ``validate`` or ``ingest`` does not apply to them); the
    default, said once, when the environment's cannot be used: capture never raises."""
    try:
        return max(max_line_bytes(), DEFAULT_MAX_LINE_BYTES)  # never lower than capture writes
    except ValueError as error:
        if not _line_limit_said:
            _line_limit_said.append(True)
            log.warning(
                "%s; the outbox reads lines of up to %d bytes", error, DEFAULT_MAX_LINE_BYTES
            )
        return DEFAULT_MAX_LINE_BYTES


_line_limit_said: list[bool] = []


def _count_lines(fd: int, offset: int) -> int:
    count = 0
    at = offset
    while chunk := os.pread(fd, _CHUNK, at):
        count += chunk.count(b"\n")
        at += len(chunk)
    return count


# Events as lines, and the JSON Lines transport -------------------------------------------------


def _enum_value(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    raise TypeError(f"{type(value).__name__} is not JSON")


def event_line(event: Any) -> bytes:
    """``event`` as one JSON line: a dict verbatim (JSON nulls kept), else openlineage-python's.

    >>> event_line({"eventType": "START", "inputs": [{"dimensions": {"day": None}}]})
    b'{"eventType": "START", "inputs": [{"dimensions": {"day": null}}]}\\n'
    """
    if isinstance(event, dict):
        text = json.dumps(event, default=_enum_value)
    else:
        text = to_json(event)
    return (text + "\n").encode()


def create_private(path: str | os.PathLike[str]) -> None:
    """Create the file ``path`` (0600, never through a symlink) unless it exists; ``OSError``
    when it cannot be opened for appending."""
    os.close(os.open(path, _FILE_FLAGS, 0o600))


# The outbox -----------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Position:
    """A place in a lane: a segment number and a byte offset in that segment."""

    segment: int
    offset: int


@dataclass(frozen=True, eq=False)
class Record:
    """One line of a lane, and where it ends."""

    lane: Lane
    end: Position
    line: bytes
    event: dict[str, Any] | None
    """None when the line is not a JSON object (a damaged disk, a foreign writer)."""
    earlier: bool
    """Appended before this process opened the outbox (by an earlier or another capture)."""
    problem: str | None = None
    """Why ``event`` is None when the line is not read whole: it is over the line limit, and
    ``line`` holds its first bytes only."""


def _segment_name(number: int) -> str:
    return f"{number:012d}.jsonl"


class Lane:
    """One process's part of an outbox: its segments and cursor, under its ``flock``.

    Not thread-safe: the :class:`Outbox` serializes every call under its ``lock``.
    """

    def __init__(self, path: Path, directory: int, lock: int | None) -> None:
        self.name = path.name
        self.path = path
        self._dir = directory
        self._lock = lock
        self._file_flags = os.O_RDWR | os.O_APPEND if lock is not None else os.O_RDONLY
        self._fds: dict[int, int] = {}
        self._peeked: Record | None = None
        self._uncommitted = 0
        self._committed_at = time.monotonic()
        self.repairs: list[str] = []
        self.segments: list[int] = []
        self.delivered = self.committed = self.boundary = Position(0, 0)
        self._cursor_error_said = False
        self.cursor_problem: str | None = None
        """Why the cursor was not trusted (the lane is sent again from its start), if it was not."""
        self._limit = outbox_line_limit()

    @classmethod
    def acquire(cls, outbox: int, path: Path, *, create: bool) -> Lane | None:
        """The lane ``path`` (a folder of the outbox directory ``outbox``), locked and repaired;
        None when another process holds it. :class:`UnsafeOutbox` when it cannot be trusted."""
        if create:
            with suppress(FileExistsError):
                os.mkdir(path.name, 0o700, dir_fd=outbox)
        directory = os.open(path.name, _DIR_FLAGS, dir_fd=outbox)
        try:
            ensure_trusted(directory, path)
            flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            lock = os.open("lock", flags, 0o600, dir_fd=directory)
        except OSError:
            os.close(directory)
            raise
        try:
            ensure_trusted(lock, path / "lock")
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            os.close(directory)
            return None
        except OSError:
            os.close(lock)
            os.close(directory)
            raise
        lane = cls(path, directory, lock)
        try:
            with suppress(OSError):  # the pid only helps messages
                os.ftruncate(lock, 0)
                os.pwrite(lock, f"{os.getpid()}\n".encode(), 0)
            lane._load(repair=True)
        except BaseException:
            lane.close()
            raise
        return lane

    @classmethod
    def pending_in_use(cls, outbox: int, path: Path) -> tuple[int, str]:
        """Events pending in a lane another process holds (read only, may be stale), its pid."""
        directory = os.open(path.name, _DIR_FLAGS, dir_fd=outbox)
        lane = cls(path, directory, None)
        try:
            ensure_trusted(directory, path)
            pid = lane._holder_pid()
            lane._load(repair=False)
            return lane.pending(), pid
        finally:
            lane.close()

    def _holder_pid(self) -> str:
        """The pid the holder of the lane wrote in its lock file ("?" when unreadable)."""
        try:
            fd = os.open("lock", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self._dir)
        except OSError:  # the pid only helps messages
            return "?"
        try:
            ensure_trusted(fd, self.path / "lock")
            text = os.read(fd, 32).decode(errors="replace").strip()
        except UnsafeOutbox:
            raise
        except OSError:
            return "?"
        finally:
            os.close(fd)
        return text if text.isdigit() else "?"

    def _load(self, *, repair: bool) -> None:
        # the cursor first: a holder that moves it on and removes a segment meanwhile leaves
        # a cursor behind the listing, never past it
        cursor = self._read_cursor()
        numbers = sorted(
            int(found.group(1))
            for name in os.listdir(self._dir)
            if (found := _SEGMENT.fullmatch(name))
        )
        if cursor is not None and numbers:
            self.cursor_problem = self._distrust(cursor, numbers)
        if self.cursor_problem is not None:
            cursor = None
            self.repairs.append(
                f"the cursor of {self.name} {self.cursor_problem}: a damaged or forged cursor, "
                "so the lane is sent again from its oldest segment (at least once: receivers "
                "drop duplicates)"
            )
        start = cursor or Position(numbers[0] if numbers else 1, 0)
        for number in [n for n in numbers if n < start.segment]:
            if repair:  # fully sent; a rotation was cut short
                os.unlink(_segment_name(number), dir_fd=self._dir)
        numbers = [n for n in numbers if n >= start.segment]
        if not numbers:
            if not repair:
                self.segments = []
                return
            number = start.segment if start.offset == 0 else start.segment + 1
            self._create_segment(number)
            numbers = [number]
            start = Position(number, 0)
        elif numbers[0] != start.segment:
            start = Position(numbers[0], 0)
        if repair:
            for number in numbers:
                cut = _cut_torn_tail(self._fd(number))
                if cut:
                    self.repairs.append(
                        f"cut a torn last line ({cut} bytes, an append a crash interrupted) off "
                        f"{self.name}/{_segment_name(number)}"
                    )
        self.segments = numbers
        self.delivered = self.committed = start
        self.boundary = Position(numbers[-1], os.fstat(self._fd(numbers[-1])).st_size)

    def _read_cursor(self) -> Position | None:
        try:
            fd = os.open("cursor", os.O_RDONLY | os.O_NOFOLLOW, dir_fd=self._dir)
        except FileNotFoundError:
            return None
        try:
            ensure_trusted(fd, self.path / "cursor")
            data = json.loads(os.read(fd, 4096))
            position = Position(int(data["segment"]), int(data["offset"]))
            if position.segment < 0 or position.offset < 0:
                raise ValueError("negative")
        except (ValueError, KeyError, TypeError) as error:
            self.cursor_problem = f"is unreadable ({error})"
            return None
        finally:
            os.close(fd)
        return position

    def _distrust(self, cursor: Position, numbers: list[int]) -> str | None:
        """Why ``cursor`` cannot be where sending stopped (it is written only at a line end of
        a segment that exists until a later cursor is saved); None when it can be."""
        if cursor.segment > numbers[-1]:
            return (
                f"names segment {_segment_name(cursor.segment)}, past the newest one, "
                f"{self.name}/{_segment_name(numbers[-1])}"
            )
        if cursor.segment not in numbers:
            return None  # removed with the move of a cursor saved since: sending starts after it
        fd = self._fd(cursor.segment)
        size = os.fstat(fd).st_size
        where = f"{self.name}/{_segment_name(cursor.segment)}"
        if cursor.offset > size:
            return f"points past the end of {where} (byte {cursor.offset} of {size})"
        if cursor.offset > 0 and os.pread(fd, 1, cursor.offset - 1) != b"\n":
            return f"points inside a line of {where} (byte {cursor.offset})"
        return None

    def _fd(self, number: int) -> int:
        fd = self._fds.get(number)
        if fd is None:
            flags = self._file_flags | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(_segment_name(number), flags, dir_fd=self._dir)
            try:
                ensure_trusted(fd, self.path / _segment_name(number))
            except OSError:
                os.close(fd)
                raise
            self._fds[number] = fd
        return fd

    def _create_segment(self, number: int) -> None:
        flags = _FILE_FLAGS | os.O_EXCL
        self._fds[number] = os.open(_segment_name(number), flags, 0o600, dir_fd=self._dir)
        os.fsync(self._dir)

    def append(self, line: bytes) -> None:
        """Append one event line to the newest segment, synced, or raise and leave it as it was."""
        _append_whole(self._fd(self.segments[-1]), line)

    def peek(self) -> Record | None:
        """The first event not yet settled, None when there is none."""
        if self._peeked is None:
            self._peeked = self._read_at(self.delivered)
        return self._peeked

    def _read_at(self, at: Position) -> Record | None:
        while (read := _read_line(self._fd(at.segment), at.offset, self._limit)) is None:
            later = [number for number in self.segments if number > at.segment]
            if not later:
                return None
            at = Position(later[0], 0)
        line, size, too_long = read
        end = Position(at.segment, at.offset + size)
        if too_long:
            problem = (
                f"a line of {size - 1} bytes, over the limit of {self._limit} bytes "
                f"(${MAX_LINE_BYTES_VARIABLE} raises it): only its first {len(line)} bytes are "
                "kept here"
            )
            return Record(self, end, line, None, end <= self.boundary, problem)
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            event = None
        return Record(
            self, end, line, event if isinstance(event, dict) else None, end <= self.boundary
        )

    def settle(self, record: Record) -> None:
        """Mark ``record`` (the one :meth:`peek` gave) sent or quarantined."""
        if record is not self._peeked:
            raise ValueError("settle the record peek() gave, in order")
        self.delivered = record.end
        self._peeked = None
        self._uncommitted += 1
        if (
            self._uncommitted >= _COMMIT_EVERY
            or time.monotonic() - self._committed_at >= _COMMIT_SECONDS
        ):
            self.commit()

    def pending(self) -> int:
        """Events not yet settled."""
        at = self.delivered
        count = 0
        for number in self.segments:
            if number >= at.segment:
                count += _count_lines(self._fd(number), at.offset if number == at.segment else 0)
        return count

    def commit(self) -> None:
        """Save the cursor (temporary file, fsync, rename, fsync of the folder); then remove the
        segments before it. A failure is logged once: settled events may then be sent again."""
        if self.delivered == self.committed:
            return
        try:
            self._write_cursor(self.delivered)
        except OSError as error:
            if not self._cursor_error_said:
                self._cursor_error_said = True
                log.warning(
                    "cannot save the cursor of the outbox lane %s (%s): events already sent "
                    "may be sent again",
                    self.name,
                    error,
                )
            return
        self.committed = self.delivered
        self._uncommitted = 0
        self._committed_at = time.monotonic()
        for number in [n for n in self.segments if n < self.committed.segment]:
            self.segments.remove(number)
            fd = self._fds.pop(number, None)
            if fd is not None:
                os.close(fd)
            with suppress(OSError):  # removed at the next open otherwise
                os.unlink(_segment_name(number), dir_fd=self._dir)

    def _write_cursor(self, position: Position) -> None:
        with suppress(FileNotFoundError):
            os.unlink("cursor.tmp", dir_fd=self._dir)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open("cursor.tmp", flags, 0o600, dir_fd=self._dir)
        try:
            data = {"segment": position.segment, "offset": position.offset}
            write_all(fd, json.dumps(data).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename("cursor.tmp", "cursor", src_dir_fd=self._dir, dst_dir_fd=self._dir)
        os.fsync(self._dir)

    def rotate_if_settled(self, *, force: bool) -> None:
        """Start a new empty segment when all is settled and the newest one is large (or
        ``force``, and it is not empty); the old one goes with the cursor's move. Saves the
        cursor either way."""
        if self.peek() is not None:
            self.commit()
            return
        newest = self.segments[-1]
        size = os.fstat(self._fd(newest)).st_size
        if size == 0 or (size < _ROTATE_BYTES and not force):
            self.commit()
            return
        self._create_segment(newest + 1)
        self.segments.append(newest + 1)
        self.delivered = Position(newest + 1, 0)
        self.commit()

    def close(self) -> None:
        """Close every file; the lock goes with its descriptor."""
        for fd in [*self._fds.values(), *([self._lock] if self._lock is not None else [])]:
            with suppress(OSError):
                os.close(fd)
        self._fds.clear()
        self._lock = None
        with suppress(OSError):
            os.close(self._dir)


class Outbox:
    """A directory of lanes: this process's own lane, and the free lanes it took over.

    ``Outbox(path)`` creates the directory (0700) if needed, takes the first free lane as its
    own (appends go there) and takes over every other free lane that holds events (sent first,
    released once empty). Lanes held by running processes are in ``in_use``. ``create=False``
    (for ``ol-subset replay``) opens an existing outbox and takes over lanes only. Raises
    ``OSError`` when the directory cannot be used (a symlink, a path under a regular file, no
    permission, every lane in use), :class:`UnsafeOutbox` when the folder, a lane or a file
    read in one is another user's (root aside) or writable by group or others.

    Every method but ``close`` expects the caller to hold ``lock``.

    Example::

        outbox = Outbox("events.jsonl.outbox")
        with outbox.lock:
            outbox.append(event_line(event))
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = Path(os.path.abspath(path))
        self.lock = threading.Lock()
        self.closed = False
        self.own: Lane | None = None
        self.adopted: list[Lane] = []
        self.in_use: dict[str, tuple[int, str]] = {}
        """Lanes held by other processes: their pending events (read without the lock) and pid."""
        self.distrusted: dict[str, str] = {}
        """Lanes whose cursor was not trusted (sent again from their start), and why."""
        repairs: list[str] = []
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with suppress(FileExistsError):
                os.mkdir(self.path, 0o700)
        self._dir = os.open(self.path, _DIR_FLAGS)
        try:
            ensure_trusted(self._dir, self.path)
            self._open_lanes(create=create, repairs=repairs)
        except BaseException:
            self._close_files()
            raise
        self.earlier = sum(lane.pending() for lane in self.lanes)
        """Events found in the outbox at open: left by earlier captures."""
        for repair in repairs:
            log.warning("outbox %s: %s", self.path, repair)

    @property
    def lanes(self) -> list[Lane]:
        """The lanes this process holds, in the order they are sent: taken over first."""
        return [*self.adopted, *([self.own] if self.own is not None else [])]

    def _open_lanes(self, *, create: bool, repairs: list[str]) -> None:
        names = sorted(
            (int(found.group(1)), name)
            for name in os.listdir(self._dir)
            if (found := _LANE.fullmatch(name))
        )
        if not create and not names:
            raise OSError(errno.ENOENT, "no lane-* folder in it", str(self.path))
        if create:
            for number in range(MAX_LANES):
                self.own = Lane.acquire(self._dir, self.path / f"lane-{number}", create=True)
                if self.own is not None:
                    self._note(self.own, repairs)
                    break
            else:
                raise OSError(errno.EBUSY, f"all {MAX_LANES} lanes are in use", str(self.path))
        for _, name in names:
            if self.own is not None and name == self.own.name:
                continue
            try:
                lane = Lane.acquire(self._dir, self.path / name, create=False)
                if lane is None:
                    pending, pid = Lane.pending_in_use(self._dir, self.path / name)
                    if pending:
                        self.in_use[name] = (pending, pid)
                    continue
                self._note(lane, repairs)
                if lane.pending():
                    self.adopted.append(lane)
                else:
                    lane.close()
            except UnsafeOutbox:
                raise  # the whole outbox is refused, not the lane alone
            except OSError as error:
                log.warning("outbox %s: lane %s left alone: %s", self.path, name, error)

    def _note(self, lane: Lane, repairs: list[str]) -> None:
        repairs += lane.repairs
        if lane.cursor_problem is not None:
            self.distrusted[lane.name] = lane.cursor_problem

    def _check(self) -> None:
        if self.closed:
            raise OutboxClosed(str(self.path))

    def append(self, line: bytes) -> None:
        """Append an event line to the own lane, synced (``OSError``: nothing appended)."""
        self._check()
        if self.own is None:
            raise OSError(errno.EROFS, "outbox opened to replay only", str(self.path))
        self.own.append(line)

    def peek(self) -> Record | None:
        """The next event to send: taken-over lanes first, in order; None when all is settled."""
        self._check()
        for lane in self.lanes:
            record = lane.peek()
            if record is not None:
                return record
        return None

    def settle(self, record: Record) -> None:
        """Mark the record :meth:`peek` gave as sent or quarantined; release a taken-over lane
        once it is empty."""
        self._check()
        lane = record.lane
        lane.settle(record)
        if lane in self.adopted and lane.peek() is None:
            lane.rotate_if_settled(force=True)
            lane.close()
            self.adopted.remove(lane)

    def save(self) -> None:
        """Save the cursors (when idle); start a new segment where a settled one grew large."""
        self._check()
        for lane in self.lanes:
            lane.rotate_if_settled(force=False)

    def pending(self) -> int:
        """Events not yet settled in the lanes this process holds."""
        self._check()
        return sum(lane.pending() for lane in self.lanes)

    def close(self, timeout: float) -> bool:
        """Save the cursors, empty the settled segments, release the lanes; False when
        ``timeout`` ran out waiting for a thread stuck in a file operation (then nothing is
        touched and the lanes are released at exit)."""
        if not self.lock.acquire(timeout=max(timeout, 0.0)):
            return False
        try:
            if self.closed:
                return True
            self.closed = True
            for lane in self.lanes:
                try:
                    lane.rotate_if_settled(force=True)
                except OSError as error:
                    log.warning(
                        "outbox %s: could not tidy lane %s: %s", self.path, lane.name, error
                    )
            self._close_files()
            return True
        finally:
            self.lock.release()

    def _close_files(self) -> None:
        for lane in self.lanes:
            lane.close()
        with suppress(OSError):
            os.close(self._dir)
