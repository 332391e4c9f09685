"""Ingest's checking side: input lines to what the writer stores, one chunk of lines at a time.

:func:`check_chunk` is a pure function of its chunk, so that chunks can be checked in worker
processes and their outcomes stored in input order with the same result. Each line is parsed
strictly (a repeated key makes it invalid), validated, and turned into a
:class:`~._shapes.CheckedEvent` holding everything the writer needs:
the digest of the event's canonical JSON, the run's fields, and each dataset's condition as
canonical JSON with the partitions it lists (the shapes are in :mod:`._shapes`).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from openlineage_subset import (
    MAX_INTEGER_DIGITS,
    ParsedJson,
    SubsetDocumentError,
    UnusableJson,
    check_nesting,
    document_kind,
    is_blank,
    lone_surrogate,
    may_hold_surrogate,
    parse_json,
    read_json,
    validate,
    validate_within,
)
from openlineage_subset.lineage.ingestion._directories import may_be_partitioned, read_accesses
from openlineage_subset.lineage.ingestion._shapes import (
    Checked,
    CheckedAccess,
    CheckedEvent,
    Condition,
    Invalid,
    Item,
    Line,
    Skipped,
    Whole,
)
from openlineage_subset.lineage.model import (
    any_of_json,
    canonical,
    dimensions_columns_kinds,
    listed_partitions,
    listed_places,
    normal_time,
)
from openlineage_subset.lineage.store import Alias, kept_facets, other_names, run_parents
from openlineage_subset.producer import EVENT_TYPES

PLACES = (("inputs", "inputFacets", "input"), ("outputs", "outputFacets", "output"))

# A condition seen again (a run's START and COMPLETE, a partition list one job writes and the
# next reads) is not worked through twice; bounded, it costs a few MB at most.
_KNOWN_CONDITIONS: dict[str, Condition] = {}
_KNOWN_CONDITIONS_MAX = 256
_KNOWN_DIMENSIONS: dict[tuple[Any, ...], tuple[str, str, tuple[tuple[str, str], ...]]] = {}
_KNOWN_DIMENSIONS_MAX = 4096
# The placeholders that stand for conditions in the skeleton of an event (see _spell): a
# location condition holding a private use character no event needs and the condition's number;
# and in its shape, the strings standing for its run id and time (see _masked).
_CONDITION_MARK, _RUN_ID, _EVENT_TIME = "\ue000", "\ue001", "\ue002"
# The conditions found valid, by (their facet's _schemaURL, canonical JSON): an event whose
# conditions are all among them is validated with placeholders in their place (_spell).
_VALID_CONDITIONS: dict[tuple[str, str], None] = {}
_VALID_CONDITIONS_MAX = 1024
# The shapes of the events found valid (Spelled.shape): an event of a known shape whose
# conditions are known valid is valid, and is not validated again. Bounded by their length.
_VALID_SHAPES: dict[str, None] = {}
_VALID_SHAPES_CHARACTERS = 4_000_000
_valid_shapes_size = 0
_NOT_BRACKETS = bytes(set(range(256)) - set(b'"[]{}'))
_BRACKETS = bytes.maketrans(b"[]", b"{}")
_SHALLOW = 64


def check_chunk(items: list[Item], *, group: bool = True) -> tuple[list[Checked], list[Condition]]:
    """The outcome of each item of a chunk, in order (none for a blank line), and the
    conditions the events refer to. ``group``: read a dataset named as a partition directory
    as a partition of its table (see :mod:`._directories`)."""
    chunk = _Chunk(group)
    with _collector_paused():
        for item in items:
            match item:
                case Line(source, number, raw, offset):
                    chunk.line(source, number, raw, offset)
                case Whole(source, data, offset):
                    chunk.whole(source, data, offset)
                case _:  # found unreadable or invalid as it was read
                    chunk.outcomes.append(item)
    return chunk.outcomes, chunk.conditions


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a chunk is checked (when it was on).

    Parsed JSON holds no reference cycle: what checking an event leaves behind is freed as soon
    as it is dropped, and the collector's passes over the hundreds of objects each event is
    parsed into found nothing, at a sixth of the cost of checking it. Anything with a cycle
    made meanwhile (by another thread) is collected once it is back on.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class _Chunk:
    def __init__(self, group: bool = True) -> None:
        self.group = group
        """Whether a dataset named as a partition directory is read as a partition of its
        table (:mod:`._directories`; the store's setting ``partition_directories``)."""
        self.outcomes: list[Checked] = []
        self.conditions: list[Condition] = []
        self.numbers: dict[str, int] = {}

    def line(self, source: str, number: int | None, raw: bytes, offset: int) -> None:
        if is_blank(raw):
            return
        try:
            # A request's body (no line number) is one document, as a file read whole.
            document, spelled, levels = _read_line(raw, offset, one_line=number is not None)
        except UnusableJson as problem:
            self.outcomes.append(Invalid(source, number, str(problem)))
            return
        self.document(source, number, document, spelled, levels)

    def whole(self, source: str, data: bytes, offset: int) -> None:
        """A document read whole, or an array of them: each usable one is checked, as
        ``validate`` checks them."""
        try:
            parsed = parse_json(data, offset=offset, one_line=False)
        except UnusableJson as problem:
            self.outcomes.append(Invalid(source, None, str(problem)))
            return
        document = parsed.value
        if not isinstance(document, list):
            self.usable(source, parsed, document)
            return
        if not document:
            self.outcomes.append(Invalid(source, None, "empty array, expected documents"))
        for index, item in enumerate(document):
            self.usable(f"{source}[{index}]", parsed, item)

    def usable(self, source: str, parsed: ParsedJson, document: Any) -> None:
        refused = parsed.problem_in(document)
        if refused is None:
            self.document(source, None, document, None, None)
        else:
            self.outcomes.append(Invalid(source, None, refused))

    def document(
        self,
        source: str,
        line: int | None,
        document: Any,
        spelled: Spelled | None,
        levels: int | None,
    ) -> None:
        if (
            isinstance(document, dict)
            and "run" not in document
            and ("dataset" in document or "job" in document)
        ):
            self.outcomes.append(Skipped())  # a DatasetEvent or JobEvent: no run to attach it to
            return
        found, time, issues = _checked_quickly(document, spelled, levels)
        if found is not None:
            self.outcomes.append(Invalid(source, line, found, issues))
            return
        try:
            self.outcomes.append(self.event(source, line, document, time, spelled))
        except (ValueError, TypeError) as error:
            self.outcomes.append(Invalid(source, line, f"not stored: {error}"))

    def event(
        self,
        source: str,
        line: int | None,
        event: dict[str, Any],
        time: str,
        spelled: Spelled | None,
    ) -> CheckedEvent:
        spelled = _spell(event) if spelled is None else spelled
        text, conditions, misplaced = spelled.text, spelled.conditions, spelled.misplaced
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        job = event["job"]
        accesses, grouped = self.accesses(event, conditions)
        aliases = _other_names(event)
        return CheckedEvent(
            source=source,
            line=line,
            digest=digest,
            run_id=event["run"]["runId"],
            job_namespace=job["namespace"],
            job_name=job["name"],
            event_type=event["eventType"],
            event_time=time,
            accesses=accesses,
            facets=kept_facets(
                event, aliased=bool(misplaced) and any(READ_AS in n for n in misplaced)
            ),
            aliases=tuple(dict.fromkeys(aliases)) if aliases else (),
            misplaced=tuple(misplaced),
            producer=str(event.get("producer")) if misplaced else "",
            parents=run_parents(event["run"].get("facets")),
            grouped=grouped,
        )

    def accesses(
        self, event: dict[str, Any], conditions: list[tuple[Any, str] | None]
    ) -> tuple[tuple[CheckedAccess, ...], tuple[tuple[str, str, str], ...]]:
        """The event's accesses (inputs, then outputs), and the datasets it named as partition
        directories (see :meth:`paths`)."""
        accesses = []
        slots = iter(conditions)
        group = self.group
        for list_key, _, direction in PLACES:
            for dataset in event.get(list_key) or ():
                slot = next(slots)
                name = dataset["name"]
                if (slot is not None and slot[0].get("type") == "location") or (
                    group and may_be_partitioned(name)
                ):
                    return self.paths(event, conditions)  # only events with the shape pay
                index = -1 if slot is None else self.number(*slot)
                accesses.append(CheckedAccess(dataset["namespace"], name, direction, index))
        return tuple(accesses), ()

    def paths(
        self, event: dict[str, Any], conditions: list[tuple[Any, str] | None]
    ) -> tuple[tuple[CheckedAccess, ...], tuple[tuple[str, str, str], ...]]:
        """:meth:`accesses` with partitions read from paths (:mod:`._directories`): location
        conditions, and names of partition directories (when :attr:`group`)."""
        slots = iter(conditions)
        found = [
            (dataset["namespace"], dataset["name"], direction, next(slots))
            for list_key, _, direction in PLACES
            for dataset in event.get(list_key) or ()
        ]
        read, grouped = read_accesses(found, canonical, group=self.group)
        return tuple(
            CheckedAccess(namespace, name, direction, -1 if slot is None else self.number(*slot))
            for namespace, name, direction, slot in read
        ), grouped.names

    def number(self, condition: Any, text: str) -> int:
        """The condition's index in this chunk's conditions, adding it when new."""
        found = self.numbers.get(text)
        if found is None:
            found = self.numbers[text] = len(self.conditions)
            self.conditions.append(_condition(condition, text))
        return found


def _other_names(event: dict[str, Any]) -> list[Alias]:
    """The other names (a symlink, a storage location) the event's datasets' facets give them;
    looked for only in the facets that may hold one."""
    aliases: list[Alias] = []
    for list_key, _, _ in PLACES:
        for dataset in event.get(list_key) or ():
            facets = dataset.get("facets")
            if facets and ("symlinks" in facets or "storage" in facets or "catalog" in facets):
                aliases += other_names(dataset["namespace"], dataset["name"], facets)
    return aliases


def _condition(condition: Any, text: str) -> Condition:
    found = _KNOWN_CONDITIONS.get(text)
    if found is None:
        rows = []
        catalog: dict[tuple[str, tuple[tuple[str, str], ...]], None] = {}
        partitions, lists = listed_partitions(condition)
        for dimensions, identifier in partitions:
            key = tuple(dimensions.items())
            known = _KNOWN_DIMENSIONS.get(key)
            if known is None:
                if len(_KNOWN_DIMENSIONS) >= _KNOWN_DIMENSIONS_MAX:
                    _KNOWN_DIMENSIONS.clear()
                known = _KNOWN_DIMENSIONS[key] = dimensions_columns_kinds(dimensions)
            rows.append((known[0], identifier))
            catalog[known[1:]] = None
        shapes = tuple(dict.fromkeys(shape for shape, _ in catalog))
        kinds = tuple(dict.fromkeys(kind for _, column_kinds in catalog for kind in column_kinds))
        places = listed_places(condition)
        found = Condition(
            text, lists, tuple(rows), shapes, kinds, None if places is None else tuple(places)
        )
        if len(_KNOWN_CONDITIONS) >= _KNOWN_CONDITIONS_MAX:
            _KNOWN_CONDITIONS.clear()
        _KNOWN_CONDITIONS[text] = found
    return found


def _read_line(
    raw: bytes, offset: int = 0, *, one_line: bool = True
) -> tuple[Any, Spelled | None, int | None]:
    """The document of a line, strictly read (:func:`~openlineage_subset._json.read_json`:
    raises :class:`~openlineage_subset._json.UnusableJson`, in its words); with its canonical
    spelling (see :func:`_spelled`) and nesting depth when they came cheaply.

    Without a backslash in the text, every string in it is spelled as in canonical JSON, holds
    no surrogate, and each key is followed by a colon: the text has as many colons as the
    canonical JSON of what the plain parser kept, unless a key was repeated (whose colon, at
    least, was dropped with it). Such lines need no check of each object's keys as they are
    read, the slow part of the strict reader. The plain parser refuses NaN and Infinity, and
    a run of digits too long for an integer sends the line to the strict reader: whatever the
    quick read takes, the strict one takes alike.
    """
    if b"\\" in raw or _long_digits(raw):
        return _read_strictly(raw, offset, one_line)
    try:
        document = _PLAIN.decode(raw.decode("utf-8"))
        spelled = _spell(document)
    except (ValueError, RecursionError):
        return _read_strictly(raw, offset, one_line)  # the strict reader says why
    if raw.count(b":") != spelled.text.count(":"):
        return _read_strictly(raw, offset, one_line)  # a repeated key: the strict one names it
    levels = _depth(raw)
    if levels is None:
        try:
            levels = check_nesting(document, "document")
        except SubsetDocumentError:
            return _read_strictly(raw, offset, one_line)
    return document, spelled, levels


def _read_strictly(raw: bytes, offset: int, one_line: bool) -> tuple[Any, None, int | None]:
    """:func:`~openlineage_subset._json.read_json`, and the depth it measured."""
    parsed = parse_json(raw, offset=offset, one_line=one_line)
    problem = parsed.problem()
    if problem is not None:
        raise UnusableJson(problem)
    return parsed.value, None, parsed.levels


def _depth(raw: bytes) -> int | None:
    """How many levels of objects and arrays the JSON text ``raw`` (without a backslash) nests,
    when at most 64 and no string holds a bracket; else None.

    Kept to quotes and brackets, each string is a pair of quotes (with brackets between them
    when it holds some); with the empty pairs gone, the brackets are the structure, and
    removing the innermost pairs takes one pass per level.
    """
    shape = raw.translate(None, _NOT_BRACKETS).replace(b'""', b"")
    if b'"' in shape:
        return None
    shape = shape.translate(_BRACKETS)
    levels = 0
    while shape:
        if levels == _SHALLOW:
            return None
        shape = shape.replace(b"{}", b"")
        levels += 1
    return levels


class Spelled(NamedTuple):
    """What :func:`_spell` gives of a document."""

    text: str
    """Its canonical JSON."""
    conditions: list[tuple[Any, str] | None]
    """(condition, its canonical JSON) of each dataset, inputs then outputs (None: it has none)."""
    skeleton: Any
    """The document with a placeholder in the place of each condition (None: not made)."""
    keys: list[tuple[str, str]]
    """The key of each condition in :data:`_VALID_CONDITIONS`."""
    facets: list[dict[str, Any]]
    """The subset facet holding each of those conditions."""
    misplaced: list[str]
    """Where the document put a subset facet other than the spec's place
    (:func:`_aliased_slot`; each once)."""
    shape: str | None
    """The canonical JSON of the skeleton with its run id and time masked (None: not made):
    events of one shape whose conditions are valid are all valid or all invalid
    (:func:`_checked_quickly`)."""


def _spelled(document: Any) -> tuple[str, list[tuple[Any, str] | None]]:
    """:func:`canonical` of a document, and (condition, its canonical JSON) of each dataset of
    its inputs then outputs (None for a dataset without one), encoding each condition once."""
    spelled = _spell(document)
    return spelled.text, spelled.conditions


def _spell(document: Any) -> Spelled:
    """:func:`_spelled`, with the skeleton of the document, the keys of its conditions and its
    shape.

    The conditions are most of an event: the rest (the skeleton) is encoded with a placeholder
    in the place of each, a valid location condition holding a marker string, and each
    placeholder's text is replaced by its condition's. The run id and the event's time are
    encoded as markers too (the shape: what repeats from run to run of a job), then replaced by
    their text. Should the document hold a string that looks like a marker, it is encoded whole
    instead, and has no shape. The skeleton validates as the document does when its conditions
    are valid (:func:`_checked_quickly`).
    """
    if not isinstance(document, dict):
        return Spelled(canonical(document), [], None, [], [], [], None)
    skeleton = dict(document)
    found: list[tuple[Any, str] | None] = []
    keys: list[tuple[str, str]] = []
    subsets: list[dict[str, Any]] = []
    texts: list[str] = []
    aliases: list[str] = []
    for list_key, facets_key, _ in PLACES:
        items = document.get(list_key)
        if not isinstance(items, list):
            continue
        copied = []
        for dataset in items:
            slot = _condition_slot(dataset, facets_key)
            if slot is None:
                # Only a dataset without a subset facet in the spec's place is looked at again:
                # our own events never hold one elsewhere, and pay nothing for those that do.
                aliased = _aliased_slot(dataset, facets_key, aliases)
                found.append(aliased)
                copied.append(dataset)  # spelled whole: no placeholder, no validity assumed
                continue
            key, condition = slot
            text = canonical(condition)
            found.append((condition, text))
            facets = dict(dataset[facets_key])
            subset = facets["subset"]
            url = subset.get("_schemaURL")
            # known valid in the same place, under the same key, for the same facet schema
            keys.append((f"{facets_key}.{key} {url if isinstance(url, str) else ''}", text))
            subsets.append(subset)
            placeholder = {"type": "location", "locations": [f"{_CONDITION_MARK}{len(texts)}"]}
            facets["subset"] = {**subset, key: placeholder}
            copied.append({**dataset, facets_key: facets})
            texts.append(text)
        skeleton[list_key] = copied
    shape_of, masked = _masked(skeleton)
    shape = canonical(shape_of)
    whole = _unmasked(shape, texts, masked)
    if whole is None:
        return Spelled(canonical(document), found, skeleton, keys, subsets, aliases, None)
    return Spelled(whole, found, skeleton, keys, subsets, aliases, shape)


def _unmasked(shape: str, texts: list[str], masked: dict[str, str]) -> str | None:
    """The canonical JSON of an event from that of its shape (:func:`_spell`): each placeholder
    replaced by its condition's text, each masked string by its own; None when the event holds
    a marker character itself (which would make the replacing ambiguous).

    Each marker is in the shape exactly where it was put when it is there no more often than
    it was put: then each placeholder is found once, by ``str.find`` in the shape as encoded
    (not in what replaced another: a condition may hold a marker character), rather than by a
    regular expression tried at each quote (a tenth of checking an event).
    """
    if shape.count(_CONDITION_MARK) != len(texts) or any(
        shape.count(mark) != (mark in masked) for mark in (_RUN_ID, _EVENT_TIME)
    ):
        return None
    found = [(shape.find(f'"{mark}"'), 3, value) for mark, value in masked.items()]
    for index, text in enumerate(texts):
        placeholder = f'{{"locations":["{_CONDITION_MARK}{index}"],"type":"location"}}'
        found.append((shape.find(placeholder), len(placeholder), text))
    found.sort()
    if found and found[0][0] < 0:  # pragma: no cover - each was put there
        return None
    pieces: list[str] = []
    end = 0
    for start, length, value in found:
        pieces += (shape[end:start], value)
        end = start + length
    pieces.append(shape[end:])
    return "".join(pieces)


def _masked(skeleton: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The skeleton with its run id and time as markers, and the canonical JSON of each value
    masked, by its marker. The schemas ask no more of either than to be a string
    (tests/lineage/test_ingest_costs.py holds each bundled version to it): two events that differ
    only there validate alike."""
    shape = dict(skeleton)
    masked: dict[str, str] = {}
    time = skeleton.get("eventTime")
    if isinstance(time, str):
        shape["eventTime"] = _EVENT_TIME
        masked[_EVENT_TIME] = canonical(time)
    run = skeleton.get("run")
    if isinstance(run, dict) and isinstance(run.get("runId"), str):
        shape["run"] = {**run, "runId": _RUN_ID}
        masked[_RUN_ID] = canonical(run["runId"])
    return shape, masked


def _condition_slot(dataset: Any, facets_key: str) -> tuple[str, Any] | None:
    """A dataset's condition, and its key in the dataset's subset facet: the first of
    ``inputCondition`` and ``outputCondition`` that is an object, whatever the facet's place."""
    facets = dataset.get(facets_key) if isinstance(dataset, dict) else None
    facet = facets.get("subset") if isinstance(facets, dict) else None
    if not isinstance(facet, dict):
        return None
    for key in ("inputCondition", "outputCondition"):
        condition = facet.get(key)
        if isinstance(condition, dict):
            return key, condition
    return None


# Where other producers put the subset facet, by the spec's place of the list: the Go client's
# inputFacets.inputSubset, Airflow's all-facets system test's facets.inputSubset (and outputs').
READ_AS = " (read as "
_ALIASES = {
    "inputFacets": (("facets", "inputSubset"), ("inputFacets", "inputSubset")),
    "outputFacets": (("facets", "outputSubset"), ("outputFacets", "outputSubset")),
}


def _aliased_slot(dataset: Any, facets_key: str, notes: list[str]) -> tuple[Any, str] | None:
    """(condition, its canonical JSON) of the subset facets a dataset without one in the spec's
    place (``facets_key``.subset) holds under other keys (:data:`_ALIASES`), read as if they
    were there when they are valid subset facets: one's condition, or the ``OR`` of two that
    disagree (each part the dataset's, as either producer meant it); else None. Where each was
    is added to ``notes`` (once): read, or not read for being no valid subset facet, saying
    why; and that two read disagreed."""
    if not isinstance(dataset, dict):
        return None
    read: list[tuple[str, Any]] = []
    for place, key in _ALIASES[facets_key]:
        facets = dataset.get(place)
        facet = facets.get(key) if isinstance(facets, dict) else None
        if not isinstance(facet, dict):
            continue
        where = f"{place}.{key}"
        slot = _condition_slot({facets_key: {"subset": facet}}, facets_key)
        issues = validate(facet) if slot is not None else ()
        if slot is None or issues:
            why = f"{issues[0]}" if issues else "no inputCondition or outputCondition"
            note = f"{where}, not read: no valid subset facet ({why})"
        else:
            note = f"{where}{READ_AS}{facets_key}.subset)"
            read.append((where, slot[1]))
        if note not in notes:
            notes.append(note)
    distinct = {canonical(condition): condition for _, condition in read}
    if not distinct:
        return None
    if len(distinct) > 1:
        note = f"{' and '.join(where for where, _ in read)} disagree: read as their OR"
        if note not in notes:
            notes.append(note)
    condition = any_of_json(list(distinct.values()))
    return condition, canonical(condition)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_PLAIN = json.JSONDecoder(parse_constant=_no_constant)
# a run of digits longer than an integer may be (the strict reader refuses it, or Python does)
_LONG_DIGITS = re.compile(rb"[0-9]{%d}" % (MAX_INTEGER_DIGITS + 1))
_DIGITS = b"0123456789"


def _long_digits(raw: bytes) -> bool:
    """Whether ``raw`` holds a run of more than :data:`MAX_INTEGER_DIGITS` digits. Looked for
    only in a text holding that many digits: the search tries each digit of a run again (36 us
    in an event of 7 KB, most of its digits dates), the count is a pass (5 us)."""
    return (
        len(raw) > MAX_INTEGER_DIGITS
        and len(raw) - len(raw.translate(None, _DIGITS)) > MAX_INTEGER_DIGITS
        and _LONG_DIGITS.search(raw) is not None
    )


def parse(text: str) -> Any:
    """JSON text as ingest reads it: :func:`~openlineage_subset._json.read_json` (raises
    ValueError saying why not)."""
    return read_json(text)


def surrogate_problem(text: str | bytes, document: Any) -> str | None:
    """Why the document of a JSON text cannot be stored when it holds a lone surrogate, in
    ``validate``'s words (see :func:`openlineage_subset._lines.lone_surrogate`); else None.
    Only a text that spells a surrogate escape is walked."""
    return lone_surrogate(document) if may_hold_surrogate(text) else None


def problem(document: Any) -> str | None:
    """Why a parsed JSON document is not a RunEvent ingest can store, or None."""
    return _checked(document, None).problem


class Verdict(NamedTuple):
    """What :func:`_checked` finds of a document."""

    problem: str | None
    """Why it cannot be stored (None: it can)."""
    time: str
    """The event's time in stored form ("" with a problem)."""
    issues: tuple[str, ...]
    """Every issue the validation found (none when the document did not get that far, or met
    the schema)."""


def _checked_quickly(document: Any, spelled: Spelled | None, levels: int | None) -> Verdict:
    """:func:`_checked`, validating no more of the document than is new.

    Valid conditions leave no issue and change no other: the skeleton (:func:`_spell`) has the
    document's issues, at the same places, when each condition is valid in its facet. So an
    event whose shape (its skeleton but for its run id and time) was found valid needs only its
    conditions not yet known valid checked, each in its facet, as validation checks the facet
    (a run's COMPLETE after its START, the next day's run of a job); when its conditions are all
    known valid, only its skeleton is validated (the partitions one job writes and the next
    reads). Whatever finds an issue is validated again whole, for the issues in its words.
    """
    if spelled is None or spelled.skeleton is None:
        return _checked(document, levels)
    keys = spelled.keys
    unknown = [index for index, key in enumerate(keys) if key not in _VALID_CONDITIONS]
    shape = spelled.shape
    if shape is not None and shape in _VALID_SHAPES and levels is not None:
        if all(_valid_facet(spelled.facets[index], levels) for index in unknown):
            _known_valid([keys[index] for index in unknown], None)
            return _usable(document)
        return _checked(document, levels)
    found = _checked(document if unknown else spelled.skeleton, levels)
    if found.problem is None:
        _known_valid([keys[index] for index in unknown], shape)
    return found


def _valid_facet(facet: dict[str, Any], levels: int) -> bool:
    """Whether a subset facet is valid as validation checks it in an event (a facet whose keys
    make it read as another kind of document is not said valid)."""
    return document_kind(facet) == "facet" and not validate_within(facet, levels)


def _known_valid(keys: list[tuple[str, str]], shape: str | None) -> None:
    """Remember conditions (by key) and a shape found valid, within the caches' bounds."""
    global _valid_shapes_size  # noqa: PLW0603 - the bound of _VALID_SHAPES
    if keys:
        if len(_VALID_CONDITIONS) + len(keys) > _VALID_CONDITIONS_MAX:
            _VALID_CONDITIONS.clear()
        _VALID_CONDITIONS.update(dict.fromkeys(keys))
    if shape is not None:
        if _valid_shapes_size + len(shape) > _VALID_SHAPES_CHARACTERS:
            _VALID_SHAPES.clear()
            _valid_shapes_size = 0
        _VALID_SHAPES[shape] = None
        _valid_shapes_size += len(shape)


def _checked(document: Any, levels: int | None) -> Verdict:
    """:func:`problem`, and the event's time in stored form. ``levels``: how deep the document
    nests, when known (at most 64; a parsed document holds no cycle)."""
    if not isinstance(document, dict):
        kind = type(document).__name__
        return _refused(f"expected an OpenLineage RunEvent (a JSON object), got {kind}")
    try:
        issues = validate(document) if levels is None else validate_within(document, levels)
    except SubsetDocumentError as error:  # pragma: no cover - validate() reports, not raises
        return _refused(str(error))
    if issues:
        more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
        found = tuple(str(issue) for issue in issues)
        return Verdict(f"invalid RunEvent: {issues[0]}{more}", "", found)
    return _usable(document)


def _usable(document: dict[str, Any]) -> Verdict:
    """What lineage needs of a valid event beyond the schema (a run id, a known event type, a
    time it can read, a job's names), and its time in stored form."""
    run, job = document.get("run"), document.get("job")
    if not isinstance(run, dict) or not isinstance(run.get("runId"), str):
        return _refused("invalid RunEvent: $.run.runId: missing; lineage needs the run id")
    if document.get("eventType") not in EVENT_TYPES:
        return _refused(
            f"invalid RunEvent: $.eventType: {document.get('eventType')!r}; lineage needs one "
            f"of {', '.join(EVENT_TYPES)}"
        )
    time = normal_time(document.get("eventTime"))
    if time is None:
        return _refused(
            f"invalid RunEvent: $.eventTime: {document.get('eventTime')!r} is not an ISO-8601 "
            "time such as '2024-10-15T10:00:00Z'"
        )
    if not isinstance(job, dict) or not all(
        isinstance(job.get(key), str) for key in ("namespace", "name")
    ):
        return _refused("invalid RunEvent: $.job: lineage needs the job's namespace and name")
    return Verdict(None, time, ())


def _refused(problem: str) -> Verdict:
    return Verdict(problem, "", ())
