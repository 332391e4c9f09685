"""Every event within its byte budget: conditions share it soundly, oversized run facets are cut
with a marker, datasets beyond one event's room move to RUNNING events of the same run."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from openlineage_subset import dump, field, matches, validate
from openlineage_subset.producer._budget import MIN_EVENT_BYTES, bound_event
from openlineage_subset.producer._condense import json_size
from tests.helpers import INPUT_URL, OUTPUT_URL, PRODUCER
from tests.strategies import CORE_URL

RUN_ID = "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11"


def _days(count: int, start: int = 0) -> list[str]:
    return [f"2024-{1 + (n // 28) % 12:02}-{1 + n % 28:02}" for n in range(start, start + count)]


def _partitions(rng: random.Random, count: int) -> list[dict[str, Any]]:
    countries = ["AT", "BE", "DE", "FR", "PL", "SE"]
    days = _days(max(1, count // 3), rng.randrange(100))
    chosen = rng.sample([(d, c) for d in days for c in countries], min(count, 6 * len(days)))
    return [
        {"identifier": f"day={d}/country={c}", "dimensions": {"day": d, "country": c}}
        for d, c in chosen
    ]


def _dataset(name: str, condition: dict[str, Any] | None, output: bool) -> dict[str, Any]:
    dataset: dict[str, Any] = {"namespace": "file", "name": name}
    if condition is not None:
        key = "outputCondition" if output else "inputCondition"
        facet = {"_producer": PRODUCER, "_schemaURL": OUTPUT_URL if output else INPUT_URL}
        dataset["outputFacets" if output else "inputFacets"] = {"subset": {**facet, key: condition}}
    return dataset


def _event(
    event_type: str,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    stack_trace: str | None = None,
) -> dict[str, Any]:
    run: dict[str, Any] = {"runId": RUN_ID}
    if stack_trace is not None:
        run["facets"] = {
            "errorMessage": {
                "_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json"
                "#/$defs/ErrorMessageRunFacet",
                "message": "job failed",
                "programmingLanguage": "PYTHON",
                "stackTrace": stack_trace,
            }
        }
    return {
        "eventType": event_type,
        "eventTime": "2024-10-15T10:00:00Z",
        "producer": PRODUCER,
        "schemaURL": CORE_URL,
        "run": run,
        "job": {"namespace": "spark", "name": "daily.load"},
        "inputs": inputs,
        "outputs": outputs,
    }


def _condition_of(dataset: dict[str, Any]) -> dict[str, Any] | None:
    for facets, key in (("inputFacets", "inputCondition"), ("outputFacets", "outputCondition")):
        subset = (dataset.get(facets) or {}).get("subset")
        if subset is not None:
            return subset[key]
    return None


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    rng = random.Random(draw(st.integers(0, 2**16)))
    event_type = draw(st.sampled_from(["START", "COMPLETE", "FAIL"]))
    sides: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    count = draw(st.sampled_from([0, 1, 5, 40, 300]))
    for index in range(count):
        output = rng.random() < 0.4
        # Many datasets test the spreading over events; a few, the sharing of large conditions.
        kinds = ["none", "small"] if count > 50 else ["partitions", "in", "none", "small"]
        kind = rng.choice(kinds)
        condition: dict[str, Any] | None
        if kind == "partitions":
            condition = {"type": "partition", "partitions": _partitions(rng, rng.choice([5, 1500]))}
        elif kind == "in":
            values = rng.sample(range(10**6), rng.choice([3, 2000]))
            condition = dump(field("id").isin(values))
        elif kind == "small":
            condition = dump(field("amount") > rng.randrange(100))
        else:
            condition = None
        name = f"/lake/{'out' if output else 'in'}/dataset_{index:04}/" + "x" * rng.randrange(300)
        dataset = _dataset(name, condition, output)
        if index < 3 and rng.random() < 0.5:  # another producer's facets, some of them huge
            dataset["facets"] = {
                "schema": _schema_facet(rng.choice([3, 8_000])),
                "documentation": {"_producer": PRODUCER, "_schemaURL": DOC_URL, "description": "d"},
            }
        sides[output].append(dataset)
    trace = "Traceback:\n" + "  frame ünïcode\n" * draw(st.sampled_from([0, 10, 40_000]))
    built = _event(event_type, sides[False], sides[True], trace if event_type == "FAIL" else None)
    foreign = draw(st.sampled_from(["none", "sql", "many strings"]))
    event(f"run facets: {foreign}")
    if foreign != "none":
        built["run"].setdefault("facets", {})["custom"] = _custom_facet(foreign)
    return built


DOC_URL = "https://openlineage.io/spec/facets/1-0-1/DocumentationDatasetFacet.json"


def _schema_facet(fields: int) -> dict[str, Any]:
    """A schema facet of ``fields`` fields (8,000 take about 400 kB)."""
    return {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json",
        "fields": [{"name": f"column_{n:05}", "type": "decimal(38,18)"} for n in range(fields)],
    }


def _custom_facet(kind: str) -> dict[str, Any]:
    """A run facet of another producer: one 200 kB string, or 100 strings of 3,000 characters
    (each too short to be cut)."""
    facet: dict[str, Any] = {"_producer": PRODUCER, "_schemaURL": "https://example.com/Custom"}
    if kind == "sql":
        facet["query"] = "SELECT " + ", ".join(f"c{n}" for n in range(30_000))
    else:
        facet["parts"] = ["y" * 3_000] * 100
    return facet


def _identity(dataset: dict[str, Any]) -> tuple[str, str]:
    return dataset["namespace"], dataset["name"]


@given(events(), st.integers(MIN_EVENT_BYTES, 400_000))
@settings(max_examples=40)
def test_every_event_fits_and_nothing_is_lost_or_unsound(
    original: dict[str, Any], budget: int
) -> None:
    kept = json.loads(json.dumps(original))  # an event is JSON: a quicker deep copy
    reports: list[tuple[str, str]] = []
    parts = bound_event(original, budget, report=lambda name, what: reports.append((name, what)))
    reported = [name for name, what in reports if "subset facet left out" in what]
    assert original == kept, "the event given is not changed"
    event(f"{len(parts)} events")
    for part in parts:
        assert json_size(part) <= budget
        assert len(json.dumps(part, ensure_ascii=False).encode()) <= budget
        assert validate(part, strict=True) == []
        assert part["run"]["runId"] == RUN_ID and part["job"] == original["job"]
    types = [part["eventType"] for part in parts]
    if original["eventType"] == "START":
        assert types == ["START"] + ["RUNNING"] * (len(parts) - 1)
    else:
        assert types == ["RUNNING"] * (len(parts) - 1) + [original["eventType"]]
    assert sum("errorMessage" in (p["run"].get("facets") or {}) for p in parts) == (
        1 if original["eventType"] == "FAIL" else 0
    ), "the error stays on the event that ends the run"
    for side in ("inputs", "outputs"):
        before = {_identity(d): d for d in original[side]}
        after = {_identity(d): d for p in parts for d in p[side]}
        assert len(after) == sum(len(p[side]) for p in parts), "each dataset once"
        assert set(after) == set(before), "none lost, none invented"
        for identity, dataset in before.items():
            for name, facet in (dataset.get("facets") or {}).items():
                kept_facet = (after[identity].get("facets") or {}).get(name)
                if kept_facet is None:  # left out whole, and said so
                    assert any(n == identity[1] and repr(name) in w for n, w in reports)
                else:
                    assert kept_facet == facet, "a facet is kept whole or not at all"
            condition, bounded = _condition_of(dataset), _condition_of(after[identity])
            if condition is None:
                assert bounded is None
                continue
            if bounded is None:
                assert identity[1] in reported
                continue
            assert identity[1] not in reported
            _covers(bounded, condition)


def _covers(bounded: dict[str, Any], original: dict[str, Any]) -> None:
    """Every partition or value the original selects, the bounded condition selects too."""
    if original["type"] == "partition" and bounded["type"] == "partition":
        listed = {json.dumps(p["dimensions"], sort_keys=True) for p in bounded["partitions"]}
        for partition in original["partitions"]:
            assert json.dumps(partition["dimensions"], sort_keys=True) in listed
        return
    # Evaluated on a sample (the whole lists are checked in tests/producer/test_condense.py).
    if original["type"] == "partition":
        for partition in _sample(original["partitions"]):
            dimensions = partition["dimensions"]
            assert matches(bounded, dimensions, {"day": "date"})
            assert matches(bounded, dimensions, {"day": "string"})
        return
    values, stack = [], [original]
    while stack:
        node = stack.pop()
        if node["type"] == "binary":
            stack += [node["left"], node["right"]]
        elif node["type"] == "compare" and node["comparison"] == "EQUAL":
            values.append(int(node["right"]["value"]))
    for value in _sample(values):
        assert matches(bounded, {"id": value}, {"id": "bigint"})
        assert matches(bounded, {"id": str(value)}, {"id": "string"})


def _sample(items: list[Any]) -> list[Any]:
    """The first and last items, and 60 between, picked the same way on every run."""
    if len(items) <= 62:
        return items
    return [items[0], items[-1], *random.Random(len(items)).sample(items, 60)]


def test_five_large_conditions_all_keep_a_facet_under_one_megabyte() -> None:
    rng = random.Random(5)
    inputs = [
        _dataset(
            f"/lake/sales_{n}", {"type": "partition", "partitions": _partitions(rng, 2100)}, False
        )
        for n in range(5)
    ]
    original = _event("COMPLETE", inputs, [])
    assert json_size(original) > 1_000_000
    (bounded,) = bound_event(original, 1_000_000)
    assert json_size(bounded) <= 1_000_000
    assert all(_condition_of(dataset) is not None for dataset in bounded["inputs"])


def test_a_huge_stack_trace_is_cut_with_a_marker() -> None:
    trace = "Traceback (most recent call last):\n" + "  at some.Frame(Frame.java:1)\n" * 100_000
    original = _event("FAIL", [_dataset("/lake/a", None, False)], [], trace)
    (bounded,) = bound_event(original, MIN_EVENT_BYTES)
    kept = bounded["run"]["facets"]["errorMessage"]["stackTrace"]
    assert kept.startswith("Traceback (most recent call last):")
    assert "cut by openlineage-subset" in kept
    assert json_size(bounded) <= MIN_EVENT_BYTES


def test_an_event_that_fits_is_returned_as_it_is() -> None:
    original = _event("START", [_dataset("/lake/a", dump(field("a") > 1), False)], [])
    assert bound_event(original, MIN_EVENT_BYTES) == [original]


def test_a_budget_below_the_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 65536"):
        bound_event(_event("START", [], []), 1_000)


def test_large_facets_of_other_producers_are_left_out_and_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dataset = _dataset("/lake/a", dump(field("a") > 1), False)
    dataset["facets"] = {"schema": _schema_facet(8_000)}
    original = _event("COMPLETE", [dataset], [])
    original["run"]["facets"] = {"custom": _custom_facet("many strings")}
    reports: list[tuple[str, str]] = []
    with caplog.at_level("WARNING", logger="openlineage_subset"):
        (bounded,) = bound_event(original, MIN_EVENT_BYTES, report=lambda *r: reports.append(r))
    assert json_size(bounded) <= MIN_EVENT_BYTES
    assert "custom" not in (bounded["run"].get("facets") or {})
    assert "'custom'" in caplog.text and "daily.load" in caplog.text
    assert bounded["inputs"][0]["facets"] == {}
    assert reports == [("/lake/a", reports[0][1])] and "'schema'" in reports[0][1]
    assert _condition_of(bounded["inputs"][0]) == _condition_of(dataset), "the subset stays"


def test_an_event_whose_required_fields_are_too_large_is_refused() -> None:
    original = _event("START", [], [])
    original["job"]["name"] = "j" * MIN_EVENT_BYTES
    with pytest.raises(ValueError, match="cannot be made to fit"):
        bound_event(original, MIN_EVENT_BYTES)
