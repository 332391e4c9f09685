"""Where every event went, and what a capture counts: one vocabulary, its text made only here.

An event produced by a capture waits in one place (the outbox, or memory when the outbox cannot
take it) until it meets its :class:`Fate`: a transport took it, or it is kept in the quarantine
for a :class:`Reason` (logged whole when the quarantine file cannot be written). An
:class:`Outcome` is that fate with its reason, and whether the event was left in the outbox by an
earlier capture: such events are counted apart (``earlier in outbox``, ``replayed``).

:class:`Tally` counts outcomes, and a capture's own :class:`CaptureCount` (actions, errors,
datasets degraded), for the threads of a delivery; :class:`Counts` is a snapshot of it, read by
name (``counts.emitted``) or, as ``handle.counts`` has always been read, by its text
(``counts["quarantined (rejected)"]``). Every text said of counts, the names of the counts, the
line ``ol-subset run`` ends with and the clauses of ``close()``'s warning, is made here.

>>> str(Outcome(Fate.QUARANTINED, Reason.INVALID)), str(REPLAYED), str(EARLIER_IN_OUTBOX)
('quarantined (invalid)', 'replayed', 'earlier in outbox')
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TypeAlias

__all__ = [
    "EARLIER_IN_OUTBOX",
    "EMITTED",
    "IN_MEMORY",
    "IN_OUTBOX",
    "REPLAYED",
    "CaptureCount",
    "Counts",
    "Fate",
    "Outcome",
    "Places",
    "Reason",
    "Tally",
]


class Fate(Enum):
    """Where one event is: waiting to be sent, or where it ended. The value is its count's name."""

    IN_OUTBOX = "in outbox"
    """On local disk, not sent yet: the next capture on the outbox or ``ol-subset replay``
    sends it."""
    IN_MEMORY = "in memory"
    """Held in memory because the outbox could not take it, not sent yet."""
    EMITTED = "emitted"
    """A transport took it."""
    QUARANTINED = "quarantined"
    """Kept in the quarantine file, with its reason, never sent."""
    LOGGED = "quarantined to the log"
    """Meant for the quarantine, whose file could not be written: logged whole instead."""


class Reason(Enum):
    """Why an event went to the quarantine. The value is the record's ``reason``."""

    INVALID = "invalid"
    """Strict validation refused it."""
    REJECTED = "rejected"
    """The receiver answered HTTP 400, 413 or 422: it will never take it."""
    UNREADABLE = "unreadable"
    """A line of the outbox that is not a JSON object (or is over the line limit)."""
    OVER_MAX_EVENT_BYTES = "over max_event_bytes"
    """Capture could not make it fit ``max_event_bytes``."""
    SUBMITTED_AFTER_CLOSE = "submitted after close"
    """A listener call that raced ``close()``."""
    INTERNAL_ERROR = "internal error"
    """The outbox writer failed on it (a bug of ours): kept rather than lost."""
    UNDELIVERED = "undelivered"
    """Held in memory (the outbox could not take it) and not sent by ``close()``."""
    UNWRITTEN = "unwritten"
    """Still queued for a stalled outbox writer at ``close()``."""

    @property
    def unsent(self) -> bool:
        """A valid event kept only because it could not be sent (not one refused)."""
        return self in (Reason.UNDELIVERED, Reason.UNWRITTEN)


_KEPT = (Fate.QUARANTINED, Fate.LOGGED)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One count of events: a fate, its reason when kept, and whether the events were left by an
    earlier capture (sent first by the next one, or by ``ol-subset replay``).

    >>> str(Outcome(Fate.LOGGED, Reason.REJECTED, earlier=True))
    'replayed, quarantined to the log (rejected)'
    """

    fate: Fate
    reason: Reason | None = None
    earlier: bool = False

    def __post_init__(self) -> None:
        if (self.reason is not None) != (self.fate in _KEPT):
            raise ValueError(f"a reason is given for a kept event, and only then: {self!r}")
        if self.earlier and self.fate is Fate.IN_MEMORY:
            raise ValueError("an earlier capture's events are in its outbox, not in memory")

    def as_earlier(self) -> Outcome:
        """The same outcome, for an event an earlier capture left in the outbox."""
        return replace(self, earlier=True)

    def __str__(self) -> str:
        text = self.fate.value
        if self.reason is not None:
            text = f"{text} ({self.reason.value})"
        if not self.earlier:
            return text
        if self.fate is Fate.IN_OUTBOX:
            return "earlier in outbox"
        return "replayed" if self.fate is Fate.EMITTED else f"replayed, {text}"


IN_OUTBOX = Outcome(Fate.IN_OUTBOX)
IN_MEMORY = Outcome(Fate.IN_MEMORY)
EMITTED = Outcome(Fate.EMITTED)
EARLIER_IN_OUTBOX = IN_OUTBOX.as_earlier()
REPLAYED = EMITTED.as_earlier()


class CaptureCount(Enum):
    """What a capture counts of its own, beside its events. The value is the count's name."""

    ACTIONS = "actions"
    """Actions captured (each one run: a START and a COMPLETE or FAIL event)."""
    ERRORS = "errors"
    """Errors of capture's own, caught (each kind logged once)."""
    DATASETS_DEGRADED = "datasets degraded"
    """Datasets reported whole or left out (each said once in the log)."""


Key: TypeAlias = "Outcome | CaptureCount"
"""What a :class:`Tally` counts."""


@dataclass(frozen=True, slots=True)
class Places:
    """Where a capture's events go, for the text of its counts."""

    sink: str
    """The transport, described (scrubbed)."""
    outbox: Path
    quarantine: Path
    quarantine_error: str | None = None
    """Why the quarantine file could not be written, the last time it could not."""


class Counts(Mapping[str, int]):
    """Counts at one moment, never changed: by name (``counts.emitted``, :meth:`of`) or by text.

    As a mapping it is read by each count's text, as ``handle.counts`` always was: a count
    that never happened reads 0, as in a ``Counter``, and is not among the keys.

    >>> counts = Counts({IN_OUTBOX: 1, EMITTED: 2, CaptureCount.ACTIONS: 1})
    >>> counts.emitted, counts["in outbox"], counts["errors"], sorted(counts)
    (2, 1, 0, ['actions', 'emitted', 'in outbox'])
    """

    __slots__ = ("_by_key", "_by_text")

    def __init__(self, counts: Mapping[Key, int] | None = None) -> None:
        self._by_key = {key: n for key, n in (counts or {}).items() if n > 0}
        self._by_text = {_text(key): n for key, n in self._by_key.items()}

    def of(self, key: Key) -> int:
        return self._by_key.get(key, 0)

    def __getitem__(self, text: str) -> int:
        return self._by_text.get(text, 0)

    def __contains__(self, text: object) -> bool:
        return text in self._by_text

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_text)

    def __len__(self) -> int:
        return len(self._by_text)

    def __repr__(self) -> str:
        return f"Counts({self._by_text!r})"

    def __add__(self, other: Counts) -> Counts:
        total = dict(self._by_key)
        for key, n in other._by_key.items():
            total[key] = total.get(key, 0) + n
        return Counts(total)

    @property
    def actions(self) -> int:
        return self.of(CaptureCount.ACTIONS)

    @property
    def errors(self) -> int:
        return self.of(CaptureCount.ERRORS)

    @property
    def datasets_degraded(self) -> int:
        return self.of(CaptureCount.DATASETS_DEGRADED)

    @property
    def emitted(self) -> int:
        return self.of(EMITTED)

    @property
    def in_outbox(self) -> int:
        """This capture's events on disk, not sent yet."""
        return self.of(IN_OUTBOX)

    @property
    def earlier_in_outbox(self) -> int:
        """Events earlier captures left in the outbox, not sent yet."""
        return self.of(EARLIER_IN_OUTBOX)

    @property
    def replayed(self) -> int:
        """Events earlier captures left in the outbox, sent."""
        return self.of(REPLAYED)

    @property
    def settled(self) -> bool:
        """Whether none of this capture's events waits to be sent."""
        return not self.in_outbox and not self.of(IN_MEMORY)

    @property
    def unsent(self) -> int:
        """Valid events kept in the quarantine (or the log) only because they were not sent."""
        return sum(n for key, n in self._outcomes() if key.reason is not None and key.reason.unsent)

    def kept(self, fate: Fate | None = None, *, earlier: bool = False) -> int:
        """Events kept whatever the reason: in the quarantine file (``Fate.QUARANTINED``),
        logged whole (``Fate.LOGGED``), or either (None); this capture's, or those an earlier
        one left."""
        fates = _KEPT if fate is None else (fate,)
        return sum(n for key, n in self._outcomes() if key.fate in fates and key.earlier == earlier)

    def summary(self, places: Places) -> str:
        """One line on what a closed capture did: the actions, where the events went, what is
        left in the outbox or quarantine, the datasets degraded and the errors.

        >>> places = Places("the JSON Lines file /x/events.jsonl", Path("/x/o"), Path("/x/q"))
        >>> Counts({CaptureCount.ACTIONS: 2, EMITTED: 6}).summary(places)
        '2 action(s) captured; 6 event(s) sent to the JSON Lines file /x/events.jsonl'
        """
        in_file, logged = self.kept(Fate.QUARANTINED), self.kept(Fate.LOGGED)
        parts = [
            f"{self.actions} action(s) captured; {self.emitted} event(s) sent to {places.sink}"
        ]
        if self.in_outbox:
            parts.append(f"{self.in_outbox} left in the outbox {places.outbox}")
        if in_file:
            parts.append(f"{in_file} quarantined in {places.quarantine}")
        if logged:  # only what reached the file is said to be in it
            why = places.quarantine_error or "unwritable"
            parts.append(
                f"{logged} could not be written to {places.quarantine} ({why}): logged whole "
                "on lines starting 'OpenLineage event not quarantined'"
            )
        if self.datasets_degraded:
            parts.append(f"{self.datasets_degraded} dataset(s) degraded (see the log)")
        if self.errors:
            parts.append(f"{self.errors} capture error(s) (see the log)")
        return "; ".join(parts)

    def left_behind(self, places: Places) -> list[str]:
        """What ``close()`` did not deliver, one clause each (none when all went): events that
        stay in the outbox, and valid events kept unsent in the quarantine."""
        mine, earlier = self.in_outbox, self.earlier_in_outbox
        clauses = []
        if mine or earlier:
            clauses.append(
                f"{mine + earlier} event(s) stay in the outbox {places.outbox} ({mine} of "
                f"this run, {earlier} left by earlier ones): the next capture on this outbox "
                f"sends them, or run `ol-subset replay {shlex.quote(str(places.outbox))}`"
            )
        if self.unsent:
            clauses.append(
                f"{self.unsent} event(s) the outbox could not take are kept unsent in the "
                f"quarantine {places.quarantine} (or the log, if it cannot be written)"
            )
        return clauses

    def problems(self) -> list[str]:
        """Each count that means lost, late or failed lineage of this capture, as ``"<n> <its
        name>"``, in the order of the names: errors, events in the outbox, events kept.

        >>> Counts({CaptureCount.ERRORS: 1, EMITTED: 4, IN_OUTBOX: 2}).problems()
        ['1 errors', '2 in outbox']
        """
        return [f"{n} {text}" for text, n in sorted(self._problem_texts())]

    def _problem_texts(self) -> Iterator[tuple[str, int]]:
        for key, n in self._by_key.items():
            if key in (CaptureCount.ERRORS, IN_OUTBOX) or (
                isinstance(key, Outcome) and key.fate in _KEPT and not key.earlier
            ):
                yield _text(key), n

    def _outcomes(self) -> Iterator[tuple[Outcome, int]]:
        return ((key, n) for key, n in self._by_key.items() if isinstance(key, Outcome))


def _text(key: Key) -> str:
    return key.value if isinstance(key, CaptureCount) else str(key)


class Tally:
    """Counts shared by the threads of a delivery or a capture, and a way to wait on them.

    >>> tally = Tally()
    >>> tally.add(IN_OUTBOX, 2)
    >>> tally.move(IN_OUTBOX, EMITTED)
    >>> tally.snapshot()
    Counts({'in outbox': 1, 'emitted': 1})
    """

    def __init__(self) -> None:
        self._counts: dict[Key, int] = {}
        self._changed = threading.Condition()

    def add(self, key: Key, amount: int = 1) -> None:
        with self._changed:
            self._counts[key] = self._counts.get(key, 0) + amount
            self._changed.notify_all()

    def move(self, source: Outcome, target: Outcome) -> None:
        """One event from ``source`` to ``target``."""
        with self._changed:
            self._counts[source] = self._counts.get(source, 0) - 1
            self._counts[target] = self._counts.get(target, 0) + 1
            self._changed.notify_all()

    def snapshot(self) -> Counts:
        """The counts now."""
        with self._changed:
            return Counts(self._counts)

    def wait(self, done: Callable[[Counts], bool], deadline: float) -> bool:
        """Wait until ``done(counts)`` or ``deadline`` (``time.monotonic()``); which came."""
        with self._changed:
            while not done(Counts(self._counts)):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return True
