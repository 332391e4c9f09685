"""The generated validators accept exactly what jsonschema accepts (the reference oracle)."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset import reference_validator, schema_documents, schema_registry, spec
from tests.conftest import INPUT_URL, OUTPUT_URL
from tests.strategies import (
    COMPARISONS,
    OPERATORS,
    URIS,
    events,
    facet_maps,
    json_values,
    mutated,
)

FACET_MAP_CASES = facet_maps(strict=False) | mutated(facet_maps(strict=False)) | json_values
EVENT_CASES = events(strict=False) | mutated(events(strict=False))
STRICT_CASES = facet_maps(strict=False) | mutated(facet_maps(strict=True))


def _generated_accepts(definition: str, document: Any, *, strict: bool = False) -> bool:
    version = spec("1-0-0")
    module = version.strict_validators if strict else version.validators
    return not module.VALIDATORS[definition](document)


@pytest.fixture(scope="module")
def facet_oracle() -> jsonschema.Draft202012Validator:
    return reference_validator(version="1-0-0")


@pytest.fixture(scope="module")
def event_oracle() -> jsonschema.Draft202012Validator:
    return reference_validator("OpenLineage", version="1-0-0")


@pytest.fixture(scope="module")
def strict_oracle() -> jsonschema.Draft202012Validator:
    """jsonschema on the facet schema with the documented allowed values written as enums."""
    schema = copy.deepcopy(
        schema_documents()["https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"]
    )
    schema["$defs"]["CompareSubsetCondition"]["properties"]["comparison"]["enum"] = COMPARISONS
    schema["$defs"]["BinarySubsetCondition"]["properties"]["operator"]["enum"] = OPERATORS
    schema["$id"] = "https://example.com/strict/BaseSubsetDatasetFacet.json"
    return jsonschema.Draft202012Validator(schema, registry=schema_registry())


@given(FACET_MAP_CASES)
def test_facet_map_validity_matches_jsonschema(
    facet_oracle: jsonschema.Draft202012Validator, document: Any
) -> None:
    assert _generated_accepts("SubsetFacetMap", document) == facet_oracle.is_valid(document)


@given(EVENT_CASES)
def test_event_validity_matches_jsonschema(
    event_oracle: jsonschema.Draft202012Validator, document: Any
) -> None:
    assert _generated_accepts("OpenLineageEvent", document) == event_oracle.is_valid(document)


@given(STRICT_CASES)
def test_strict_validity_matches_jsonschema_with_documented_enums(
    strict_oracle: jsonschema.Draft202012Validator, document: Any
) -> None:
    # The oracle does not check formats; compare only where the URIs are the known-good ones.
    facet = document.get("subset") if isinstance(document, dict) else None
    if isinstance(facet, dict) and (
        facet.get("_producer", URIS[0]) not in URIS
        or facet.get("_schemaURL", INPUT_URL) not in (INPUT_URL, OUTPUT_URL)
    ):
        return
    expected = strict_oracle.is_valid(document)
    assert _generated_accepts("SubsetFacetMap", document, strict=True) == expected


@given(facet_maps(strict=True))
def test_every_generated_facet_map_is_valid(document: Any) -> None:
    assert _generated_accepts("SubsetFacetMap", document)
    assert _generated_accepts("SubsetFacetMap", document, strict=True)


def _assert_paths_exist(document: Any, definition: str) -> None:
    for path, message in spec("1-0-0").validators.VALIDATORS[definition](document):
        node = document
        for part in path:
            assert isinstance(node, (dict, list)), (path, message)
            node = node[part]
        assert message


@given(mutated(facet_maps()))
def test_facet_issue_paths_point_into_the_document(document: Any) -> None:
    _assert_paths_exist(document, "SubsetFacetMap")


@given(mutated(events()))
def test_event_issue_paths_point_into_the_document(document: Any) -> None:
    _assert_paths_exist(document, "OpenLineageEvent")


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ({"subset": {"inputCondition": {"type": "nope"}}}, "unknown type 'nope'"),
        ({"subset": []}, "expected an object"),
        ({}, "missing required property 'subset'"),
    ],
)
def test_messages_say_what_is_wrong(document: Any, fragment: str) -> None:
    messages = [m for _, m in spec().validators.VALIDATORS["SubsetFacetMap"](document)]
    assert any(fragment in message for message in messages), messages


@given(st.recursive(json_values, lambda c: st.lists(c) | st.dictionaries(st.text(), c)))
def test_any_json_value_is_handled_without_exception(value: Any) -> None:
    for function in spec().validators.VALIDATORS.values():
        assert isinstance(function(value), list)
