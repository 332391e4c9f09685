"""One lane of an outbox (:class:`Lane`): its segments of event lines, its cursor, its records.

The cursor is written to a temporary file, fsync'd and renamed; a segment that is fully sent is
replaced by a new empty one once it is larger than 1 MiB, and at close. A cursor that cannot be
trusted (unreadable, past the end of the data, or inside a line: a cursor is only ever written
at a line end) is reported, and the lane is sent again from its oldest segment: duplicates are
for receivers to drop, a skipped event would be lost.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openlineage_subset import DEFAULT_MAX_LINE_BYTES, MAX_LINE_BYTES_VARIABLE, max_line_bytes
from openlineage_subset.delivery._files import (
    DIR_FLAGS,
    FILE_FLAGS,
    append_whole,
    count_lines,
    cut_torn_tail,
    read_line,
    write_all,
)
from openlineage_subset.delivery._trust import UnsafeOutbox, ensure_trusted
from openlineage_subset.producer import scrubbed_logger

log = scrubbed_logger("openlineage_subset.outbox")

_SEGMENT = re.compile(r"(\d{12})\.jsonl")
_ROTATE_BYTES = 1 << 20
_COMMIT_EVERY = 64
_COMMIT_SECONDS = 1.0


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
        directory = os.open(path.name, DIR_FLAGS, dir_fd=outbox)
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
        directory = os.open(path.name, DIR_FLAGS, dir_fd=outbox)
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
                cut = cut_torn_tail(self._fd(number))
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
        flags = FILE_FLAGS | os.O_EXCL
        self._fds[number] = os.open(_segment_name(number), flags, 0o600, dir_fd=self._dir)
        os.fsync(self._dir)

    def append(self, line: bytes) -> None:
        """Append one event line to the newest segment, synced, or raise and leave it as it was."""
        append_whole(self._fd(self.segments[-1]), line)

    def peek(self) -> Record | None:
        """The first event not yet settled, None when there is none."""
        if self._peeked is None:
            self._peeked = self._read_at(self.delivered)
        return self._peeked

    def _read_at(self, at: Position) -> Record | None:
        while (read := read_line(self._fd(at.segment), at.offset, self._limit)) is None:
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
                count += count_lines(self._fd(number), at.offset if number == at.segment else 0)
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
