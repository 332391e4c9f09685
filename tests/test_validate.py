"""validate(): facet maps, bare facets and events; schema rules and strict (prose) rules."""

from __future__ import annotations

import contextlib
import copy
import json
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset import UnknownSpecVersionWarning, spec, spec_versions, validate
from tests.helpers import CORE_URL, INPUT_URL, OUTPUT_URL, PRODUCER, ROOT, docs_examples
from tests.strategies import (
    events,
    events_without_run,
    facet_maps,
    json_values,
    mutated,
    two_role_facets,
)

SEEDS = ROOT.parent / "shared" / "seeds"
EVENT: dict[str, Any] = {
    "eventType": "COMPLETE",
    "eventTime": "2024-10-15T10:00:00Z",
    "producer": PRODUCER,
    "schemaURL": CORE_URL,
    "run": {"runId": "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11"},
    "job": {"namespace": "demo", "name": "daily"},
    "inputs": [
        {
            "namespace": "s3://warehouse",
            "name": "sales",
            "inputFacets": {
                "subset": {
                    "inputCondition": {
                        "type": "location",
                        "locations": ["s3://warehouse/sales/2024"],
                    },
                    "_producer": PRODUCER,
                    "_schemaURL": INPUT_URL,
                }
            },
        }
    ],
    "outputs": [
        {
            "namespace": "s3://warehouse",
            "name": "daily",
            "outputFacets": {
                "subset": {
                    "outputCondition": {
                        "type": "partition",
                        "partitions": [{"dimensions": {"d": "2024-10-15"}}],
                    },
                    "_producer": PRODUCER,
                    "_schemaURL": OUTPUT_URL,
                }
            },
        }
    ],
}
COMPARE = {
    "type": "compare",
    "comparison": "EQUAL",
    "left": {"type": "field", "field": "a"},
    "right": {"type": "literal", "value": "1"},
}


def _facet_map(condition: dict[str, Any], url: str = INPUT_URL) -> dict[str, Any]:
    key = "inputCondition" if url == INPUT_URL else "outputCondition"
    return {"subset": {key: condition, "_producer": PRODUCER, "_schemaURL": url}}


def _event(**changes: Any) -> dict[str, Any]:
    event = copy.deepcopy(EVENT)
    event.update(changes)
    return event


def test_valid_documents_of_every_kind() -> None:
    assert validate(EVENT, strict=True) == []
    assert validate(_facet_map(COMPARE), strict=True) == []
    assert validate(_facet_map(COMPARE)["subset"], strict=True) == []
    job_event = {k: v for k, v in EVENT.items() if k not in ("run", "eventType")}
    job_event["schemaURL"] = EVENT["schemaURL"].replace("RunEvent", "JobEvent")
    assert validate(job_event, strict=True) == []
    dataset_event = {k: EVENT[k] for k in ("eventTime", "producer")}
    dataset_event["schemaURL"] = EVENT["schemaURL"].replace("RunEvent", "DatasetEvent")
    dataset_event["dataset"] = {"namespace": "file", "name": "/data"}
    assert validate(dataset_event, strict=True) == []


def test_strict_mode_holds_an_event_to_the_definition_its_schema_url_names() -> None:
    no_run = {k: v for k, v in EVENT.items() if k not in ("run", "eventType")}
    assert no_run["schemaURL"].endswith("#/$defs/RunEvent")
    assert validate(no_run) == [], "without strict, any event definition will do"
    issues = validate(no_run, strict=True)
    assert [(i.path, i.rule) for i in issues] == [("$", "strict")]
    assert "'run'" in issues[0].message


def test_official_examples_validate_and_strict_flags_their_schema_url() -> None:
    examples = docs_examples()
    assert len(examples) == 4
    for name, example in examples.items():
        named = _named_version(example)
        unknown = named not in spec_versions()
        with _warns_while_unknown(example):
            assert validate(example) == [], name
        with _warns_while_unknown(example):
            issues = validate(example, strict=True)
        assert [(i.path, i.rule) for i in issues] == [("$.subset._schemaURL", "strict")], name
        assert named in issues[0].message
        assert ("does not exist" in issues[0].message) is unknown
        assert "'$defs/InputSubsetDatasetFacet' is not a definition" in issues[0].message
        # The facet is checked by the version it names when this installation has it, else by
        # the newest: the message points at that version's definition.
        checked_by = spec(None if unknown else named)
        assert issues[0].message.endswith(checked_by.facet_def_url("InputSubsetInputDatasetFacet"))


def _named_version(example: dict[str, Any]) -> str:
    found = re.search(r"/facets/(\d+-\d+-\d+)/", example["subset"]["_schemaURL"])
    assert found, example
    return found.group(1)


@contextlib.contextmanager
def _warns_while_unknown(example: dict[str, Any]) -> Iterator[None]:
    """Expect an :class:`UnknownSpecVersionWarning` while the version ``example`` names (the
    public examples name 1-1-0) is not generated, and none once a spec bump has added it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    unknown = _named_version(example) not in spec_versions()
    expected = [UnknownSpecVersionWarning] if unknown else []
    assert [w.category for w in caught] == expected, [str(w.message) for w in caught]


def _seed_examples() -> list[Any]:
    if not SEEDS.is_dir():
        pytest.skip(f"seed documents not found at {SEEDS}")
    examples = []
    for path in sorted(SEEDS.glob("*.txt")):
        for block in re.findall(r"```json\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL):
            examples.append(json.loads(block))
    return examples


def test_seed_examples() -> None:
    examples = _seed_examples()
    released = [e for e in examples if "subset" in e]
    drafts = [e for e in examples if "filter" in e]
    assert len(released) == 3 and len(drafts) == 1
    for example in released:
        with _warns_while_unknown(example):
            assert validate(example) == []
    (issue,) = validate(drafts[0])
    assert "draft" in issue.message and "'subset'" in issue.message


@pytest.mark.parametrize(
    ("document", "path", "fragment"),
    [
        (
            _facet_map({**COMPARE, "comparison": "EQUALS"}),
            "$.subset.inputCondition.comparison",
            "expected one of",
        ),
        (
            _facet_map({"type": "binary", "operator": "XOR", "left": COMPARE, "right": COMPARE}),
            "$.subset.inputCondition.operator",
            '"AND", "OR"',
        ),
        (_event(eventTime="yesterday"), "$.eventTime", "date-time"),
        (_event(eventTime="2023-02-29T10:00:00Z"), "$.eventTime", "date-time"),
        (_event(run={"runId": "run-42"}), "$.run.runId", "uuid"),
        (_event(producer="not a uri"), "$.producer", "uri"),
    ],
)
def test_strict_only_rules(document: Any, path: str, fragment: str) -> None:
    assert validate(document) == []
    issues = validate(document, strict=True)
    assert [(i.path, i.rule) for i in issues] == [(path, "strict")]
    assert fragment in issues[0].message


LIKE = {**COMPARE, "comparison": "LIKE"}
"""A comparison the schema allows and its prose does not."""


@pytest.mark.parametrize(
    "document",
    [
        {
            "inputCondition": LIKE,
            "outputCondition": COMPARE,
            "_producer": PRODUCER,
            "_schemaURL": INPUT_URL,
        },
        {
            "subset": {
                "inputCondition": COMPARE,
                "outputCondition": LIKE,
                "_producer": PRODUCER,
                "_schemaURL": OUTPUT_URL,
            }
        },
        {
            **{key: value for key, value in EVENT.items() if key != "run"},
            "schemaURL": CORE_URL.replace("RunEvent", "JobEvent"),
            "dataset": {"namespace": "file", "name": "/data"},
        },
        {
            "eventTime": EVENT["eventTime"],
            "producer": PRODUCER,
            "schemaURL": CORE_URL.split("#")[0],
            "job": EVENT["job"],
            "dataset": {"namespace": "file", "name": "/data"},
            "inputs": [
                {
                    "namespace": "file",
                    "name": "/in",
                    "inputFacets": {"stats": {"_producer": "not a uri", "_schemaURL": PRODUCER}},
                }
            ],
        },
    ],
    ids=["facet", "facet map", "event named JobEvent", "event naming no definition"],
)
def test_strict_mode_rejects_what_the_schema_rejects(document: Any) -> None:
    """The schema takes these for two branches of a ``oneOf`` (an input and an output facet, a
    JobEvent and a DatasetEvent), which only one of them passes with the prose rules: the
    schema's issue stays, since strict mode is the schema and the rules."""
    schema_issues = validate(document)
    assert any("matches more than one of" in issue.message for issue in schema_issues)
    strict_issues = validate(document, strict=True)
    assert [issue for issue in strict_issues if issue.rule == "schema"] == schema_issues


def test_strict_schema_url_must_match_the_role() -> None:
    document = _facet_map(COMPARE)
    document["subset"]["_schemaURL"] = OUTPUT_URL
    (issue,) = validate(document, strict=True)
    assert issue.path == "$.subset._schemaURL"
    assert "not the definition of an input facet" in issue.message


def test_strict_schema_url_must_name_the_facet_schema() -> None:
    document = _facet_map(COMPARE)
    document["subset"]["_schemaURL"] = CORE_URL.replace(
        "#/$defs/RunEvent", "#/$defs/InputDatasetFacet"
    )
    (issue,) = validate(document, strict=True)
    assert "does not name a definition of BaseSubsetDatasetFacet.json" in issue.message


def test_strict_roles_inside_events() -> None:
    event = _event()
    event["inputs"][0]["inputFacets"]["subset"] = copy.deepcopy(
        EVENT["outputs"][0]["outputFacets"]["subset"]
    )
    assert validate(event) == []
    messages = {i.message for i in validate(event, strict=True)}
    assert any("an output subset facet (outputCondition) under inputFacets" in m for m in messages)


@pytest.mark.parametrize(
    ("document", "path", "fragment"),
    [
        (_facet_map({"type": "nope"}), "$.subset.inputCondition.type", "unknown type 'nope'"),
        (_facet_map({"type": "location"}), "$.subset.inputCondition", "'locations'"),
        (
            _facet_map({"type": "partition", "partitions": [{"identifier": 1}]}),
            "$.subset.inputCondition.partitions[0]",
            "'dimensions'",
        ),
        (
            {
                "subset": {
                    "inputCondition": COMPARE,
                    "outputCondition": COMPARE,
                    "_producer": PRODUCER,
                    "_schemaURL": INPUT_URL,
                }
            },
            "$.subset",
            "more than one",
        ),
        (_event(run={}), "$.run", "'runId'"),
        (_event(eventType="DONE"), "$.eventType", "expected one of"),
        ({"eventTime": "2024-10-15T10:00:00Z"}, "$", "producer"),
    ],
)
def test_schema_issues_have_paths_and_messages(document: Any, path: str, fragment: str) -> None:
    issues = validate(document)
    assert any(i.path == path and fragment in i.message and i.rule == "schema" for i in issues), (
        issues
    )


def test_subset_facets_in_events_are_checked_once_with_full_paths() -> None:
    event = _event()
    del event["inputs"][0]["inputFacets"]["subset"]["_producer"]
    event["outputs"][0]["outputFacets"]["subset"]["outputCondition"]["partitions"] = "all"
    issues = validate(event)
    assert [i.path for i in issues] == [
        "$.inputs[0].inputFacets.subset",
        "$.outputs[0].outputFacets.subset.outputCondition.partitions",
    ]


def test_an_issue_the_event_check_also_finds_in_a_subset_facet_is_reported() -> None:
    """The event check's issues inside subset facets are left to the facet check: that one
    reports them, though it words some the same."""
    event = _event()
    event["inputs"][0]["inputFacets"]["subset"]["_producer"] = 5
    expected = ["$.inputs[0].inputFacets.subset._producer"]
    assert [issue.path for issue in validate(event)] == expected
    run_and_dataset = {k: v for k, v in event.items() if k not in ("job", "outputs")}
    run_and_dataset["dataset"] = {"namespace": "file", "name": "/data"}
    assert [issue.path for issue in validate(run_and_dataset)] == expected
    strict_issues = validate(run_and_dataset, strict=True)
    assert [issue.path for issue in strict_issues if issue.rule == "schema"] == expected


def test_documents_that_are_not_documents() -> None:
    (issue,) = validate([1, 2])
    assert issue.path == "$" and "expected a JSON object" in issue.message
    (issue,) = validate({"name": "x"})
    assert "not a facet map" in issue.message and "'name'" in issue.message
    draft = {
        "filter": {
            "left": {"field": "col1", "value": "7", "comparison": "EQUAL"},
            "right": {"field": "col2", "value": "9", "comparison": "EQUAL"},
            "operator": "AND",
        }
    }
    (issue,) = validate(draft)
    assert "draft" in issue.message and "'subset'" in issue.message


def test_deep_nesting_is_an_issue_not_a_crash() -> None:
    node: dict[str, Any] = {"type": "location", "locations": []}
    for _ in range(5000):
        node = {"type": "binary", "operator": "OR", "left": node, "right": node}
    (issue,) = validate(_facet_map(node))
    assert "nested too deeply" in issue.message


def test_issues_render_as_path_and_message() -> None:
    (issue,) = validate(_facet_map({"type": "nope"}))
    assert str(issue) == f"{issue.path}: {issue.message}"


def test_example_files_are_strictly_valid() -> None:
    for path in sorted(p for p in (ROOT / "examples").iterdir() if p.suffix in (".json", ".jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines() if path.suffix == ".jsonl" else None
        documents = (
            [json.loads(line) for line in lines] if lines else [json.loads(path.read_text())]
        )
        for document in documents:
            assert validate(document, strict=True) == [], path


def test_invalid_test_corpus_is_invalid() -> None:
    for path in sorted((ROOT / "tests" / "data" / "invalid").glob("*.json")):
        assert validate(json.loads(path.read_text())) != [], path


def _with_input_facet(pair: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    event, facet = pair
    return {
        **event,
        "inputs": [{"namespace": "file", "name": "/in", "inputFacets": {"subset": facet}}],
    }


DOCUMENTS = (
    facet_maps(strict=False)
    | mutated(facet_maps(strict=False))
    | two_role_facets(strict=False)
    | mutated(two_role_facets(strict=False).map(lambda facet: {"subset": facet}))
    | events(strict=False)
    | mutated(events(strict=False))
    | mutated(events_without_run(strict=False))
    | st.tuples(events(strict=False), two_role_facets(strict=False)).map(_with_input_facet)
    | json_values
)


@given(DOCUMENTS)
def test_the_schema_issues_of_strict_mode_are_those_of_lenient_mode(document: Any) -> None:
    """Strict mode reports every issue lenient mode does, in the same order, as schema issues,
    and adds only issues of the prose rules: it never accepts what the schema rejects."""
    schema_issues = validate(document)
    strict_issues = validate(document, strict=True)
    assert [issue for issue in strict_issues if issue.rule == "schema"] == schema_issues
