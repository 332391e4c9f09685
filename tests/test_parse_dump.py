"""parse_facet / parse_event / dump: typed models, nothing lost, clear errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given

import openlineage_subset as ols
from openlineage_subset import (
    SubsetDocumentError,
    UnknownSpecVersionWarning,
    dump,
    parse_event,
    parse_facet,
    spec,
    validate,
)
from openlineage_subset._convert import parse_condition
from tests.helpers import CORE_URL, INPUT_URL, OUTPUT_URL, PRODUCER
from tests.strategies import conditions, events, facets


def _facet(condition: dict[str, Any], url: str = INPUT_URL, **extra: Any) -> dict[str, Any]:
    key = "inputCondition" if "Input" in url else "outputCondition"
    return {key: condition, "_producer": PRODUCER, "_schemaURL": url, **extra}


@given(facets(strict=False))
def test_dump_of_parse_is_the_identity(facet: dict[str, Any]) -> None:
    original = copy.deepcopy(facet)
    assert dump(parse_facet(facet)) == original
    assert facet == original, "parsing must not change its input"


@given(conditions(strict=False))
def test_a_condition_parses_alone_as_inside_its_facet(condition: dict[str, Any]) -> None:
    original = copy.deepcopy(condition)
    model = parse_condition(condition)
    assert dump(model) == original
    assert model == parse_facet(_facet(condition)).input_condition
    assert condition == original, "parsing must not change its input"


def test_an_invalid_condition_is_refused_with_its_path() -> None:
    with pytest.raises(SubsetDocumentError) as raised:
        parse_condition({"type": "binary", "left": {"type": "location"}, "right": 1})
    paths = {issue.path for issue in raised.value.issues}
    assert "$.left" in paths or any(path.startswith("$.left") for path in paths), paths
    with pytest.raises(SubsetDocumentError, match="not a subset condition"):
        parse_condition(["location"])


@given(facets())
def test_parsed_facets_are_typed_and_valid(facet: dict[str, Any]) -> None:
    model = parse_facet(facet)
    expected = (
        "InputSubsetInputDatasetFacet"
        if "inputCondition" in facet
        else "OutputSubsetOutputDatasetFacet"
    )
    assert type(model).__name__ == expected
    assert validate({"subset": dump(model)}, strict=True) == []


@given(events(strict=False))
def test_events_round_trip_with_typed_subset_facets(event: dict[str, Any]) -> None:
    model = parse_event(event)
    assert dump(model) == event
    for dataset in model.inputs or []:
        subset = (dataset.input_facets or {}).get("subset")
        if subset is not None:
            assert isinstance(subset, ols.InputSubsetInputDatasetFacet)


def test_parse_builds_the_models_of_the_spec() -> None:
    facet = parse_facet(
        _facet(
            {
                "type": "binary",
                "operator": "AND",
                "left": {
                    "type": "compare",
                    "comparison": "EQUAL",
                    "left": {"type": "field", "field": "country"},
                    "right": {"type": "literal", "value": "PL"},
                },
                "right": {
                    "type": "partition",
                    "partitions": [{"dimensions": {"day": "2024-10-15", "hour": None}}],
                },
            }
        )
    )
    condition = facet.input_condition
    assert isinstance(condition, ols.BinarySubsetCondition)
    assert condition.operator is ols.Operator.AND
    assert isinstance(condition.left, ols.CompareSubsetCondition)
    assert condition.left.comparison is ols.Comparison.EQUAL
    assert condition.left.left.field == "country"
    assert condition.right.partitions[0].dimensions == {"day": "2024-10-15", "hour": None}
    assert condition.right.partitions[0].identifier is None
    assert facet.producer == PRODUCER and facet.schema_url == INPUT_URL


def test_undocumented_comparison_is_kept_as_a_string() -> None:
    raw = _facet(
        {
            "type": "compare",
            "comparison": "LIKE",
            "left": {"type": "field", "field": "a"},
            "right": {"type": "literal", "value": "x%"},
        }
    )
    facet = parse_facet(raw)
    assert facet.input_condition.comparison == "LIKE"
    assert not isinstance(facet.input_condition.comparison, ols.Comparison)
    assert dump(facet) == raw


def test_extra_properties_survive_at_every_level() -> None:
    raw = _facet(
        {"type": "location", "locations": ["s3://b/x"], "x-hint": {"n": 1}},
        _deleted=False,
        vendor_note="kept",
    )
    facet = parse_facet(raw)
    assert facet.additional_properties == {"_deleted": False, "vendor_note": "kept"}
    assert facet.input_condition.additional_properties == {"x-hint": {"n": 1}}
    assert dump(facet) == raw


def test_output_facet_is_recognised() -> None:
    facet = parse_facet(_facet({"type": "location", "locations": []}, OUTPUT_URL))
    assert isinstance(facet, ols.OutputSubsetOutputDatasetFacet)


def test_role_follows_the_valid_branch_not_the_key_order() -> None:
    # An invalid inputCondition next to a valid outputCondition: only the output branch holds,
    # and the inputCondition is an extra property of an output facet.
    raw = {
        "inputCondition": 5,
        "outputCondition": {"type": "location", "locations": ["a"]},
        "_producer": PRODUCER,
        "_schemaURL": OUTPUT_URL,
    }
    facet = parse_facet(raw)
    assert isinstance(facet, ols.OutputSubsetOutputDatasetFacet)
    assert facet.additional_properties == {"inputCondition": 5}
    assert dump(facet) == raw


@pytest.mark.parametrize(
    ("raw", "path", "fragment"),
    [
        (_facet({"type": "nope"}), "$.inputCondition.type", "unknown type 'nope'"),
        (
            _facet(
                {
                    "type": "compare",
                    "left": {"type": "field"},
                    "right": {"type": "literal", "value": "1"},
                    "comparison": "EQUAL",
                }
            ),
            "$.inputCondition.left",
            "missing required property 'field'",
        ),
        (
            _facet(
                {
                    "type": "binary",
                    "operator": "AND",
                    "left": {"type": "location", "locations": "a"},
                    "right": {"type": "location", "locations": []},
                }
            ),
            "$.inputCondition.left.locations",
            "expected an array",
        ),
        ({"inputCondition": {"type": "location", "locations": []}}, "$", "'_producer'"),
    ],
)
def test_malformed_trees_raise_one_exception_with_path(raw: Any, path: str, fragment: str) -> None:
    with pytest.raises(SubsetDocumentError) as caught:
        parse_facet(raw)
    assert any(issue.path == path and fragment in issue.message for issue in caught.value.issues), (
        caught.value.issues
    )
    assert path in str(caught.value)


def test_non_objects_and_facet_maps_are_refused_with_a_hint() -> None:
    with pytest.raises(SubsetDocumentError, match="expected an object"):
        parse_facet(["not", "a", "facet"])
    with pytest.raises(SubsetDocumentError, match=r"obj\['subset'\]"):
        parse_facet({"subset": _facet({"type": "location", "locations": []})})
    with pytest.raises(SubsetDocumentError, match="expected an object"):
        parse_event("event")


def test_unknown_version_falls_back_to_the_newest_with_a_warning() -> None:
    raw = _facet(
        {"type": "location", "locations": []},
        "https://openlineage.io/spec/facets/9-9-9/BaseSubsetDatasetFacet.json#/$defs/InputSubsetInputDatasetFacet",
    )
    with pytest.warns(UnknownSpecVersionWarning, match="9-9-9") as record:
        facet = parse_facet(raw)
    assert type(facet).__module__ == spec().models.__name__
    assert record[0].filename == __file__, "the warning points at the caller's line"


def test_invalid_event_reports_paths_into_the_facet() -> None:
    event = {
        "eventTime": "2024-10-15T10:00:00Z",
        "producer": PRODUCER,
        "schemaURL": CORE_URL,
        "run": {"runId": "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11"},
        "job": {"namespace": "demo", "name": "job"},
        "inputs": [
            {
                "namespace": "file",
                "name": "/data",
                "inputFacets": {
                    "subset": {"inputCondition": {"type": "nope"}, "_schemaURL": INPUT_URL}
                },
            }
        ],
    }
    with pytest.raises(SubsetDocumentError) as caught:
        parse_event(event)
    paths = [issue.path for issue in caught.value.issues]
    assert "$.inputs[0].inputFacets.subset.inputCondition.type" in paths
    assert paths.count("$.inputs[0].inputFacets.subset") == 1, "missing _producer reported once"


def test_dump_refuses_an_extra_property_that_shadows_a_field() -> None:
    condition = ols.LocationSubsetCondition(locations=["a"], additional_properties={"type": "x"})
    with pytest.raises(ValueError, match="repeats the property 'type'"):
        dump(condition)
