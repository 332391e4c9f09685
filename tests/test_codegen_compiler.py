"""The schema-to-Python compiler agrees with jsonschema keyword by keyword, on random JSON."""

from __future__ import annotations

import ast
import copy
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen._bundle import build_bundle
from codegen._errors import CodegenError
from codegen._store import load_store
from codegen._validators import compile_validators
from openlineage_subset import spec
from tests.helpers import ROOT, TYPE_LISTS
from tests.strategies import json_values

KEYWORD_SCHEMAS: dict[str, Any] = {
    "type-single": {"type": "integer"},
    "type-list": {"type": ["string", "null", "number"]},
    "const-number": {"const": 1},
    "const-object": {"const": {"a": [1, True]}},
    "enum-mixed": {"enum": ["a", 1, None, False]},
    "enum-strings": {"enum": ["EQUAL", "LESS_THAN"]},
    "object": {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "array", "items": {"type": "boolean"}},
        },
        "additionalProperties": False,
    },
    "additional-schema": {"properties": {"a": True}, "additionalProperties": {"type": "integer"}},
    "array-bounds": {"type": "array", "minItems": 1, "maxItems": 2},
    "string-bounds": {"minLength": 1, "maxLength": 3, "pattern": "^[a-c]+$"},
    "number-bounds": {"minimum": -1, "maximum": 5, "exclusiveMinimum": -2, "exclusiveMaximum": 4.5},
    "all-of": {"allOf": [{"type": "object"}, {"required": ["x"]}]},
    "any-of": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]},
    "one-of": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
    "one-of-discriminated": {
        "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
    },
    "one-of-discriminated-by-enum": {
        "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/C"}],
    },
    "not": {"not": {"required": ["run", "job"]}},
    "boolean-false": {"properties": {"a": False}},
    "annotations": {"description": "d", "title": "t", "example": 1, "format": "uuid"},
}
DEFS = {
    "A": {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "a"}}},
    "B": {
        "type": "object",
        "required": ["kind", "n"],
        "properties": {"kind": {"const": "b"}, "n": {"type": "integer"}},
    },
    "C": {
        "type": "object",
        "required": ["kind", "m"],
        "properties": {"kind": {"enum": ["c", "d"]}, "m": {"type": "string"}},
        "additionalProperties": False,
    },
}
TARGETED = st.sampled_from(
    [
        0,
        -1,
        1,
        1.0,
        4.5,
        5,
        2.5,
        True,
        False,
        None,
        "",
        "a",
        "abcd",
        "d",
        [],
        [1],
        [1, 2, 3],
        {},
        {"a": "x"},
        {"a": 1},
        {"x": 1},
        {"kind": "a"},
        {"kind": "b"},
        {"kind": "b", "n": 1},
        {"kind": "c"},
        {"kind": "d", "m": "x"},
        {"kind": "c", "m": 1},
        {"kind": "c", "m": "x", "n": 1},
        {"run": 1},
        {"run": 1, "job": 2},
        {"a": [1, True]},
        {"a": "x", "b": [True]},
    ]
)


def _compiled(schema: Any) -> Any:
    source = compile_validators({"Root": schema, **DEFS}, assert_formats=False, header="")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    return namespace["VALIDATORS"]["Root"]


@pytest.mark.parametrize("name", sorted(KEYWORD_SCHEMAS))
def test_compiled_keyword_agrees_with_jsonschema(name: str) -> None:
    schema = KEYWORD_SCHEMAS[name]
    validator = _compiled(schema)
    oracle = jsonschema.Draft202012Validator({**schema, "$defs": DEFS})

    @given(TARGETED | json_values)
    def agree(value: Any) -> None:
        assert (not validator(value)) == oracle.is_valid(value), value

    agree()


def test_discriminated_one_of_names_the_known_values() -> None:
    validator = _compiled(KEYWORD_SCHEMAS["one-of-discriminated"])
    assert validator({"kind": "c"}) == [(("kind",), "unknown kind 'c', expected one of 'a', 'b'")]


def test_a_discriminator_may_be_an_enum_of_strings() -> None:
    """A branch allowing several values (``{"enum": ["c", "d"]}``) is picked by each of them, so
    its own issue is reported, not the closest branch's guess."""
    validator = _compiled(KEYWORD_SCHEMAS["one-of-discriminated-by-enum"])
    assert validator({"kind": "d"}) == [((), "missing required property 'm'")]
    assert validator({"kind": "c", "m": "x"}) == []
    assert validator({"kind": "e"}) == [
        (("kind",), "unknown kind 'e', expected one of 'a', 'c', 'd'")
    ]


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"patternProperties": {"^a": {}}}, "patternProperties"),
        ({"$ref": "#/$defs/Missing"}, "not a bundled definition"),
        ({"type": "decimal"}, "unknown type"),
        ({"enum": []}, "non-empty array"),
    ],
)
def test_unsupported_schemas_stop_generation(schema: Any, fragment: str) -> None:
    with pytest.raises(CodegenError, match=fragment):
        compile_validators({"Root": schema}, assert_formats=False, header="")


def _definitions(source: str) -> dict[str, str]:
    """Each top-level function and constant of a generated module, by name, as source text."""
    tree = ast.parse(source)
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = ast.get_source_segment(source, node) or ""
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = ast.get_source_segment(source, node) or ""
    return found


def test_a_definition_change_changes_only_its_own_functions() -> None:
    store = load_store(ROOT / "schemas")
    version, facet = list(store.facet_versions().items())[-1]
    defs = build_bundle(store, version, facet).defs
    changed = copy.deepcopy(defs)
    changed["Partition"]["properties"]["note"] = {"type": "string", "minLength": 1}
    before = _definitions(compile_validators(defs, assert_formats=False, header=""))
    after = _definitions(compile_validators(changed, assert_formats=False, header=""))
    differing = {
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    }
    assert differing == {"_Partition", "_Partition__note"}


def test_strict_module_defines_only_what_its_rules_change() -> None:
    strict = spec().strict_validators
    lenient = spec().validators
    own = {
        name
        for name, value in vars(strict).items()
        if getattr(value, "__module__", "") == strict.__name__
    }
    shared = [
        name
        for name, function in strict.VALIDATORS.items()
        if function.__module__ == lenient.__name__
    ]
    assert own and shared, "the strict module both imports lenient checks and adds its own"
    for name in shared:
        assert strict.VALIDATORS[name] is lenient.VALIDATORS[name]


@pytest.mark.parametrize("types", TYPE_LISTS, ids="-".join)
def test_type_lists_in_any_order_agree_with_jsonschema(types: tuple[str, ...]) -> None:
    kind = list(types)
    schemas = [
        {"type": kind},
        {"type": kind, "minimum": 1, "minLength": 1, "minItems": 1, "required": ["a"]},
        {"type": kind, "enum": ["a", 1, None, True, [1], {"a": "x"}]},
        {"type": "object", "properties": {"a": {"type": kind}}},
        {"type": "array", "items": {"type": kind, "maximum": 4}},
    ]
    checks = [
        (_compiled(s), jsonschema.Draft202012Validator({**s, "$defs": DEFS})) for s in schemas
    ]

    @given(TARGETED | json_values | st.builds(lambda v: {"a": v}, TARGETED) | st.lists(TARGETED))
    def agree(value: Any) -> None:
        for schema, (validator, oracle) in zip(schemas, checks, strict=True):
            assert (not validator(value)) == oracle.is_valid(value), (schema, value)

    agree()
