"""The facets the lineage database keeps of each event, for the UI's run and dataset pages.

The queries need only the subset conditions, which the database keeps apart (``accesses``);
a person looking at a run during an incident also wants the rest: the run's facets (the Spark
application, the error of a failed run, the nominal time), the job's, and each dataset's
(schema, data source, statistics). :func:`kept_facets` takes those from an event as one
compressed JSON document, without the conditions, which it would only repeat; the database keeps
it beside the event's digest (``events.facets``). :func:`facets_of` reads it back.

A document over :data:`MAX_KEPT_BYTES` once compressed is not kept: a small one saying so (and
how big it was) is kept in its place, so that a page says the facets were left out rather than
showing none.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

MAX_KEPT_BYTES = 1 << 20
"""The most bytes of compressed facets kept per event."""
_MAX_READ_BYTES = 64 << 20  # what facets_of inflates at most: the database is ours, but bounded
NOT_KEPT = "notKept"
"""The key of the document kept in place of facets over :data:`MAX_KEPT_BYTES`."""
_LISTS = (("inputs", "inputFacets"), ("outputs", "outputFacets"))
_CONDITION_KEYS = ("inputCondition", "outputCondition")
_SUBSET_OWN = ("_producer", "_schemaURL")
_ALIAS_KEYS = {"inputFacets": "inputSubset", "outputFacets": "outputSubset"}


def kept_facets(event: dict[str, Any], *, aliased: bool = False) -> bytes:
    """The facets of a (valid) run event to keep, compressed; empty when it has none (the
    database's NULL is for events stored before it kept facets).

    The document: ``run`` and ``job`` (their facets), and ``inputs``/``outputs`` (each dataset's
    namespace, name, ``facets`` and ``inputFacets``/``outputFacets``, the subset facet without its
    condition), leaving out what is empty (a subset facet with nothing but its condition,
    ``_producer`` and ``_schemaURL`` too). ``aliased``: the event holds a subset facet read from
    another place (``facets.inputSubset``, see ``ingestion/_checker.py``), whose condition is
    left out too where it was read (the dataset has none in the spec's place).

    >>> event = {"run": {"runId": "r", "facets": {"nominalTime": {"nominalStartTime": "x"}}},
    ...          "job": {"namespace": "n", "name": "j"},
    ...          "inputs": [{"namespace": "f", "name": "t", "inputFacets": {"subset": {
    ...              "_producer": "p", "inputCondition": {"type": "partition"}}}}]}
    >>> facets_of(kept_facets(event))
    {'run': {'nominalTime': {'nominalStartTime': 'x'}}}
    >>> kept_facets({"run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"}})
    b''
    >>> facets_of(b'')
    {}
    """
    document: dict[str, Any] = {}
    for part in ("run", "job"):
        facets = (event.get(part) or {}).get("facets")
        if facets:
            document[part] = facets
    for list_key, facets_key in _LISTS:
        kept = []
        for dataset in event.get(list_key) or ():
            item = _dataset_facets(dataset, facets_key, aliased)
            if item is not None:
                kept.append(item)
        if kept:
            document[list_key] = kept
    if not document:
        return b""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    body = zlib.compress(text.encode("utf-8"), 1)
    if len(body) > MAX_KEPT_BYTES:
        note = {NOT_KEPT: {"compressedBytes": len(body), "limit": MAX_KEPT_BYTES}}
        body = zlib.compress(json.dumps(note).encode("utf-8"))
    return body


def _dataset_facets(
    dataset: dict[str, Any], facets_key: str, aliased: bool
) -> dict[str, Any] | None:
    if not dataset.get("facets") and _only_a_condition(dataset.get(facets_key)):
        return None  # most datasets of most events: nothing but a subset facet's condition
    item: dict[str, Any] = {}
    if dataset.get("facets"):
        item["facets"] = dataset["facets"]
    own = dataset.get(facets_key)
    if own:
        item[facets_key] = own
    places = [(facets_key, "subset")]
    if aliased and not (isinstance(own, dict) and "subset" in own):
        places += [("facets", _ALIAS_KEYS[facets_key]), (facets_key, _ALIAS_KEYS[facets_key])]
    for place, key in places:
        facets = item.get(place)
        if not isinstance(facets, dict) or not isinstance(facets.get(key), dict):
            continue
        facets = item[place] = dict(facets)
        # the condition is kept apart (and shown as text); the rest of the facet stays unless
        # it is only the facet's _producer and _schemaURL
        rest = {name: value for name, value in facets[key].items() if name not in _CONDITION_KEYS}
        if any(not name.startswith("_") for name in rest):
            facets[key] = rest
        else:
            del facets[key]
        if not facets:
            del item[place]
    if not item:
        return None
    return {"namespace": dataset["namespace"], "name": dataset["name"], **item}


def _only_a_condition(facets: Any) -> bool:
    """Whether a dataset's ``inputFacets``/``outputFacets`` is empty, or holds only a subset
    facet of a condition, ``_producer`` and ``_schemaURL`` (what :func:`_dataset_facets` would
    leave nothing of)."""
    if not facets:
        return True
    if not isinstance(facets, dict) or len(facets) != 1:
        return False
    if not isinstance(subset := facets.get("subset"), dict):
        return False
    return all(name in _CONDITION_KEYS or name in _SUBSET_OWN for name in subset)


def facets_of(body: bytes | None) -> dict[str, Any] | None:
    """The document :func:`kept_facets` made (None for None: facets not kept)."""
    if body is None:
        return None
    if not body:
        return {}
    inflater = zlib.decompressobj()
    text = inflater.decompress(body, _MAX_READ_BYTES)
    if inflater.unconsumed_tail:
        return {NOT_KEPT: {"inflatedBytesOver": _MAX_READ_BYTES}}
    found: dict[str, Any] = json.loads(text.decode("utf-8"))
    return found
