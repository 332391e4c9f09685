"""The generated validators accept exactly what jsonschema accepts (the reference oracle)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset import (
    reference_validator,
    schema_registry,
    spec,
    spec_versions,
)
from openlineage_subset._schemas import schema_documents
from tests.helpers import INPUT_URL, OUTPUT_URL
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


# Every generated version, not only the newest: older versions stay importable and parse
# documents that name them, so they must agree with jsonschema too.
every_version = pytest.mark.parametrize("version", spec_versions())


def _generated_accepts(
    definition: str, document: Any, *, version: str, strict: bool = False
) -> bool:
    generated = spec(version)
    module = generated.strict_validators if strict else generated.validators
    return not module.VALIDATORS[definition](document)


@cache
def facet_oracle(version: str) -> jsonschema.Draft202012Validator:
    return reference_validator(version=version)


@cache
def event_oracle(version: str) -> jsonschema.Draft202012Validator:
    return reference_validator("OpenLineage", version=version)


@cache
def strict_oracle(version: str) -> jsonschema.Draft202012Validator:
    """jsonschema on the facet schema with the documented allowed values written as enums."""
    schema = copy.deepcopy(schema_documents()[spec(version).facet_schema_url])
    schema["$defs"]["CompareSubsetCondition"]["properties"]["comparison"]["enum"] = COMPARISONS
    schema["$defs"]["BinarySubsetCondition"]["properties"]["operator"]["enum"] = OPERATORS
    schema["$id"] = "https://example.com/strict/BaseSubsetDatasetFacet.json"
    return jsonschema.Draft202012Validator(schema, registry=schema_registry())


@every_version
@given(document=FACET_MAP_CASES)
def test_facet_map_validity_matches_jsonschema(version: str, document: Any) -> None:
    expected = facet_oracle(version).is_valid(document)
    assert _generated_accepts("SubsetFacetMap", document, version=version) == expected


@every_version
@given(document=EVENT_CASES)
def test_event_validity_matches_jsonschema(version: str, document: Any) -> None:
    expected = event_oracle(version).is_valid(document)
    assert _generated_accepts("OpenLineageEvent", document, version=version) == expected


@every_version
@given(document=STRICT_CASES)
def test_strict_validity_matches_jsonschema_with_documented_enums(
    version: str, document: Any
) -> None:
    # The oracle does not check formats; compare only where the URIs are the known-good ones.
    facet = document.get("subset") if isinstance(document, dict) else None
    if isinstance(facet, dict) and (
        facet.get("_producer", URIS[0]) not in URIS
        or facet.get("_schemaURL", INPUT_URL) not in (INPUT_URL, OUTPUT_URL)
    ):
        return
    expected = strict_oracle(version).is_valid(document)
    assert _generated_accepts("SubsetFacetMap", document, version=version, strict=True) == expected


@every_version
@given(document=facet_maps(strict=True))
def test_every_generated_facet_map_is_valid(version: str, document: Any) -> None:
    assert _generated_accepts("SubsetFacetMap", document, version=version)
    assert _generated_accepts("SubsetFacetMap", document, version=version, strict=True)


def _assert_paths_exist(document: Any, definition: str) -> None:
    for path, message in spec().validators.VALIDATORS[definition](document):
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
