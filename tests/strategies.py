"""Hypothesis strategies for subset conditions, facets and events, valid and mutated.

Valid trees are built from the spec as these tests read it (the seeds and the schema), not from
the package under test, so that the tests can disagree with the implementation.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from tests.helpers import CORE_URL, INPUT_URL, OUTPUT_URL

COMPARISONS = ["EQUAL", "GREATER_THAN", "GREATER_EQUAL_THAN", "LESS_THAN", "LESS_EQUAL_THAN"]
OPERATORS = ["AND", "OR"]
URIS = [
    "https://github.com/OpenLineage/OpenLineage/blob/v1-0-0/client",
    "https://example.com/producer?v=1#frag",
    "urn:producer:demo",
]
UUIDS = ["0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11", "3f2504e0-4f89-11d3-9a0c-0305e82c3301"]
TIMES = ["2024-10-15T10:00:00Z", "2024-10-15T10:00:00.123+02:00", "2024-02-29T23:59:59.5Z"]

Json = Any

names = st.text(min_size=1, max_size=10)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**40), max_value=2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=6,
)


def _extras(known: set[str]) -> st.SearchStrategy[dict[str, Json]]:
    keys = st.text(max_size=8).filter(lambda key: key not in known)
    return st.dictionaries(keys, json_values, max_size=2)


def _with_extras(base: st.SearchStrategy[dict[str, Json]], known: set[str]) -> Any:
    return st.tuples(base, _extras(known)).map(lambda pair: {**pair[1], **pair[0]})


def _strings(documented: list[str], strict: bool) -> st.SearchStrategy[str]:
    if strict:
        return st.sampled_from(documented)
    return st.sampled_from(documented) | st.text(max_size=8)


def expressions() -> st.SearchStrategy[dict[str, Json]]:
    field = _with_extras(
        st.fixed_dictionaries({"type": st.just("field"), "field": names}), {"type", "field"}
    )
    literal = _with_extras(
        st.fixed_dictionaries({"type": st.just("literal"), "value": st.text(max_size=10)}),
        {"type", "value"},
    )
    return field | literal


def conditions(*, strict: bool = True, max_leaves: int = 8) -> st.SearchStrategy[dict[str, Json]]:
    """Valid condition trees; ``strict`` keeps comparison/operator to the documented values."""
    location = _with_extras(
        st.fixed_dictionaries(
            {"type": st.just("location"), "locations": st.lists(st.text(max_size=16), max_size=3)}
        ),
        {"type", "locations"},
    )
    partition_item = _with_extras(
        st.fixed_dictionaries(
            {"dimensions": st.dictionaries(names, st.none() | st.text(max_size=8), max_size=3)},
            optional={"identifier": st.text(max_size=16)},
        ),
        {"dimensions", "identifier"},
    )
    partition = _with_extras(
        st.fixed_dictionaries(
            {"type": st.just("partition"), "partitions": st.lists(partition_item, max_size=3)}
        ),
        {"type", "partitions"},
    )
    compare = _with_extras(
        st.fixed_dictionaries(
            {
                "type": st.just("compare"),
                "left": expressions(),
                "right": expressions(),
                "comparison": _strings(COMPARISONS, strict),
            }
        ),
        {"type", "left", "right", "comparison"},
    )

    def binary(children: st.SearchStrategy[dict[str, Json]]) -> Any:
        return _with_extras(
            st.fixed_dictionaries(
                {
                    "type": st.just("binary"),
                    "left": children,
                    "right": children,
                    "operator": _strings(OPERATORS, strict),
                }
            ),
            {"type", "left", "right", "operator"},
        )

    return st.recursive(location | partition | compare, binary, max_leaves=max_leaves)


_FACET_KEYS = {"inputCondition", "outputCondition", "_producer", "_schemaURL"}


def facets(*, strict: bool = True, role: str | None = None) -> st.SearchStrategy[dict[str, Json]]:
    """Valid subset facets (input or output) with the newest version's ``_schemaURL``s."""

    def facet(key: str, url: str) -> Any:
        return _with_extras(
            st.fixed_dictionaries(
                {
                    key: conditions(strict=strict),
                    "_producer": st.sampled_from(URIS),
                    "_schemaURL": st.just(url),
                }
            ),
            _FACET_KEYS,
        )

    inputs, outputs = facet("inputCondition", INPUT_URL), facet("outputCondition", OUTPUT_URL)
    if role == "input":
        return inputs
    if role == "output":
        return outputs
    return inputs | outputs


def facet_maps(*, strict: bool = True) -> st.SearchStrategy[dict[str, Json]]:
    return facets(strict=strict).map(lambda facet: {"subset": facet})


def _other_facets() -> st.SearchStrategy[dict[str, Json]]:
    facet = _with_extras(
        st.fixed_dictionaries(
            {
                "_producer": st.sampled_from(URIS),
                "_schemaURL": st.just("https://example.com/MyFacet.json#/$defs/MyFacet"),
            }
        ),
        {"_producer", "_schemaURL"},
    )
    return st.dictionaries(st.sampled_from(["custom", "stats", "version"]), facet, max_size=2)


def _datasets(role: str, strict: bool) -> Any:
    facets_key = "inputFacets" if role == "input" else "outputFacets"
    subset = st.fixed_dictionaries({}, optional={"subset": facets(strict=strict, role=role)})
    facet_map = st.tuples(_other_facets(), subset).map(lambda pair: {**pair[0], **pair[1]})
    return st.fixed_dictionaries(
        {"namespace": st.sampled_from(["s3://warehouse", "file"]), "name": names},
        optional={facets_key: facet_map},
    )


def events(*, strict: bool = True) -> st.SearchStrategy[dict[str, Json]]:
    """Valid RunEvents with subset facets among other facets."""
    return st.fixed_dictionaries(
        {
            "eventTime": st.sampled_from(TIMES),
            "producer": st.sampled_from(URIS),
            "schemaURL": st.just(CORE_URL),
            "run": st.fixed_dictionaries({"runId": st.sampled_from(UUIDS)}),
            "job": st.fixed_dictionaries({"namespace": st.just("demo"), "name": names}),
        },
        optional={
            "eventType": st.sampled_from(
                ["START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"]
            ),
            "inputs": st.lists(_datasets("input", strict), max_size=3),
            "outputs": st.lists(_datasets("output", strict), max_size=2),
        },
    )


def two_role_facets(*, strict: bool = True) -> st.SearchStrategy[dict[str, Json]]:
    """Subset facets with an ``inputCondition`` and an ``outputCondition``: under the schema
    alone both an input and an output facet, which its ``oneOf`` forbids."""
    return st.tuples(facets(strict=strict, role="input"), conditions(strict=strict)).map(
        lambda pair: {**pair[0], "outputCondition": pair[1]}
    )


def events_without_run(*, strict: bool = True) -> st.SearchStrategy[dict[str, Json]]:
    """Events with a job and a dataset but no run, which the schema alone takes for both a
    JobEvent and a DatasetEvent; their ``schemaURL`` names any of the event definitions."""
    return st.tuples(
        events(strict=strict), st.sampled_from(["RunEvent", "JobEvent", "DatasetEvent"])
    ).map(
        lambda pair: {
            **{key: value for key, value in pair[0].items() if key != "run"},
            "schemaURL": pair[0]["schemaURL"].replace("RunEvent", pair[1]),
            "dataset": {"namespace": "file", "name": "/data"},
        }
    )


def _slots(node: Json) -> Iterator[tuple[Json, Any]]:
    """Every (container, key) pair of a JSON tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield node, key
            yield from _slots(value)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield node, index
            yield from _slots(value)


@st.composite
def mutated(draw: st.DrawFn, documents: st.SearchStrategy[Json]) -> Json:
    """A document with one random change: a key removed, a value replaced, a type renamed.

    The result may or may not still be valid; differential tests only need it to be close to
    valid, where validators are most likely to disagree.
    """
    document = copy.deepcopy(draw(documents))
    slots = list(_slots(document))
    if not slots:
        return document
    container, key = draw(st.sampled_from(slots))
    action = draw(st.sampled_from(["delete", "replace", "rename"]))
    if action == "delete":
        del container[key]
    elif action == "replace":
        container[key] = draw(json_values)
    elif isinstance(container, dict):
        container[key] = draw(st.sampled_from(["compare", "binary", "location", "partition"]))
    return document
