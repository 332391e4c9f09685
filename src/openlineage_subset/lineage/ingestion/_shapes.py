"""The shapes that cross ingest's rooms: what the reader hands the checker, what checking gives
the writer, and what the writer says became of each.

A chunk of input is a list of :data:`Item` (a :class:`Line`, a :class:`Whole` document, or an
input already found :class:`Unreadable` or :class:`Invalid`); checking it
(:func:`~._checker.check_chunk`) gives one :data:`Checked` per item that is not a blank line,
in order, and the :class:`Condition` values its events refer to by index. Storing them
(:class:`~._writer.Writer`) tells what became of each, an :data:`EventOutcome`: the one type
an outcome has from ingest to the service's HTTP status. Every shape is a frozen slotted
dataclass: they are pickled to and from the worker processes (:mod:`._workers`), and read
with ``match``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from openlineage_subset.lineage.store import Alias, RunParents

_Shape = TypeVar("_Shape")


def _pickled_by_fields(cls: type[_Shape]) -> type[_Shape]:
    """A frozen slotted dataclass pickled as a call of its class with its fields. Unpickled the
    default way, each field is set by a Python loop: twice the cost, paid by the process that
    stores for every event a worker checked."""
    values = operator.attrgetter(*(field.name for field in fields(cls)))  # type: ignore[arg-type]

    def __reduce__(self: _Shape) -> tuple[type[_Shape], tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[assignment,method-assign]
    return cls


__all__ = [
    "Alias",
    "AlreadyStored",
    "Checked",
    "CheckedAccess",
    "CheckedEvent",
    "Condition",
    "EventOutcome",
    "Invalid",
    "Item",
    "Line",
    "RunParents",
    "Skipped",
    "Stored",
    "Unreadable",
    "Whole",
]


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Line:
    """One line of JSON Lines (or a request's body), to be checked as one event."""

    source: str
    number: int | None
    """The line's number in its file, from 1; None for a request's body, which is read as
    one document (its errors name a line and a column, as a file's read whole)."""
    raw: bytes
    offset: int = 0
    """Where ``raw`` starts in its input, in bytes (a UTF-8 error names the byte)."""


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Whole:
    """A ``.json`` file that is one document (or an array of them) over several lines."""

    source: str
    data: bytes
    offset: int = 0
    """Where ``data`` starts in its input, in bytes (after a byte order mark)."""


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Unreadable:
    """An input that could not be read at all: missing, a read error, an empty folder."""

    source: str
    message: str


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Invalid:
    """A line (or document) that is not a RunEvent ingest can store, and why."""

    source: str
    line: int | None
    message: str
    issues: tuple[str, ...] = ()
    """Every issue the validation found, when it found some (``message`` names the first)."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A DatasetEvent or JobEvent: no run to attach it to."""


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class CheckedAccess:
    """A dataset an event reads or writes."""

    namespace: str
    name: str
    direction: str
    """``input`` or ``output``: the event's list the dataset is in."""
    condition: int
    """The index of its subset condition among the chunk's conditions; -1 for none (the
    dataset has no subset facet: it says nothing about the subset)."""


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class CheckedEvent:
    """A valid RunEvent, with everything the writer stores of it."""

    source: str
    line: int | None
    digest: str
    """SHA-256 of the event's canonical JSON: one per event however it is spelled."""
    run_id: str
    job_namespace: str
    job_name: str
    event_type: str
    event_time: str
    """In stored form (:func:`~openlineage_subset.lineage.model._time.normal_time`)."""
    accesses: tuple[CheckedAccess, ...]
    """Each input, then each output."""
    facets: bytes | None
    """What :func:`~openlineage_subset.lineage.store._facets.kept_facets` keeps of the event."""
    aliases: tuple[Alias, ...] = ()
    """The other names its datasets' facets give them (most events: none)."""
    misplaced: tuple[str, ...] = ()
    """Where the event put a subset facet other than the spec's place, each once
    (``facets.inputSubset (read as inputFacets.subset)``); empty for nearly every event."""
    producer: str = ""
    """The event's ``producer``, kept with ``misplaced`` only: their note names it."""
    parents: RunParents | None = None
    """Its run's parent, root and orchestrator task (None: its facets name none)."""
    grouped: tuple[tuple[str, str, str], ...] = ()
    """(namespace, name, table root) of each dataset it named as a partition directory, read
    as a partition of its table (:mod:`~openlineage_subset.lineage.ingestion._directories`)."""

    @property
    def where(self) -> str:
        """The event's source, with its line when it has one (as ``events.source`` holds it)."""
        return self.source if self.line is None else f"{self.source}:{self.line}"


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Condition:
    """A subset condition as the writer stores it."""

    text: str
    """Its canonical JSON."""
    lists_only: bool
    """Whether it only lists partitions (see
    :func:`~openlineage_subset.lineage.ingestion._checker.listed_partitions`)."""
    partitions: tuple[tuple[str, str | None], ...]
    """(canonical dimensions, identifier) of each partition it lists."""
    column_sets: tuple[str, ...]
    """The distinct column sets of those partitions (canonical JSON arrays)."""
    column_kinds: tuple[tuple[str, str], ...]
    """Their distinct (column, kind of value)."""
    places: tuple[str, ...] | None
    """The places whose list decides where it may have touched (see
    :func:`~openlineage_subset.lineage.model.listed_places`); None: it may touch any."""


@dataclass(frozen=True, slots=True)
class Stored:
    """An event stored by this writer."""

    event: CheckedEvent


@dataclass(frozen=True, slots=True)
class AlreadyStored:
    """An event stored before (the same canonical JSON): nothing changed."""

    event: CheckedEvent


Item = Line | Whole | Unreadable | Invalid
"""What a chunk holds: the reader hands over what it could not read or use as it is."""

Checked = CheckedEvent | Invalid | Skipped | Unreadable
"""What checking an item gives."""

EventOutcome = Stored | AlreadyStored | Invalid | Skipped | Unreadable
"""What became of a checked item once stored: an event the database refused is
:class:`Invalid` (``not stored: ...``)."""
