"""A byte budget per event: every event fits, its datasets share the room, nothing unsound.

:func:`bound_event` turns one OpenLineage event into events that each serialise (as
:func:`~openlineage_subset._condense.json_size` measures, the longest form) to at most
``max_bytes``:

1. an event that fits is returned as it is;
2. strings of the run facets (an error's message and stack trace) that alone would break the
   budget are cut, with a marker saying how much was cut;
3. datasets too many for one event are spread over several events of the same run: the first
   keeps the event's type, the others are ``RUNNING`` events (before a terminal event, after a
   ``START``), as OpenLineage consumers gather a run's datasets from all of its events;
4. the subset conditions share the room left, fairly (a small one keeps its size, large ones get
   equal shares), and each is condensed soundly to its share
   (:func:`~openlineage_subset._condense.condense`); one that nothing sound fits loses its
   subset facet (the whole dataset), and ``report`` is told.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator
from typing import Any

from openlineage_subset._condense import condense, fair_shares, json_size

log = logging.getLogger("openlineage_subset")

Report = Callable[[str, str], None]
"""Told (dataset name, what happened) when a dataset loses its subset facet."""

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
    parts = _split(event, max_bytes)
    return [_fit_conditions(part, max_bytes, report) for part in parts]


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
    base = {k: v for k, v in event.items() if k not in ("inputs", "outputs")}
    if json_size(base) <= max_bytes // 2:
        return event
    target = json_size(base) - max_bytes // 4
    event = copy.deepcopy(event)
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
    terminal = event.get("eventType") in ("COMPLETE", "FAIL", "ABORT")
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
