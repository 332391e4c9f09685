"""A byte budget per event: every event fits, its datasets share the room, nothing unsound.

:func:`bound_event` turns one OpenLineage event into events that each serialise (as
:func:`~openlineage_subset.producer._condense.json_size` measures, the longest form) to at most
``max_bytes``:

1. an event that fits is returned as it is;
2. strings of the run facets (an error's message and stack trace) that alone would break the
   budget are cut, with a marker saying how much was cut;
3. other facets too large for the budget are left out, largest first, and logged (run and job
   facets, when the event without its datasets still takes more than half the budget) or
   reported (a dataset's facets other than the subset facet, beyond half the budget): a facet
   is kept whole or not at all, as a cut facet would no longer say what its schema says;
4. datasets too many for one event are spread over several events of the same run: the first
   keeps the event's type, the others are ``RUNNING`` events (before a terminal event, after a
   ``START``), as OpenLineage consumers gather a run's datasets from all of its events;
5. the subset conditions share the room left, fairly (a small one keeps its size, large ones get
   equal shares), and each is condensed soundly to its share
   (:func:`~openlineage_subset.producer._condense.condense`); one that nothing sound fits loses its
   subset facet (the whole dataset), and ``report`` is told.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from openlineage_subset.producer._condense import condense, fair_shares, json_size
from openlineage_subset.producer._degrade import Report
from openlineage_subset.producer._events import TERMINAL_EVENT_TYPES
from openlineage_subset.producer._secrets import scrubbed_logger

log = scrubbed_logger("openlineage_subset.producer")

MIN_EVENT_BYTES = 65_536
"""The smallest budget: room for the longest path a file system allows, escaped, and facets."""
_SECTIONS = (
    ("inputs", "inputFacets", "inputCondition"),
    ("outputs", "outputFacets", "outputCondition"),
)
_KEEP_CHARACTERS = 2_000  # of a cut string: its start, where the message is
_CUT_MARKER = (
    " ... [cut by openlineage-subset: {cut} of {total} characters left out to keep the event "
    "under {budget} bytes]"
)


def bound_event(
    event: dict[str, Any], max_bytes: int, *, report: Report | None = None
) -> list[dict[str, Any]]:
    """``event`` as one or more events of at most ``max_bytes`` each, saying the same or less
    precisely (never less soundly).

    >>> from openlineage_subset import dump, field
    >>> wide = dump(field("id").isin(range(10_000, 30_000)))
    >>> facet = {"_producer": "p", "_schemaURL": "s", "inputCondition": wide}
    >>> event = {"eventType": "COMPLETE", "run": {"runId": "r"}, "outputs": [], "inputs": [
    ...     {"namespace": "file", "name": "/lake/a", "inputFacets": {"subset": facet}}]}
    >>> [bounded] = bound_event(event, 65_536)
    >>> bounded["inputs"][0]["inputFacets"]["subset"]["inputCondition"]["type"]
    'binary'
    >>> json_size(bounded) <= 65_536 < json_size(event)
    True
    """
    if max_bytes < MIN_EVENT_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_EVENT_BYTES}, got {max_bytes}")
    if json_size(event) <= max_bytes:
        return [event]
    report = report or _log_report
    event = _cut_run_facets(event, max_bytes)
    event = _drop_large_facets(event, max_bytes, report)
    parts = [_fit_conditions(part, max_bytes, report) for part in _split(event, max_bytes)]
    for part in parts:
        if json_size(part) > max_bytes:  # only fields no facet holds (a name of megabytes)
            raise ValueError(
                f"the event cannot be made to fit in {max_bytes} bytes: what is left of it "
                f"without facets takes {json_size(part)}"
            )
    return parts


def _log_report(dataset: str, what: str) -> None:
    log.warning("%s: %s", dataset, what)


def _subset_places(event: dict[str, Any]) -> Iterator[tuple[str, int, str, str]]:
    """(section, index, facets key, condition key) of every subset condition in ``event``."""
    for section, facets_key, condition_key in _SECTIONS:
        for index, dataset in enumerate(event.get(section) or ()):
            facet = (dataset.get(facets_key) or {}).get("subset")
            if isinstance(facet, dict) and isinstance(facet.get(condition_key), dict):
                yield section, index, facets_key, condition_key


def _without_conditions(event: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy whose datasets hold no subset condition (what the conditions share)."""
    skeleton = dict(event)
    for section, _, _ in _SECTIONS:
        if section in event:
            skeleton[section] = list(event[section])
    for section, index, facets_key, condition_key in _subset_places(event):
        dataset = dict(skeleton[section][index])
        facets = dict(dataset[facets_key])
        facets["subset"] = {k: v for k, v in facets["subset"].items() if k != condition_key}
        dataset[facets_key] = facets
        skeleton[section][index] = dataset
    return skeleton


def _cut_run_facets(event: dict[str, Any], max_bytes: int) -> dict[str, Any]:
    """The event with its longest run-facet strings cut, if the event without its datasets
    would take more than half the budget: then down to a quarter, so datasets keep room."""
    base = _base(event)
    if json_size(base) <= max_bytes // 2:
        return event
    target = json_size(base) - max_bytes // 4
    if "run" in event:  # only run facets are cut: the rest is shared with the event given
        event = {**event, "run": copy.deepcopy(event["run"])}
    strings = sorted(_strings((event.get("run") or {}).get("facets") or {}), key=lambda s: -s[2])
    for holder, key, _ in strings:
        text = holder[key]
        if target <= 0:
            break
        if len(text) <= 2 * _KEEP_CHARACTERS:
            continue
        keep = len(text)
        while True:  # a character takes one to twelve bytes of JSON: measure what a cut saves
            keep = max(_KEEP_CHARACTERS, keep - target - 300)
            marker = _CUT_MARKER.format(cut=len(text) - keep, total=len(text), budget=max_bytes)
            shorter = text[:keep] + marker
            saved = json_size(text) - json_size(shorter)
            if saved >= target or keep == _KEEP_CHARACTERS:
                break
        holder[key] = shorter
        target -= saved
    return event


def _drop_large_facets(event: dict[str, Any], max_bytes: int, report: Report) -> dict[str, Any]:
    """The event without the facets that leave too little room, largest first: run and job
    facets while the event without datasets takes more than half the budget; a dataset's facets
    (all but its subset facet) while the dataset takes more than half of what is left."""
    event = dict(event)
    holders = []
    for key in ("run", "job"):
        if isinstance(event.get(key), dict) and isinstance(event[key].get("facets"), dict):
            event[key] = {**event[key], "facets": dict(event[key]["facets"])}
            holders.append(event[key]["facets"])
    while json_size(_base(event)) > max_bytes // 2:
        found = [
            (json_size(facet), key, facets) for facets in holders for key, facet in facets.items()
        ]
        if not found:
            break
        largest, key, facets = max(found, key=lambda item: item[0])
        del facets[key]
        log.warning(
            "facet %r (%d bytes) left out of an event of job %r: the event would not fit in %d "
            "bytes",
            key,
            largest,
            (event.get("job") or {}).get("name"),
            max_bytes,
        )
    room = (max_bytes - json_size(_base(event))) // 2
    for section, io_key, _ in _SECTIONS:
        if not isinstance(event.get(section), list):
            continue
        event[section] = [
            _dataset_within(dataset, io_key, room, max_bytes, report)
            if isinstance(dataset, dict) and json_size(dataset) > room
            else dataset
            for dataset in event[section]
        ]
    return event


def _base(event: dict[str, Any]) -> dict[str, Any]:
    """The event without its datasets."""
    return {k: v for k, v in event.items() if k not in ("inputs", "outputs")}


def _dataset_within(
    dataset: dict[str, Any], io_key: str, room: int, max_bytes: int, report: Report
) -> dict[str, Any]:
    """The dataset keeping, smallest first, those of its facets (but the subset facet, which is
    condensed later) that fit in ``room``; each one left out is reported."""
    original = dataset
    dataset = dict(dataset)
    others = []
    for key in ("facets", io_key):
        if isinstance(dataset.get(key), dict):
            dataset[key] = {n: f for n, f in dataset[key].items() if (key, n) == (io_key, "subset")}
            others += [(json_size(f), key, n) for n, f in original[key].items()]
    used = json_size(dataset)
    for size, key, name in sorted(others):
        if (key, name) == (io_key, "subset"):
            continue
        if used + size + len(name) + 6 <= room:
            dataset[key][name] = original[key][name]
            used += size + len(name) + 6
        else:
            report(
                str(dataset.get("name")),
                f"facet {name!r} ({size} bytes) left out: the event would not fit in "
                f"{max_bytes} bytes",
            )
    return dataset


def _strings(value: Any) -> Iterator[tuple[Any, Any, int]]:
    """(container, key, JSON size) of every string in ``value``, depth first."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(item, str):
            yield value, key, json_size(item)
        elif isinstance(item, (dict, list)):
            yield from _strings(item)


def _split(event: dict[str, Any], max_bytes: int) -> list[dict[str, Any]]:
    """The event, and RUNNING events of the same run for datasets beyond what one can hold.

    Each part's datasets, without their conditions, take at most half the budget (the other
    half is for their conditions); a dataset too large for that gets a part of its own.
    """
    skeleton = _without_conditions(event)
    if json_size(skeleton) <= max_bytes // 2 or not (event.get("inputs") or event.get("outputs")):
        return [event]
    base = {k: v for k, v in event.items() if k not in ("inputs", "outputs")}
    room = max_bytes // 2 - json_size({**base, "inputs": [], "outputs": []})
    chunks: list[dict[str, list[Any]]] = [{"inputs": [], "outputs": []}]
    used = 0
    for section, _, _ in _SECTIONS:
        for index, dataset in enumerate(event.get(section) or ()):
            size = json_size(skeleton[section][index]) + 2
            if used + size > room and (chunks[-1]["inputs"] or chunks[-1]["outputs"]):
                chunks.append({"inputs": [], "outputs": []})
                used = 0
            chunks[-1][section].append(dataset)
            used += size
    run = dict(event.get("run") or {})
    if isinstance(run.get("facets"), dict):  # an error belongs to the event that ends the run
        run["facets"] = {k: v for k, v in run["facets"].items() if k != "errorMessage"}
    running = {"eventType": "RUNNING", "run": run}
    first = {**base, **chunks[0]}
    others = [{**base, **running, **chunk} for chunk in chunks[1:]]
    terminal = event.get("eventType") in TERMINAL_EVENT_TYPES
    return [*others, first] if terminal else [first, *others]


def _fit_conditions(event: dict[str, Any], max_bytes: int, report: Report) -> dict[str, Any]:
    """The event with its subset conditions condensed to fair shares of the room left."""
    places = list(_subset_places(event))
    if json_size(event) <= max_bytes or not places:
        return event
    conditions = [
        event[section][index][facets_key]["subset"][condition_key]
        for section, index, facets_key, condition_key in places
    ]
    sizes = [json_size(condition) for condition in conditions]
    room = max_bytes - json_size(_without_conditions(event)) - 32 * len(places)
    for _ in range(4):  # the room is measured but for separators: check, and retry smaller
        fitted, dropped = _with_conditions(event, places, conditions, fair_shares(sizes, room))
        overflow = json_size(fitted) - max_bytes
        if overflow <= 0:
            break
        room -= overflow + 64
    else:
        fitted, dropped = _with_conditions(event, places, conditions, [0] * len(places))
    for name, share in dropped:
        report(
            name,
            f"subset facet left out: no sound condition fits in its share ({share} bytes) of "
            "the event's byte budget, so the whole dataset is claimed",
        )
    return fitted


def _with_conditions(
    event: dict[str, Any],
    places: list[tuple[str, int, str, str]],
    conditions: list[Any],
    shares: list[int],
) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """The event with each condition condensed to its share; and the datasets that lost it."""
    fitted = dict(event)
    for section, _, _ in _SECTIONS:
        if section in event:
            fitted[section] = list(event[section])
    dropped = []
    for (section, index, facets_key, condition_key), condition, share in zip(
        places, conditions, shares, strict=True
    ):
        if json_size(condition) <= share:
            continue
        condensed = condense(condition, share).condition if share > 0 else None
        dataset = dict(fitted[section][index])
        facets = dict(dataset[facets_key])
        if condensed is None:
            del facets["subset"]
            dropped.append((str(dataset.get("name")), share))
        else:
            facets["subset"] = {**facets["subset"], condition_key: condensed}
        if facets:
            dataset[facets_key] = facets
        else:
            dataset.pop(facets_key)
        fitted[section][index] = dataset
    return fitted, dropped
