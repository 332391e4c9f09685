"""Ingest's quick paths read a line exactly as the strict ones do.

A line without a backslash is parsed without checking each object's keys as it is read (a count
of colons tells a repeated key), its depth is read from its brackets rather than walked, and an
event's canonical JSON is encoded once with its conditions reused: each must give what the
strict parser, ``check_nesting`` and ``canonical`` give, on any text.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from openlineage_subset import SubsetDocumentError, check_nesting
from openlineage_subset.lineage.ingestion._checker import (
    _depth,
    _read_line,
    _spell,
    _spelled,
    parse,
)
from openlineage_subset.lineage.model._condition_json import canonical
from tests.helpers import INPUT_URL, OUTPUT_URL, PRODUCER

MARKER = "\ue000"  # what _spelled puts in the place of a condition
MASKS = ["\ue001", "\ue002"]  # and of the run id and the time, in an event's shape
CHARACTERS = st.sampled_from(
    ["a", ":", '"', "\\", "{", "}", "[", "]", " ", MARKER, *MASKS, "0", "é"]
)
TEXTS = st.text(CHARACTERS, max_size=5)
KEYS = st.sampled_from(["a", "b", "type", "a:b", '"', f"{MARKER}0", ""]) | TEXTS


class Pairs(list[tuple[str, Any]]):
    """An object as written: its keys in order, repeated or not."""


SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | TEXTS
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.lists(st.tuples(KEYS, children), max_size=3).map(Pairs)
    ),
    max_leaves=12,
)
SPACES = ["", " ", "\n", "\t", " \r\n "]


def _write(value: Any, spacing: random.Random, ascii_only: bool) -> str:
    """JSON text of ``value``, with spaces where JSON allows them (a few of the places)."""

    def space() -> str:
        return spacing.choice(SPACES)

    if isinstance(value, Pairs):
        members = (
            f"{space()}{json.dumps(key, ensure_ascii=ascii_only)}{space()}:"
            f"{space()}{_write(item, spacing, ascii_only)}{space()}"
            for key, item in value
        )
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return (
            "[" + ",".join(f"{space()}{_write(item, spacing, ascii_only)}" for item in value) + "]"
        )
    return json.dumps(value, ensure_ascii=ascii_only)


def _outcome(read: Any) -> tuple[str, Any]:
    try:
        return "read", read()
    except ValueError as error:
        return "refused", str(error)


def _levels(document: Any) -> int | None:
    try:
        return check_nesting(document, "document")
    except SubsetDocumentError:
        return None


@given(VALUES, st.randoms(use_true_random=False), st.booleans())
@example(Pairs([("a", 1), ("a", 2)]), random.Random(0), False)
@example(Pairs([("a", Pairs([("b", 1), ("b", 1)]))]), random.Random(1), False)
@example(Pairs([("a:b", "x"), ("a:b", "y:z")]), random.Random(2), False)
def test_the_quick_read_of_a_line_is_the_strict_read(
    value: Any, spacing: random.Random, ascii_only: bool
) -> None:
    text = _write(value, spacing, ascii_only)
    raw = text.encode("utf-8")
    strict = _outcome(lambda: parse(text))
    quick = _outcome(lambda: _read_line(raw))
    if strict[0] == "refused":
        assert quick == strict
        return
    assert quick[0] == "read"
    document, spelled, levels = quick[1]
    assert canonical(document) == canonical(strict[1])
    if spelled is not None:
        assert spelled[0] == canonical(document)
    if levels is not None:
        assert levels == _levels(document)


@given(
    st.lists(
        st.tuples(st.sampled_from([1, 1500, 4299, 4300, 4301, 5000]), st.sampled_from("i.e")),
        min_size=1,
        max_size=4,
    )
)
@example([(1500, "i"), (1500, "i"), (1500, "."), (1500, "e")])  # many digits, no long run
@example([(4301, ".")])  # a fraction longer than an integer may be
def test_long_runs_of_digits_are_read_as_the_strict_reader_reads_them(
    runs: list[tuple[int, str]],
) -> None:
    """Numbers with runs of digits around the most an integer may have (an integer, a fraction,
    an exponent): the quick read refuses what the strict one refuses, in its words, and reads
    what it reads, in a Python that reads integers of any length too (whose plain parser then
    takes what the strict reader refuses)."""
    numbers = [
        "7" * size if kind == "i" else f"1.{'3' * size}" if kind == "." else f"2e{'0' * size}1"
        for size, kind in runs
    ]
    text = json.dumps({"eventType": "START"})[:-1] + f', "x": [{", ".join(numbers)}]}}'
    strict = _outcome(lambda: parse(text))
    if not hasattr(sys, "set_int_max_str_digits"):  # a Python before the limit: none
        quick = _outcome(lambda: _read_line(text.encode("utf-8")))
    else:
        limit = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            quick = _outcome(lambda: _read_line(text.encode("utf-8")))
        finally:
            sys.set_int_max_str_digits(limit)
    assert quick[0] == strict[0]
    if strict[0] == "refused":
        assert quick == strict
    else:
        assert canonical(quick[1][0]) == canonical(strict[1])


def test_a_repeated_key_is_named_as_the_strict_reader_names_it() -> None:
    text = '{"a": {"type": "location", "b": 1, "type": "binary"}}'
    raw = text.encode("utf-8")
    assert b"\\" not in raw, "the quick path is taken"
    try:
        _read_line(raw)
    except ValueError as error:
        assert str(error) == (
            "not usable JSON at $.a: the key 'type' appears more than once in one object, and "
            "JSON readers disagree on which value counts"
        )
    else:
        raise AssertionError("a repeated key was not refused")


def test_depth_from_brackets_is_the_nesting() -> None:
    for levels in (2, 3, 63, 64):
        text = "[" * (levels - 2) + '{"a": "x:y", "b": [], "c": {}}' + "]" * (levels - 2)
        document, _, found = _read_line(text.encode("utf-8"))
        assert found == levels == check_nesting(document, "document")
    for text in ("[" * 65 + "]" * 65, '{"a": "[{"}'):
        assert _depth(text.encode("utf-8")) is None, "not read from the brackets"
        document, _, found = _read_line(text.encode("utf-8"))
        assert found == check_nesting(document, "document"), "walked"


CONDITIONS = st.recursive(
    SCALARS | st.sampled_from([f"{MARKER}0", f"{MARKER}1", f"{MARKER}9"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["type", "left", MARKER + "1"]), children, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    def dataset(place: str, key: str, url: str) -> dict[str, Any]:
        item: dict[str, Any] = {"namespace": draw(TEXTS), "name": draw(TEXTS)}
        if draw(st.booleans()):
            subset = {"_producer": PRODUCER, "_schemaURL": url, key: draw(CONDITIONS)}
            item[place] = {"subset": subset, draw(TEXTS): draw(CONDITIONS)}
        return item

    return {
        "eventType": draw(st.sampled_from(["START", f"{MARKER}0"])),
        "eventTime": draw(TEXTS | st.sampled_from(MASKS) | st.integers(0, 2)),
        "run": {"runId": draw(TEXTS | st.sampled_from(MASKS))},
        "inputs": draw(
            st.lists(st.builds(lambda: dataset("inputFacets", "inputCondition", INPUT_URL)))
        ),
        "outputs": draw(
            st.lists(st.builds(lambda: dataset("outputFacets", "outputCondition", OUTPUT_URL)))
        ),
    }


@given(events())
@example(
    {
        "eventTime": MASKS[1],
        "run": {"runId": MASKS[0]},
        "job": {"name": MASKS[0]},
        "inputs": [],
        "outputs": [],
    }
)
@example(
    {
        "job": {"name": f"{MARKER}0"},
        "inputs": [{"inputFacets": {"subset": {"inputCondition": {"type": f"{MARKER}1"}}}}],
        "outputs": [{"outputFacets": {"subset": {"outputCondition": {"type": "partition"}}}}],
    }
)
@example(  # a condition spelled as the next one's placeholder; a run id spelled as a marker
    {
        "run": {"runId": f"{MARKER}0"},
        "eventTime": "2024-10-15",
        "outputs": [],
        "inputs": [
            {
                "inputFacets": {
                    "subset": {
                        "inputCondition": {
                            "type": "location",
                            "locations": [f"{MARKER}1"],
                        }
                    }
                }
            },
            {"inputFacets": {"subset": {"inputCondition": {"type": "location"}}}},
        ],
    }
)
def test_an_event_is_spelled_canonically_with_its_conditions(event: dict[str, Any]) -> None:
    text, conditions = _spelled(event)
    assert text == canonical(event)
    expected = []
    for place, facets in (("inputs", "inputFacets"), ("outputs", "outputFacets")):
        for dataset in event[place]:
            subset = dataset.get(facets, {}).get("subset", {})
            found = [subset[k] for k in ("inputCondition", "outputCondition") if k in subset]
            found = [item for item in found if isinstance(item, dict)]
            expected.append(None if not found else (found[0], canonical(found[0])))
    assert conditions == expected


@given(events(), TEXTS, TEXTS)
def test_events_that_differ_in_run_id_and_time_alone_have_one_shape(
    event: dict[str, Any], run_id: str, time: str
) -> None:
    """The shape (what validation is skipped for when known valid) hides the run id and the
    time, and nothing else: a change anywhere else changes it."""
    other = {**event, "eventTime": time, "run": {"runId": run_id}}
    shape, other_shape = _spell(event).shape, _spell(other).shape
    if shape is not None and other_shape is not None:
        assert other_shape == shape or not isinstance(event["eventTime"], str)
        changed = {**event, "job": {"name": f"{event.get('job', {}).get('name', '')}x"}}
        assert _spell(changed).shape != shape


ANY_STRINGS = st.text(st.characters(codec="utf-8") | st.sampled_from(["\x00", "\x1f", "\x7f", '"']))
PLAIN_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and Infinity too: written as Python writes them
    | ANY_STRINGS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(ANY_STRINGS, children, max_size=3)
    ),
    max_leaves=12,
)


@given(PLAIN_VALUES)
@example({"b": [1e16, -0.0, 1e-7, 10**30], "a": "\u2028é\U0001f600"})
def test_canonical_json_is_what_the_json_module_writes_with_sorted_keys(value: Any) -> None:
    # the stored digests depend on this spelling: a faster encoder must not change a byte
    assert canonical(value) == json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
