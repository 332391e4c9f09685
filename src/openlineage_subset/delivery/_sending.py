"""Where events go, and getting them there: transports, quarantine, retries.

:class:`Delivery` sends what an :class:`~openlineage_subset.delivery._outbox.Outbox` holds (and
events held in memory when the outbox cannot take them) through one transport, in order, at least
once, on a background thread, retrying with bounded exponential backoff; a receiver's rejection
goes to the :class:`Quarantine`. :func:`resolve_transport` finds the transport as a capture or
``ol-subset replay`` uses it: openlineage-python's configuration, else a JSON Lines file
(:class:`JsonLinesTransport`: fsync'd whole lines, 0600, no symlinks), never raising for a
setting. OpenLineage-generic: nothing here knows Spark.
"""

from __future__ import annotations

import errno
import json
import os
import random
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from openlineage_subset.delivery._fates import (
    EMITTED,
    IN_MEMORY,
    IN_OUTBOX,
    Fate,
    Outcome,
    Reason,
    Tally,
)
from openlineage_subset.delivery._files import (
    append_line,
    create_private,
    is_fifo,
    open_fifo,
    write_all,
)
from openlineage_subset.delivery._lane import Record
from openlineage_subset.delivery._openlineage_client import configured_transport, wire_event
from openlineage_subset.delivery._outbox import Outbox, event_line
from openlineage_subset.producer import (
    MARKER,
    is_secret_name,
    scrub_text,
    scrubbed_logger,
    user_info_end,
)

log = scrubbed_logger("openlineage_subset.delivery")

DEFAULT_OUTPUT = "openlineage-events.jsonl"
DEFAULT_QUARANTINE = "openlineage-quarantine.jsonl"
DEFAULT_OUTBOX = "openlineage-outbox"
DEFAULT_CLOSE_TIMEOUT = 5.0
"""Seconds ``close()`` keeps sending before it leaves what is pending in the outbox."""
_REJECTED_STATUSES = (400, 413, 422)


class Transport(Protocol):
    """What delivery needs of an openlineage-python transport."""

    def emit(self, event: Any) -> Any: ...


# Transports -----------------------------------------------------------------------------------


class JsonLinesTransport:
    """A transport appending each event as one JSON line to a local file (:func:`append_line`).

    A FIFO (named pipe) is kept open from the first event on, so that its reader sees one
    stream, not an end of file after each event; a FIFO that no process reads is an
    ``OSError`` (ENXIO), never lines written into a pipe no one reads.

    Example::

        transport = JsonLinesTransport.create("events.jsonl")  # OSError if it cannot be written
        transport.emit({"eventType": "START", ...})
    """

    kind = "jsonl"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._pipe: int | None = None
        self._pipe_lock = threading.Lock()

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> JsonLinesTransport:
        """A transport to ``path``, its folders and the file (0600) made now; ``OSError`` when
        they cannot be (a FIFO no process reads included)."""
        target = Path(path).absolute()
        transport = cls(target)
        if is_fifo(target):
            transport._pipe = open_fifo(target)
            return transport
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # mkdir's word for a folder in the path that is a file
            raise NotADirectoryError(
                errno.ENOTDIR, "a folder in its path is a file", str(target.parent)
            ) from None
        create_private(target)
        return transport

    def emit(self, event: Any) -> None:
        line = event_line(event)
        if self._pipe is None and not is_fifo(self.path):
            append_line(self.path, line)
            return
        with self._pipe_lock:
            if self._pipe is None:
                self._pipe = open_fifo(self.path)
            try:
                write_all(self._pipe, line)
            except OSError:  # its reader went away: the next event opens it anew
                os.close(self._pipe)
                self._pipe = None
                raise

    def __repr__(self) -> str:
        return f"JsonLinesTransport({str(self.path)!r})"


# Where events go ------------------------------------------------------------------------------


def configuration_sources() -> list[str]:
    """Where openlineage-python would find a transport configuration of the user's.

    The places it documents: ``OPENLINEAGE_DISABLED=true``, ``OPENLINEAGE_URL``,
    ``OPENLINEAGE_CONFIG``, ``OPENLINEAGE__TRANSPORT__*`` variables, and ``openlineage.yml`` in
    the working directory or ``~/.openlineage``. Names only: values may hold secrets.
    """
    names = ["OPENLINEAGE_DISABLED"] if _disabled() else []
    names += [name for name in ("OPENLINEAGE_URL", "OPENLINEAGE_CONFIG") if os.environ.get(name)]
    names += sorted(name for name in os.environ if name.startswith("OPENLINEAGE__TRANSPORT"))
    candidates = (Path.cwd() / "openlineage.yml", Path.home() / ".openlineage" / "openlineage.yml")
    return names + [str(path) for path in candidates if path.is_file()]


def _disabled() -> bool:
    return os.environ.get("OPENLINEAGE_DISABLED", "").strip().lower() == "true"


def _without_configured_secrets(text: str, environ: Mapping[str, str] = os.environ) -> str:
    """``text`` (openlineage-python's word on its configuration) scrubbed, and without the
    values of the ``OPENLINEAGE*`` variables that may hold a secret, which it may echo in a
    shape :func:`scrub_text` cannot tell (``user:token@host``, a bare API key): the user
    information of a URL's, and the value of one named like a secret (of 4 characters or more,
    so that ``a`` is not taken out of every word), go whole.

    >>> environ = {"OPENLINEAGE_URL": "etl:s3cr3t@lineage:5000", "OPENLINEAGE_API_KEY": "k3y0"}
    >>> _without_configured_secrets("bad URL etl:s3cr3t@lineage:5000 (key k3y0)", environ)
    'bad URL ***@lineage:5000 (key ***)'
    """
    for name, value in environ.items():
        if not name.startswith("OPENLINEAGE") or not value.strip():
            continue
        if name.endswith("URL"):
            rest = value.partition("://")[2] if "://" in value else value
            at = user_info_end("http", rest)
            if at > 0:
                text = text.replace(rest[: at + 1], f"{MARKER}@")
        elif is_secret_name(name) and len(value.strip()) >= 4:
            text = text.replace(value.strip(), MARKER)
    return scrub_text(text)


@dataclass(frozen=True)
class Sink:
    """Where events are sent, as :func:`resolve_transport` found it."""

    transport: Transport | None
    """None: nothing can be written; events stay in the outbox."""
    description: str
    problems: tuple[str, ...] = ()
    """One message per setting that could not be used, with what was done instead."""
    file: Path | None = None
    """The JSON Lines file, when that is where events go."""


def resolve_transport(output: str | os.PathLike[str] | None) -> Sink:
    """openlineage-python's configured transport, else JSON Lines appended to a file.

    Never raises. A configuration openlineage-python cannot use (``OPENLINEAGE_URL=not-a-url``,
    a transport type without its settings, settings without a transport type) falls back to
    the file; a file that cannot be written (``output``, else ``$OL_SUBSET_OUTPUT``, else
    ``openlineage-events.jsonl``) falls back to ``openlineage-events.jsonl`` in the working
    directory; when that fails too there is no transport. Each fallback is one entry of
    ``problems``, saying what to do.

    Example::

        sink = resolve_transport("/etc/hostname/events.jsonl")  # a path under a regular file
        sink.file, sink.problems
        # (PosixPath('/home/me/openlineage-events.jsonl'),
        #  ('cannot write events to /etc/hostname/events.jsonl (Not a directory): writing
        #    them to openlineage-events.jsonl in the working directory instead; give ...',))
    """
    configuration_problem = None
    sources = configuration_sources()
    if sources:
        try:
            transport, settings = configured_transport()
        except Exception as error:  # ValueError, RuntimeError, ImportError, KeyError...
            configuration_problem = (
                f"the OpenLineage transport configured by {', '.join(sources)} cannot be used "
                f"({_without_configured_secrets(f'{type(error).__name__}: {error}')})"
            )
        else:
            if settings.get("type") or os.environ.get("OPENLINEAGE_URL") or _disabled():
                return Sink(transport, f"{type(transport).__name__} (from {', '.join(sources)})")
            # openlineage-python's own fallback when it finds no transport type: the console
            configuration_problem = (
                f"{', '.join(sources)} name no OpenLineage transport type (openlineage-python "
                "would only print the events to its log)"
            )
    problems = []
    chosen = Path(output or os.environ.get("OL_SUBSET_OUTPUT") or DEFAULT_OUTPUT)
    for candidate in dict.fromkeys([chosen, Path(DEFAULT_OUTPUT)]):
        try:
            file_transport = JsonLinesTransport.create(candidate)
        except OSError as error:
            problems.append(f"cannot write events to {candidate} ({error.strerror or error})")
            continue
        if configuration_problem is not None:
            problems.insert(
                0,
                f"{configuration_problem}: events go to {candidate} instead; fix or unset "
                f"{', '.join(sources)}",
            )
        if candidate != chosen:
            problems[-1] += (
                f": writing them to {candidate} in the working directory instead; give "
                "--output, enable(output=...) or $OL_SUBSET_OUTPUT a file that can be written"
            )
        where = file_transport.path
        return Sink(file_transport, f"the JSON Lines file {where}", tuple(problems), where)
    if configuration_problem is not None:
        problems.insert(0, configuration_problem)
    problems.append(
        "no transport: events stay in the outbox; send them with `ol-subset replay` once a "
        "transport or --output works"
    )
    return Sink(None, "no transport", tuple(problems))


@dataclass(frozen=True)
class LocalPaths:
    """Where a capture keeps its quarantine and its outbox."""

    quarantine: Path
    outbox: Path


def local_paths(
    *,
    output: str | os.PathLike[str] | None,
    quarantine: str | os.PathLike[str] | None,
    outbox: str | os.PathLike[str] | None,
) -> LocalPaths:
    """The quarantine and the outbox: as given, else from the environment, else beside a file.

    Quarantine: ``quarantine``, ``$OL_SUBSET_QUARANTINE``, ``<output>.quarantine.jsonl``, else
    ``openlineage-quarantine.jsonl``. Outbox: ``outbox``, ``$OL_SUBSET_OUTBOX``,
    ``<output>.outbox``, ``<quarantine>.outbox`` when the quarantine was chosen, else
    ``openlineage-outbox``. ``output`` is the JSON Lines file chosen by the user, if any.

    >>> paths = local_paths(output="events.jsonl", quarantine=None, outbox=None)
    >>> str(paths.quarantine), str(paths.outbox)
    ('events.jsonl.quarantine.jsonl', 'events.jsonl.outbox')
    """
    chosen_quarantine = quarantine or os.environ.get("OL_SUBSET_QUARANTINE") or None
    if chosen_quarantine:
        quarantine_path = Path(chosen_quarantine)
    elif output:
        quarantine_path = Path(f"{output}.quarantine.jsonl")
    else:
        quarantine_path = Path(DEFAULT_QUARANTINE)
    chosen_outbox = outbox or os.environ.get("OL_SUBSET_OUTBOX") or None
    if chosen_outbox:
        outbox_path = Path(chosen_outbox)
    elif output:
        outbox_path = Path(f"{output}.outbox")
    elif chosen_quarantine:
        outbox_path = Path(f"{chosen_quarantine}.outbox")
    else:
        outbox_path = Path(DEFAULT_OUTBOX)
    return LocalPaths(quarantine_path, outbox_path)


# Quarantine, backoff --------------------------------------------------------------------------


class Quarantine:
    """Where events that must not be sent are kept: a JSON Lines file, else the log.

    Each record is ``{"reason": ..., details..., "event": ...}``. When the file cannot be
    written (no permission, disk full) the record is logged whole instead, once per event,
    after one error saying so: nothing is dropped, and the count says where it went.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).absolute()
        self.write_error: str | None = None
        """Why the file could not be written, the last time it could not (scrubbed)."""
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def keep(self, event: Any, reason: Reason, **details: Any) -> Outcome:
        """Keep ``event``; where it went, the file (``Fate.QUARANTINED``) or the log
        (``Fate.LOGGED``). Never raises."""
        record = {"reason": reason.value, **_scrubbed(details), "event": event}
        try:
            line = json.dumps(record, default=_enum_value_or_text)
        except Exception:  # a circular structure: its text is what can be kept
            line = repr(record)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            append_line(self.path, (line + "\n").encode())
        except Exception as error:
            return self.to_log(line, reason, f"{type(error).__name__}: {error}")
        if self._first(reason.value):
            log.error(
                "OpenLineage event %s (%s run %s): kept in %s; later ones like it are counted",
                reason.value,
                _field(event, "eventType"),
                _field(_field(event, "run"), "runId"),
                self.path,
            )
        return Outcome(Fate.QUARANTINED, reason)

    def to_log(self, line: str, reason: Reason, why: str) -> Outcome:
        """Log a record whole (the quarantine of last resort); ``Fate.LOGGED``."""
        why = scrub_text(why)
        self.write_error = why
        if self._first("unwritable"):
            log.error(
                "the quarantine %s cannot be written (%s): each event it should hold is logged "
                "whole instead, on a line starting 'OpenLineage event not quarantined'",
                self.path,
                why,
            )
        log.error("OpenLineage event not quarantined (%s): %s", reason.value, line)
        return Outcome(Fate.LOGGED, reason)

    def _first(self, kind: str) -> bool:
        with self._lock:
            if kind in self._said:
                return False
            self._said.add(kind)
            return True


def _scrubbed(value: Any) -> Any:
    """``value`` with every string in it scrubbed of credentials (an endpoint's URL in an
    error, a location quoted in a message); the event itself is built scrubbed already."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {key: _scrubbed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrubbed(item) for item in value]
    return value


def _enum_value_or_text(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else repr(value)


def _field(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


class Backoff:
    """Delays between attempts: 0.1 s doubling up to 5 s, each jittered down to half.

    >>> delays = Backoff(first=0.1, longest=0.4)
    >>> [0.05 <= delays.next() <= 0.1, 0.1 <= delays.next() <= 0.2, delays.next() <= 0.4]
    [True, True, True]
    """

    def __init__(self, first: float = 0.1, longest: float = 5.0) -> None:
        self.first = first
        self.longest = longest
        self._delay = first

    def reset(self) -> None:
        self._delay = self.first

    def next(self) -> float:
        delay = self._delay
        self._delay = min(delay * 2, self.longest)
        return random.uniform(delay / 2, delay)


# Delivery -------------------------------------------------------------------------------------


class _Stopped(Exception):
    pass


def _rejected(error: BaseException) -> bool:
    """An HTTP answer saying this event will never be accepted (not a passing outage)."""
    response = getattr(error, "response", None)
    return getattr(response, "status_code", None) in _REJECTED_STATUSES


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


class Delivery:
    """Sends an outbox's events, then events held in memory, through one transport, in order.

    One daemon thread. A failed send is retried (:class:`Backoff`) until it succeeds or
    :meth:`stop`; an HTTP 400, 413 or 422 answer is a rejection: the event is quarantined. The
    transport is called outside every lock, so when it hangs :meth:`drain` gives up at its
    deadline and the event stays in the outbox (a late success means it is sent twice).

    Counts in ``tally`` (see ``_fates``): this process's events move from ``IN_OUTBOX`` or
    ``IN_MEMORY`` to their outcome (``EMITTED``, or kept in the quarantine); events found in the
    outbox move the same way, counted as an earlier capture's (``Outcome.as_earlier``).

    Example::

        delivery = Delivery(outbox, transport, Quarantine("q.jsonl"), tally, sink="events.jsonl")
        delivery.drain(time.monotonic() + 5.0)
        left_in_memory = delivery.stop()
    """

    def __init__(
        self,
        outbox: Outbox | None,
        transport: Transport | None,
        quarantine: Quarantine,
        tally: Tally,
        *,
        sink: str,
    ) -> None:
        self.outbox = outbox
        self.transport = transport
        self.quarantine = quarantine
        self.tally = tally
        self.sink = scrub_text(sink)
        self.last_error: str | None = None
        """The last failure to send, scrubbed: it goes into logs and summaries."""
        self._memory: deque[dict[str, Any]] = deque()
        self._wake = threading.Condition()
        self._signals = 0
        self._idle_at = -1
        self._stopped = False
        self._stop = threading.Event()
        self._said: set[str] = set()
        self._reading = outbox is not None
        self._thread: threading.Thread | None = None
        if transport is not None:
            self._thread = threading.Thread(
                target=self._run, name="ol-subset-delivery", daemon=True
            )
            self._thread.start()

    def wake(self) -> None:
        """Say there is something new to send."""
        with self._wake:
            self._signals += 1
            self._wake.notify_all()

    def hold(self, event: dict[str, Any]) -> None:
        """Send ``event`` from memory (the outbox could not take it); counted ``in memory``."""
        with self._wake:
            self._memory.append(event)
            self.tally.add(IN_MEMORY)
            self._signals += 1
            self._wake.notify_all()

    def drain(self, deadline: float) -> bool:
        """Wait until nothing is left to send, or ``deadline`` (``time.monotonic()``); which."""
        if self._thread is None:
            return False
        with self._wake:
            self._signals += 1
            target = self._signals
            self._wake.notify_all()
            while self._idle_at < target and self._thread.is_alive():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._wake.wait(remaining)
            return self._thread.is_alive()

    def stop(self) -> list[dict[str, Any]]:
        """Stop sending (a send in flight is abandoned); the events still held in memory."""
        self._stop.set()
        with self._wake:
            self._stopped = True
            self._wake.notify_all()
            left = list(self._memory)
            self._memory.clear()
        return left

    def _run(self) -> None:
        backoff = Backoff()
        while not self._stop.is_set():
            try:
                self._step(backoff)
            except _Stopped:
                return
            except Exception as error:  # never lose the thread: say it once, wait, go on
                if self._first(f"internal {type(error).__name__}"):
                    log.exception("OpenLineage delivery hit an internal error; retrying")
                self._stop.wait(backoff.next())

    def _step(self, backoff: Backoff) -> None:
        with self._wake:
            seen = self._signals
        item = self._next()
        if item is None:
            self._save()
            with self._wake:
                while self._signals == seen and not self._stop.is_set():
                    self._idle_at = seen
                    self._wake.notify_all()
                    self._wake.wait()
            return
        if isinstance(item, Record) and item.event is None:
            line = item.line.decode(errors="replace").rstrip("\n")
            details = {} if item.problem is None else {"error": item.problem}
            self._settle(item, self.quarantine.keep(line, Reason.UNREADABLE, **details))
            return
        event = item.event if isinstance(item, Record) else item
        assert event is not None and self.transport is not None
        try:
            self.transport.emit(wire_event(event))
        except Exception as error:
            if _rejected(error):
                backoff.reset()
                kept = self.quarantine.keep(event, Reason.REJECTED, error=_describe(error))
                self._settle(item, kept)
                return
            self._failed(error)
            self._stop.wait(backoff.next())
            return
        backoff.reset()
        self._settle(item, EMITTED)

    def _next(self) -> Record | dict[str, Any] | None:
        if self.outbox is not None and self._reading:
            try:
                with self.outbox.lock:
                    if self.outbox.closed:
                        raise _Stopped
                    record = self.outbox.peek()
            except OSError as error:
                self._reading = False
                log.warning(
                    "cannot read the outbox %s (%s): its events stay there for the next "
                    "capture or `ol-subset replay`; new ones are sent from memory",
                    self.outbox.path,
                    error,
                )
                record = None
            if record is not None:
                return record
        with self._wake:
            return self._memory[0] if self._memory else None

    def _settle(self, item: Record | dict[str, Any], outcome: Outcome) -> None:
        if isinstance(item, Record):
            assert self.outbox is not None
            with self.outbox.lock:
                if self.outbox.closed:
                    raise _Stopped
                self.outbox.settle(item)
                if item.earlier:
                    self.tally.move(IN_OUTBOX.as_earlier(), outcome.as_earlier())
                else:
                    self.tally.move(IN_OUTBOX, outcome)
            return
        with self._wake:
            if self._stopped:
                raise _Stopped
            self._memory.popleft()
            self.tally.move(IN_MEMORY, outcome)

    def _save(self) -> None:
        if self.outbox is None or not self._reading:
            return
        with self.outbox.lock:
            if self.outbox.closed:
                raise _Stopped
            self.outbox.save()

    def _failed(self, error: BaseException) -> None:
        self.last_error = scrub_text(_describe(error))
        if self._first(type(error).__name__):
            where = f"the outbox {self.outbox.path}" if self.outbox is not None else "memory"
            log.warning(
                "OpenLineage delivery to %s failed (%s); events wait in %s and are retried",
                self.sink,
                self.last_error,
                where,
            )

    def _first(self, kind: str) -> bool:
        if kind in self._said:
            return False
        self._said.add(kind)
        return True
