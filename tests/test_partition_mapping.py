"""The custom facet ``olsubset_partitionMapping``: the schema accepts the agreed form and rejects
what it should, the builder and the validators name the bad field's path, the generated models
round-trip, and ``apply_steps`` computes what Python's ``datetime`` does.

``tests/data/partition_mapping/output_facets.json`` is the agreed JSON form (an output dataset's
``outputFacets``), which the capture writes and the lineage reads. The schema the expectations
come from is the file on disk its ``_schemaURL`` names (checked with ``jsonschema``), never the
code under test.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
import referencing
from hypothesis import given, settings
from hypothesis import strategies as st
from referencing.jsonschema import DRAFT202012

from openlineage_subset import (
    PARTITION_MAPPING_FACET,
    PARTITION_MAPPING_SCHEMA_URL,
    SubsetDocumentError,
    apply_steps,
    dump,
    partition_mapping_facet,
    partition_mapping_issues,
)
from openlineage_subset._convert import _object_converter
from openlineage_subset._partition_mapping import _schema as generated
from tests.helpers import ROOT, examples, load_json
from tests.strategies import URIS, json_values, mutated

RAW = "https://raw.githubusercontent.com/openlineage-subset/openlineage-subset/main/"
FACETS = load_json(ROOT / "tests" / "data" / "partition_mapping" / "output_facets.json")
(KEY,) = FACETS
EXAMPLE: dict[str, Any] = FACETS[KEY]
SCHEMA_ID, _, FRAGMENT = EXAMPLE["_schemaURL"].partition("#")
SCHEMA_FILE = ROOT / SCHEMA_ID.removeprefix(RAW)
SCHEMA = load_json(SCHEMA_FILE)
DEFS = SCHEMA["$defs"]
PATTERNS: list[str] = DEFS["DateFormatStep"]["properties"]["pattern"]["enum"]
DATE_PARTS: list[str] = DEFS["DatePartStep"]["properties"]["op"]["enum"]
JAVA_TO_STRFTIME = {"yyyy": "%Y", "MM": "%m", "dd": "%d"}
"""Spark's (Java's) pattern letters of the schema's patterns, as Python's strftime spells them."""
FACET_DEF = FRAGMENT.rsplit("/", 1)[-1]


def _oracle(definition: str | None = None) -> jsonschema.Draft202012Validator:
    """A ``jsonschema`` validator of the schema files under schemas/ (the root without
    ``definition``)."""
    resources = [
        (load_json(path)["$id"], DRAFT202012.create_resource(load_json(path)))
        for path in (ROOT / "schemas").rglob("*.json")
    ]
    target = SCHEMA_ID + (f"#/$defs/{definition}" if definition else "")
    return jsonschema.Draft202012Validator(
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": target},
        registry=referencing.Registry().with_resources(resources),
    )


FACET_ORACLE = _oracle(FACET_DEF)


def test_the_agreed_form_is_what_the_schema_and_the_sdk_say() -> None:
    assert SCHEMA["$id"] == SCHEMA_ID and SCHEMA_FILE.is_file()
    assert SCHEMA["properties"] == {KEY: {"$ref": f"#{FRAGMENT}"}}
    assert PARTITION_MAPPING_FACET == KEY
    assert EXAMPLE["_schemaURL"] == PARTITION_MAPPING_SCHEMA_URL
    assert _oracle().is_valid(FACETS)
    assert FACET_ORACLE.is_valid(EXAMPLE)
    assert partition_mapping_issues(EXAMPLE) == []


def test_the_builder_builds_the_agreed_form() -> None:
    mappings = copy.deepcopy(EXAMPLE["mappings"])
    built = partition_mapping_facet(mappings, producer=EXAMPLE["_producer"])
    assert built == EXAMPLE
    built["mappings"][0]["steps"].append({"op": "year"})
    assert mappings == EXAMPLE["mappings"], "the facet is a copy: the caller's dicts are theirs"


def _edited(edit: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    facet = copy.deepcopy(EXAMPLE)
    edit(facet)
    return facet


def _step(facet: dict[str, Any], index: int) -> dict[str, Any]:
    step: dict[str, Any] = facet["mappings"][1]["steps"][index]
    return step


REJECTED: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "unknown op": (lambda f: _step(f, 0).update(op="week"), "$.mappings[1].steps[0].op"),
    "pattern not listed": (
        lambda f: _step(f, 1).update(pattern="dd-MM-yyyy"),
        "$.mappings[1].steps[1].pattern",
    ),
    "days not an integer": (
        lambda f: _step(f, 0).update(days=1.5),
        "$.mappings[1].steps[0].days",
    ),
    "dateAdd without days": (lambda f: _step(f, 0).pop("days"), "$.mappings[1].steps[0]"),
    "a step's unknown property": (
        lambda f: _step(f, 0).update(unit="month"),
        "$.mappings[1].steps[0].unit",
    ),
    "a step not an object": (
        lambda f: f["mappings"][1]["steps"].append("year"),
        "$.mappings[1].steps[2]",
    ),
    "no field": (lambda f: f["mappings"][0].pop("field"), "$.mappings[0]"),
    "no input": (lambda f: f["mappings"][0].pop("input"), "$.mappings[0]"),
    "no inputField": (lambda f: f["mappings"][0].pop("inputField"), "$.mappings[0]"),
    "no steps": (lambda f: f["mappings"][0].pop("steps"), "$.mappings[0]"),
    "input without namespace": (
        lambda f: f["mappings"][0]["input"].pop("namespace"),
        "$.mappings[0].input",
    ),
    "a name not a string": (
        lambda f: f["mappings"][0]["input"].update(name=["/lake/raw"]),
        "$.mappings[0].input.name",
    ),
    "a mapping's unknown property": (
        lambda f: f["mappings"][0].update(inputFields=["day"]),
        "$.mappings[0].inputFields",
    ),
    "no mapping": (lambda f: f["mappings"].clear(), "$.mappings"),
}
"""Changes to the agreed form the schema rejects, and the JSONPath of the bad field."""


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_a_bad_mapping_is_rejected_where_it_is_wrong(case: str) -> None:
    edit, path = REJECTED[case]
    facet = _edited(edit)
    assert not FACET_ORACLE.is_valid(facet), "the schema on disk rejects it"
    issues = partition_mapping_issues(facet)
    assert issues and all(issue.startswith(path + ": ") for issue in issues), issues
    with pytest.raises(SubsetDocumentError) as raised:
        partition_mapping_facet(facet["mappings"], producer=EXAMPLE["_producer"])
    assert [issue.path for issue in raised.value.issues] == [path] * len(issues)


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda f: f.pop("mappings"), "$"),
        (lambda f: f.pop("_producer"), "$"),
        (lambda f: f.update(_schemaURL=3), "$._schemaURL"),
    ],
)
def test_a_bad_facet_is_rejected_where_it_is_wrong(
    edit: Callable[[dict[str, Any]], object], path: str
) -> None:
    facet = _edited(edit)
    assert not FACET_ORACLE.is_valid(facet)
    issues = partition_mapping_issues(facet)
    assert issues and issues[0].startswith(path + ": "), issues


def test_the_facet_itself_takes_other_properties_as_every_facet_does() -> None:
    facet = _edited(lambda f: f.update(note={"why": "a backfill"}))
    assert FACET_ORACLE.is_valid(facet)
    assert partition_mapping_issues(facet) == []


def test_what_is_not_an_object_is_one_problem() -> None:
    expected = "$: expected an object, got an array of 1 item(s)"
    assert partition_mapping_issues([EXAMPLE]) == [expected]


def test_the_builder_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="list of mapping dicts"):
        partition_mapping_facet(EXAMPLE["mappings"][0], producer="https://example.com")
    with pytest.raises(ValueError, match="producer"):
        partition_mapping_facet(EXAMPLE["mappings"], producer="")


# -- every valid facet, and every facet one change away ----------------------------------------

steps = st.one_of(
    st.integers(-(10**6), 10**6).map(lambda days: {"op": "dateAdd", "days": days}),
    st.sampled_from(DATE_PARTS).map(lambda op: {"op": op}),
    st.sampled_from(PATTERNS).map(lambda pattern: {"op": "dateFormat", "pattern": pattern}),
)
names = st.text(min_size=1, max_size=8)
mappings = st.fixed_dictionaries(
    {
        "field": names,
        "input": st.fixed_dictionaries({"namespace": names, "name": names}),
        "inputField": names,
        "steps": st.lists(steps, max_size=3),
    }
)
facets = st.fixed_dictionaries(
    {
        "_producer": st.sampled_from(URIS),
        "_schemaURL": st.just(EXAMPLE["_schemaURL"]),
        "mappings": st.lists(mappings, min_size=1, max_size=3),
    }
)


@settings(max_examples=examples(2))
@given(facets | mutated(facets) | json_values)
def test_the_validators_agree_with_the_schema(facet: Any) -> None:
    assert (partition_mapping_issues(facet) == []) == FACET_ORACLE.is_valid(facet), facet


@given(facets)
def test_the_generated_models_round_trip(facet: dict[str, Any]) -> None:
    model = _object_converter(generated.models.PartitionMappingOutputDatasetFacet)(facet)
    assert dump(model) == facet
    for mapping, parsed in zip(facet["mappings"], model.mappings, strict=True):
        assert parsed.input_field == mapping["inputField"]
        for step, parsed_step in zip(mapping["steps"], parsed.steps, strict=True):
            kind = {"dateAdd": "DateAddStep", "dateFormat": "DateFormatStep"}
            assert type(parsed_step).__name__ == kind.get(step["op"], "DatePartStep")


# -- apply_steps against Python's datetime ----------------------------------------------------

dates = st.dates(min_value=dt.date(1000, 1, 1))
"""Years with four digits, which strftime's %Y writes alike on every platform."""
shifts = st.integers(-(10**6), 10**6)


def _shifted(day: dt.date, days: int) -> str | None:
    try:
        return (day + dt.timedelta(days=days)).isoformat()
    except OverflowError:
        return None


@given(dates, shifts)
def test_date_add_is_timedelta(day: dt.date, days: int) -> None:
    assert apply_steps(day.isoformat(), [{"op": "dateAdd", "days": days}]) == _shifted(day, days)


@given(dates, st.sampled_from(DATE_PARTS))
def test_date_parts_are_integers_without_padding(day: dt.date, op: str) -> None:
    part = {"year": day.year, "month": day.month, "dayOfMonth": day.day}[op]
    assert apply_steps(day.isoformat(), [{"op": op}]) == str(part)


@given(dates, st.sampled_from(PATTERNS))
def test_date_format_is_strftime(day: dt.date, pattern: str) -> None:
    python_pattern = pattern
    for java, python in JAVA_TO_STRFTIME.items():
        python_pattern = python_pattern.replace(java, python)
    assert apply_steps(day.isoformat(), [{"op": "dateFormat", "pattern": pattern}]) == (
        day.strftime(python_pattern)
    )


@settings(max_examples=examples(1))
@given(dates, st.lists(st.integers(-1000, 1000), max_size=4))
def test_steps_apply_in_order(day: dt.date, shifts: list[int]) -> None:
    """Shifts add up, a date formatted as ``yyyy-MM-dd`` is a date again, and a value that is
    no date any more (a year, ``yyyyMMdd``) makes the next step's answer None."""
    chain: list[dict[str, object]] = []
    for days in shifts:
        chain += [{"op": "dateAdd", "days": days}, {"op": "dateFormat", "pattern": "yyyy-MM-dd"}]
    assert apply_steps(day.isoformat(), chain) == _shifted(day, sum(shifts))
    assert apply_steps(day.isoformat(), [*chain, {"op": "year"}, {"op": "year"}]) is None
    compact = {"op": "dateFormat", "pattern": "yyyyMMdd"}
    assert apply_steps(day.isoformat(), [compact, {"op": "dateAdd", "days": 0}]) is None
    assert apply_steps(day.isoformat(), []) == day.isoformat()


@given(st.text(max_size=12) | dates.map(dt.date.isoformat).map(lambda text: text + " "))
def test_a_step_on_text_that_is_no_date_gives_none(text: str) -> None:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        day = None
    expected = str(day.year) if day is not None and day.isoformat() == text else None
    assert apply_steps(text, [{"op": "year"}]) == expected
    assert apply_steps(text, []) == text


@pytest.mark.parametrize(
    ("value", "steps", "expected"),
    [
        ("2024-02-29", [{"op": "dateAdd", "days": 1}], "2024-03-01"),
        ("2023-02-29", [{"op": "dateAdd", "days": 1}], None),
        ("2024-13-01", [{"op": "month"}], None),
        ("2024-10-2", [{"op": "dayOfMonth"}], None),
        ("0999-01-05", [{"op": "year"}], "999"),
        ("0999-01-05", [{"op": "dateFormat", "pattern": "yyyy"}], "0999"),
        ("9999-12-31", [{"op": "dateAdd", "days": 1}], None),
        ("0001-01-01", [{"op": "dateAdd", "days": -1}], None),
        ("2024-10-02", [{"op": "dateAdd", "days": 10**30}], None),
        ("2024-10-02", [{"op": "dateAdd", "days": 2.0}], "2024-10-04"),
        ("\uff12\uff10\uff12\uff14-10-02", [{"op": "year"}], None),  # fullwidth digits
    ],
)
def test_apply_steps_at_the_edges(
    value: str, steps: list[dict[str, object]], expected: str | None
) -> None:
    assert apply_steps(value, steps) == expected


@pytest.mark.parametrize(
    ("steps", "path"),
    [
        ([{"op": "week"}], "$[0].op"),
        ([{"op": "year"}, {"op": "dateAdd"}], "$[1]"),
        ([{"op": "dateFormat", "pattern": "MM/yyyy"}], "$[0].pattern"),
    ],
)
def test_steps_the_schema_does_not_know_are_refused(
    steps: list[dict[str, object]], path: str
) -> None:
    with pytest.raises(SubsetDocumentError) as raised:
        apply_steps("2024-10-02", steps)
    assert [issue.path for issue in raised.value.issues] == [path]
