"""Whole lines in files, through file descriptors: appended and synced, read back, counted.

Under an outbox's lanes (``_lane``) and the files an outbox shares with others, the JSON Lines
output and the quarantine (``_sending``).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Callable
from contextlib import suppress

from openlineage_subset.producer import scrubbed_logger

log = scrubbed_logger("openlineage_subset.outbox")

_LOCK_WAIT = 2.0
_CHUNK = 1 << 16
_HEAD = 4096
"""Bytes of a line over the line limit kept in its place, for the quarantine."""
FILE_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_sync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)


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
    fd = os.open(path, FILE_FLAGS, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            write_all(fd, line)
            return
        _lock_briefly(fd)
        try:
            cut = cut_torn_tail(fd)
            if cut:
                log.warning("cut a torn last line (%d bytes) off %s before appending", cut, path)
            append_whole(fd, line)
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


def append_whole(fd: int, line: bytes) -> None:
    """Write and sync ``line`` at the end of a regular file, or leave the file as it was."""
    start = os.fstat(fd).st_size
    try:
        write_all(fd, line)
        _sync(fd)
    except OSError:
        with suppress(OSError):
            os.ftruncate(fd, start)
        raise


def cut_torn_tail(fd: int) -> int:
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


def read_line(fd: int, offset: int, limit: int) -> tuple[bytes, int, bool] | None:
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


def count_lines(fd: int, offset: int) -> int:
    """The lines from ``offset`` to the end of the file, a torn last one aside."""
    count = 0
    at = offset
    while chunk := os.pread(fd, _CHUNK, at):
        count += chunk.count(b"\n")
        at += len(chunk)
    return count


def create_private(path: str | os.PathLike[str]) -> None:
    """Create the file ``path`` (0600, never through a symlink) unless it exists; ``OSError``
    when it cannot be opened for appending."""
    os.close(os.open(path, FILE_FLAGS, 0o600))
