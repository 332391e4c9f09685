"""The project's schemas accept and reject exactly what the reference copies do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing
from hypothesis import given
from referencing.jsonschema import DRAFT202012

from tests.helpers import ROOT, docs_examples, load_json
from tests.strategies import events, facet_maps, json_values, mutated

FACET_ID = "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"
CORE_ID = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
RELATIVE = {FACET_ID: "facets/1-0-0/BaseSubsetDatasetFacet.json", CORE_ID: "2-0-2/OpenLineage.json"}

HAND_WRITTEN_CASES: list[Any] = [
    {"subset": {"inputCondition": {"type": "location", "locations": []}}},
    {
        "subset": {
            "outputCondition": {"type": "partition", "partitions": [{"dimensions": {}}]},
            "_producer": "p",
            "_schemaURL": "u",
        }
    },
    {
        "subset": {
            "inputCondition": {"type": "partition", "partitions": [{"identifier": "x"}]},
            "_producer": "p",
            "_schemaURL": "u",
        }
    },
    {
        "subset": {
            "inputCondition": {
                "type": "compare",
                "left": {"type": "field", "field": "a"},
                "right": {"type": "literal", "value": 1},
                "comparison": "EQUAL",
            },
            "_producer": "p",
            "_schemaURL": "u",
        }
    },
    {
        "subset": {
            "inputCondition": {
                "type": "binary",
                "operator": "XOR",
                "left": {"type": "location", "locations": ["a"]},
                "right": {"type": "location", "locations": ["b"]},
            },
            "_producer": "p",
            "_schemaURL": "u",
        }
    },
    {
        "subset": {
            "inputCondition": {"type": "location", "locations": ["a"]},
            "outputCondition": {"type": "location", "locations": ["a"]},
            "_producer": "p",
            "_schemaURL": "u",
        }
    },
    {
        "subset": {
            "inputCondition": {"type": "location", "locations": ["a"]},
            "_producer": "p",
            "_schemaURL": "u",
            "_extra": {"any": ["thing"]},
        }
    },
    {
        "subset": {
            "condition": {"type": "location", "locations": ["a"]},
            "_producer": "p",
            "_schemaURL": "u",
        }
    },
    {"filter": {"left": {"field": "col1", "value": "7", "comparison": "EQUAL"}}},
    {"subset": None},
    [],
    "subset",
]


def _validator(documents: dict[str, Any], root: str) -> jsonschema.Draft202012Validator:
    registry = referencing.Registry().with_resources(
        (uri, DRAFT202012.create_resource(content)) for uri, content in documents.items()
    )
    return jsonschema.Draft202012Validator(documents[root], registry=registry)


def _load(folder: Path) -> dict[str, Any]:
    return {uri: load_json(folder / relative) for uri, relative in RELATIVE.items()}


@pytest.fixture(scope="module")
def pair(reference_spec: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    return _load(ROOT / "schemas" / "spec"), _load(reference_spec)


@pytest.fixture(scope="module")
def facet_validators(pair: Any) -> tuple[jsonschema.Draft202012Validator, ...]:
    return tuple(_validator(documents, FACET_ID) for documents in pair)


@pytest.fixture(scope="module")
def event_validators(pair: Any) -> tuple[jsonschema.Draft202012Validator, ...]:
    return tuple(_validator(documents, CORE_ID) for documents in pair)


def test_schema_documents_are_equivalent_json(pair: Any) -> None:
    ours, reference = pair
    for uri in RELATIVE:
        assert ours[uri] == reference[uri], f"{uri} differs from the reference copy"


def test_transcribed_docs_examples_are_the_official_examples(
    official_examples: dict[str, Any],
) -> None:
    def canonical(documents: Any) -> list[str]:
        return sorted(json.dumps(document, sort_keys=True) for document in documents)

    assert canonical(docs_examples().values()) == canonical(official_examples.values())


def test_official_examples_get_the_same_verdict(
    facet_validators: Any, official_examples: dict[str, Any]
) -> None:
    ours, reference = facet_validators
    assert official_examples, "the reference copy has no examples"
    for name, example in official_examples.items():
        assert ours.is_valid(example) == reference.is_valid(example) is True, name


@pytest.mark.parametrize("case", HAND_WRITTEN_CASES, ids=lambda c: json.dumps(c)[:40])
def test_hand_written_cases_get_the_same_verdict(facet_validators: Any, case: Any) -> None:
    ours, reference = facet_validators
    assert ours.is_valid(case) == reference.is_valid(case)


def test_hand_written_cases_include_both_verdicts(facet_validators: Any) -> None:
    verdicts = {facet_validators[0].is_valid(case) for case in HAND_WRITTEN_CASES}
    assert verdicts == {True, False}


@given(facet_maps(strict=False) | mutated(facet_maps(strict=False)) | json_values)
def test_random_facet_maps_get_the_same_verdict(facet_validators: Any, document: Any) -> None:
    ours, reference = facet_validators
    assert ours.is_valid(document) == reference.is_valid(document)


@given(events(strict=False) | mutated(events(strict=False)))
def test_random_events_get_the_same_verdict(event_validators: Any, document: Any) -> None:
    ours, reference = event_validators
    assert ours.is_valid(document) == reference.is_valid(document)
