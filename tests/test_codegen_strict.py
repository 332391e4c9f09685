"""The strict validators are the lenient ones plus checks of the extra rules, and say exactly
what the schema with its prose rules compiled in says, save where a ``oneOf`` is decided by the
schema alone."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen._bundle import build_bundle, strict_defs
from codegen._store import load_store
from codegen._validators import compile_lenient_and_strict, compile_validators
from openlineage_subset import spec, spec_versions
from tests.helpers import ROOT, TYPE_LISTS
from tests.strategies import (
    events,
    events_without_run,
    facet_maps,
    json_values,
    mutated,
    two_role_facets,
)

Validator = Callable[[Any], list[tuple[tuple[str | int, ...], str]]]

SELECTED_BY_SCHEMA = {"BaseSubsetDatasetFacet", "SubsetFacetMap", "OpenLineageEvent"}
"""Definitions whose ``oneOf`` (the facet's, the event's; the facet map holds the facet) the
schema compiled with its rules decides otherwise: there a facet that is both an input and an
output facet under the schema alone can be one of them under the rules. The strict validators
choose the branch by the schema alone, so for these the one-piece compile tells only whether a
value is valid, not its issues. Every extra rule of theirs lies below the ``oneOf``."""

EXTRA_MESSAGE = re.compile(r"expected (one of .*|a (uri|uuid|date-time) string), got ")
"""The messages of the extra rules: documented allowed values, asserted formats."""

every_version = pytest.mark.parametrize("version", spec_versions())


@cache
def strict_schema(version: str) -> dict[str, Any]:
    """The definitions of ``version`` with the prose rules written in."""
    store = load_store(ROOT / "schemas")
    return strict_defs(build_bundle(store, version, store.facet_versions()[version]))


@cache
def reference(version: str) -> dict[str, Validator]:
    """The strict validators compiled in one piece, the schema with its rules written in."""
    source = compile_validators(strict_schema(version), assert_formats=True, header="")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<reference strict validators>", "exec"), namespace)
    validators: dict[str, Validator] = namespace["VALIDATORS"]
    return validators


def _top_level(module: ModuleType) -> dict[str, ast.AST]:
    """The functions and constants a module defines, by name."""
    found: dict[str, ast.AST] = {}
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            found.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
    return found


def _walker(
    function: Any, strict: ModuleType, lenient: ModuleType, top: dict[str, ast.AST]
) -> str | None:
    """The extra-rule function of a strict check ``return <lenient>.<same name>(x) + <it>(x)``."""
    node = top.get(function.__name__)
    body = node.body if isinstance(node, ast.FunctionDef) else []
    value = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    if (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and isinstance(value.left, ast.Call)
        and isinstance(value.left.func, ast.Attribute)
        and getattr(strict, getattr(value.left.func.value, "id", ""), None) is lenient
        and value.left.func.attr == function.__name__
        and isinstance(value.right, ast.Call)
        and isinstance(value.right.func, ast.Name)
    ):
        return value.right.func.id
    return None


def _selecting_checks(node: ast.AST) -> list[ast.AST]:
    """The lenient checks in ``(lenient check, extra check)`` pairs: those choose the branch of a
    ``oneOf`` whose extra rules apply, and report nothing."""

    def extra_check(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id.endswith("_extra")
        return isinstance(node, ast.Constant) and node.value is None

    return [
        pair.elts[0]
        for pair in ast.walk(node)
        if isinstance(pair, ast.Tuple)
        and len(pair.elts) == 2
        and isinstance(pair.elts[0], ast.Attribute)
        and extra_check(pair.elts[1])
    ]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _extra_checks(
    walker: str, strict: ModuleType, lenient: ModuleType, top: dict[str, ast.AST]
) -> Iterator[str]:
    """Why the functions ``walker`` reaches are not checks of extra rules only, if they are not."""
    definitions = set(strict.VALIDATORS.values())
    pending, seen = [walker], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        node = top[name]
        selecting = _selecting_checks(node)
        for attribute in (n for n in ast.walk(node) if isinstance(n, ast.Attribute)):
            if getattr(strict, getattr(attribute.value, "id", ""), None) is lenient and (
                attribute not in selecting
            ):
                yield f"{name} calls the lenient {attribute.attr}"
        for used in _names(node):
            value = getattr(strict, used, None)
            if callable(value) and value in definitions:
                yield f"{name} calls the whole check {used} again"
            elif getattr(value, "__module__", "") == lenient.__name__:
                yield f"{name} calls the lenient {used}"
            elif used in top and used not in seen:
                pending.append(used)
        for constant in ast.walk(node):
            text = getattr(constant, "value", None)
            if (
                isinstance(constant, ast.Constant)
                and isinstance(text, str)
                and text.startswith(("expected", "missing", "must", "unknown", "matches"))
                and not EXTRA_MESSAGE.fullmatch(text)
            ):
                yield f"{name} reports {text!r}, which is no extra rule"


@every_version
def test_each_strict_definition_is_the_lenient_one_plus_extra_checks(version: str) -> None:
    strict, lenient = spec(version).strict_validators, spec(version).validators
    top = _top_level(strict)
    problems = []
    for definition, function in strict.VALIDATORS.items():
        if function is lenient.VALIDATORS[definition]:
            continue
        walker = _walker(function, strict, lenient, top)
        if walker is None:
            problems.append(f"{definition}: not `return lenient.{function.__name__}(x) + ...(x)`")
        else:
            problems += [f"{definition}: {p}" for p in _extra_checks(walker, strict, lenient, top)]
    assert not problems, "\n".join(problems)


@every_version
def test_the_module_says_no_definition_is_whole(version: str) -> None:
    strict = spec(version).strict_validators
    assert "Nothing here is compiled whole" in " ".join((strict.__doc__ or "").split())
    assert "Defined whole" not in (strict.__doc__ or "")


def _nodes(document: Any) -> Iterator[Any]:
    yield document
    children = document.values() if isinstance(document, dict) else document
    if isinstance(document, (dict, list)):
        for child in children:
            yield from _nodes(child)


DOCUMENTS = (
    mutated(facet_maps(strict=False))
    | facet_maps(strict=False)
    | mutated(two_role_facets(strict=False))
    | mutated(events(strict=False))
    | mutated(events_without_run(strict=False))
    | json_values
)


def _assert_exact(
    definition: str,
    value: Any,
    modules: tuple[dict[str, Validator], dict[str, Validator], dict[str, Validator]],
    schema: dict[str, Any],
    selected_by_schema: set[str],
) -> None:
    """The strict check of ``definition`` gives the lenient issues, then extra ones: those of the
    one-piece compile, or, where the schema alone decides a ``oneOf``, its verdict, and only the
    extra issues of the one branch the schema selects."""
    strict, lenient, one_piece = modules
    found, schema_only = strict[definition](value), lenient[definition](value)
    assert found[: len(schema_only)] == schema_only, (definition, value)
    if definition not in selected_by_schema:
        assert Counter(found) == Counter(one_piece[definition](value)), (definition, value)
        return
    assert (not found) == (not schema_only and not one_piece[definition](value)), value
    if schema_only:
        assert found == schema_only, (definition, value)
        return
    branches = [
        branch["$ref"].removeprefix("#/$defs/")
        for branch in schema[definition].get("oneOf", [])
        if "$ref" in branch
    ]
    selected = [branch for branch in branches if not lenient[branch](value)]
    if len(selected) == 1:
        assert found == strict[selected[0]](value), (definition, value)


def _assert_lenient_plus_extra(version: str, value: Any) -> None:
    strict, lenient = spec(version).strict_validators, spec(version).validators
    modules = (strict.VALIDATORS, lenient.VALIDATORS, reference(version))
    for definition, check in strict.VALIDATORS.items():
        _assert_exact(definition, value, modules, strict_schema(version), SELECTED_BY_SCHEMA)
        found, schema_only = check(value), lenient.VALIDATORS[definition](value)
        assert all(EXTRA_MESSAGE.match(message) for _, message in found[len(schema_only) :])


@every_version
@given(document=DOCUMENTS)
def test_strict_issues_are_the_lenient_ones_then_the_extra_ones(
    version: str, document: Any
) -> None:
    for value in _nodes(document):
        _assert_lenient_plus_extra(version, value)


@every_version
@pytest.mark.parametrize(
    "value",
    [
        {
            "type": "binary",
            "operator": "AND",
            "left": {
                "type": "compare",
                "comparison": "LIKE",
                "left": {"type": "field", "field": "a"},
                "right": {"type": "literal", "value": "x"},
            },
            "right": {"type": "location"},
        },
        {"_producer": "not a uri", "_schemaURL": 5},
        {"eventTime": "yesterday", "producer": 1, "schemaURL": "urn:x", "run": {}, "job": {}},
    ],
)
def test_an_extra_issue_before_a_schema_issue_comes_after_it(version: str, value: Any) -> None:
    _assert_lenient_plus_extra(version, value)


def test_the_random_documents_break_extra_rules() -> None:
    """The property above checks something: some random documents break an extra rule."""
    found = []

    @given(document=DOCUMENTS)
    def collect(document: Any) -> None:
        for value in _nodes(document):
            found.extend(
                message
                for check in spec().strict_validators.VALIDATORS.values()
                for _, message in check(value)
                if EXTRA_MESSAGE.match(message)
            )

    collect()
    assert found


ENUM = {"type": "string", "enum": ["A", "B"]}
SYNTHETIC = {
    "Choice": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]},
    "Negated": {"not": {"type": "string"}},
    "Leaf": {
        "type": "object",
        "properties": {"k": {"type": "string"}},
        "additionalProperties": {"type": "string"},
    },
    "Tagged": {"oneOf": [{"$ref": "#/$defs/TagA"}, {"$ref": "#/$defs/TagB"}]},
    "TagA": {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"const": "a"}, "v": {"type": "string"}},
    },
    "TagB": {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "b"}}},
    "Uses": {"type": "object", "properties": {"c": {"$ref": "#/$defs/Choice"}}},
    "Items": {"type": "array", "items": {"$ref": "#/$defs/Leaf"}},
    "Plain": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "Either": {
        "oneOf": [
            {"$ref": "#/$defs/Leaf"},
            {"type": "object", "required": ["x"], "properties": {"k": {"type": "string"}}},
        ]
    },
    "UsesEither": {"type": "object", "properties": {"c": {"$ref": "#/$defs/Either"}}},
    "Untagged": {"oneOf": [{"$ref": "#/$defs/UntaggedA"}, {"$ref": "#/$defs/UntaggedB"}]},
    "UntaggedA": {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"type": "string"}, "v": {"type": "string"}},
    },
    "UntaggedB": {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"type": "string"}},
    },
}
SYNTHETIC_STRICT = {
    **SYNTHETIC,
    "Either": {
        "oneOf": [
            {"$ref": "#/$defs/Leaf"},
            {"type": "object", "required": ["x"], "properties": {"k": ENUM}},
        ]
    },
    "UntaggedA": {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"type": "string", "const": "a"}, "v": ENUM},
    },
    "UntaggedB": {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"type": "string", "const": "b"}},
    },
    "Choice": {"anyOf": [ENUM, {"type": "integer", "minimum": 0}]},
    "Leaf": {
        "type": "object",
        "properties": {"k": ENUM},
        "additionalProperties": {"type": "string", "format": "uri"},
    },
    "TagA": {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"const": "a"}, "v": ENUM},
    },
}
SELECTED_BY_SYNTHETIC_SCHEMA = {"Either", "UsesEither", "Untagged"}
"""``Untagged`` is told apart by a ``const`` under the rules only: the schema alone still
decides which branch it is."""
SYNTHETIC_VALUES = st.recursive(
    st.sampled_from(["A", "C", "urn:x", "not a uri", "a", "b", 1, -1, None])
    | st.builds(dict, kind=st.sampled_from(["a", "b", "c"]), v=st.sampled_from(["A", "C", 2])),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["k", "c", "v", "kind", "x"]), children, max_size=3)
    ),
    max_leaves=6,
)


def _synthetic_modules(
    tmp_path: Path, lenient_defs: dict[str, Any], strict_defs: dict[str, Any]
) -> tuple[ModuleType, ModuleType, dict[str, Validator]]:
    """The lenient and strict modules compiled from synthetic schemas, and the strict schema
    compiled whole (the reference)."""
    package = tmp_path / "synthetic"
    package.mkdir()
    lenient_source, strict_source = compile_lenient_and_strict(
        lenient_defs, strict_defs, lenient_module="synthetic.validators", header=""
    )
    (package / "__init__.py").write_text("")
    (package / "validators.py").write_text(lenient_source)
    (package / "strict_validators.py").write_text(strict_source)
    sys.path.insert(0, str(tmp_path))
    try:
        lenient = importlib.import_module("synthetic.validators")
        strict = importlib.import_module("synthetic.strict_validators")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] == "synthetic"]:
            del sys.modules[name]
    source = compile_validators(strict_defs, assert_formats=True, header="")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<synthetic strict>", "exec"), namespace)
    return lenient, strict, namespace["VALIDATORS"]


def test_any_of_over_rules_stays_whole_and_the_rest_adds_up(tmp_path: Path) -> None:
    lenient, strict, one_piece = _synthetic_modules(tmp_path, SYNTHETIC, SYNTHETIC_STRICT)
    whole = {"Choice": "anyOf", "Uses": "refers to ``Choice``"}
    for definition, reason in whole.items():
        assert re.search(rf"``{definition}``: [^\n]*{reason}", strict.__doc__ or ""), definition
    assert not re.search(r"``(Either|UsesEither|Untagged)``", strict.__doc__ or "")
    assert strict.VALIDATORS["Plain"] is lenient.VALIDATORS["Plain"]
    assert strict.VALIDATORS["TagB"] is lenient.VALIDATORS["TagB"]
    modules = (strict.VALIDATORS, lenient.VALIDATORS, one_piece)

    @given(SYNTHETIC_VALUES)
    def same(value: Any) -> None:
        for definition, check in strict.VALIDATORS.items():
            if definition in whole:
                assert Counter(check(value)) == Counter(one_piece[definition](value))
            else:
                _assert_exact(
                    definition, value, modules, SYNTHETIC_STRICT, SELECTED_BY_SYNTHETIC_SCHEMA
                )

    same()


def test_a_not_over_rules_is_refused_with_where_and_what_to_do() -> None:
    # Negated, a rule would let strict mode accept what the schema rejects ("C" passes a strict
    # "not" of the enum A/B, which the schema's "not" of any string refuses).
    from codegen._errors import CodegenError

    with pytest.raises(CodegenError, match=r"#/\$defs/Negated/not negates prose rules.*extend"):
        compile_lenient_and_strict(
            SYNTHETIC,
            {**SYNTHETIC_STRICT, "Negated": {"not": ENUM}},
            lenient_module="synthetic.validators",
            header="",
        )


@pytest.mark.parametrize("types", TYPE_LISTS, ids="-".join)
def test_extra_rules_under_a_type_list_check_values_of_those_types(
    tmp_path: Path, types: tuple[str, ...]
) -> None:
    kind = list(types)
    lenient_defs = {
        "Value": {"type": kind},
        "Holder": {"type": "object", "properties": {"v": {"type": kind}, "w": {"type": kind}}},
    }
    strict_defs = {
        "Value": {"type": kind, "enum": ["A", 1, None, True, [1], {}]},
        "Holder": {
            "type": "object",
            "properties": {
                "v": {"type": kind, "enum": ["A", 1, None, True, [1], {}]},
                "w": {"type": kind, "format": "uri"},
            },
        },
    }
    lenient, strict, one_piece = _synthetic_modules(tmp_path, lenient_defs, strict_defs)
    values = st.sampled_from(
        ["A", "B", "urn:x", "not a uri", 1, 2, 1.5, None, True, False, [1], {}]
    )

    @given(values | st.fixed_dictionaries({}, optional={"v": values, "w": values}))
    def same(value: Any) -> None:
        for definition, check in strict.VALIDATORS.items():
            found, schema_only = check(value), lenient.VALIDATORS[definition](value)
            assert Counter(found) == Counter(one_piece[definition](value)), (definition, value)
            assert found[: len(schema_only)] == schema_only, (definition, value)

    same()
