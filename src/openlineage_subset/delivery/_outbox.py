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
events, sending those first. A lane held by a running process is left to it.

What an outbox holds is sent as the user's own events, so, as ssh treats its keys, the outbox
folder, its lanes and the files read in them must be owned by the user (or root) and writable
by neither group nor others: otherwise the whole outbox is refused (:class:`UnsafeOutbox`, one
line naming the path and the fix), never read. Its parents are not checked (``/tmp`` is 1777).

A lane's segments and cursor are ``_lane``'s part, the whole lines in files ``_files``'s, and
sending what an outbox holds ``_sending``'s.
"""

from __future__ import annotations

import errno
import json
import os
import re
import threading
from contextlib import suppress
from enum import Enum
from pathlib import Path
from typing import Any

from openlineage_subset import OpenLineageSubsetError
from openlineage_subset.delivery._files import DIR_FLAGS
from openlineage_subset.delivery._lane import Lane, Record
from openlineage_subset.delivery._openlineage_client import to_json
from openlineage_subset.delivery._trust import UnsafeOutbox, ensure_trusted
from openlineage_subset.producer import scrubbed_logger

log = scrubbed_logger("openlineage_subset.outbox")

MAX_LANES = 32
"""Captures that can write one outbox at the same time."""

_LANE = re.compile(r"lane-(\d+)")


class OutboxClosed(OpenLineageSubsetError):
    """The outbox was closed (``close()`` gave up waiting); its files are not touched again."""


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
        self._dir = os.open(self.path, DIR_FLAGS)
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
