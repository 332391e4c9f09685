"""What the validator compilers know of JSON Schema, and how they read a schema's types.

Both compilers (``_schema_compiler`` for a schema as written, ``_extra_rules`` for what the strict
schema adds) need the same vocabulary: which keywords are supported, which only annotate, the
Python test of each JSON type and the formats strict mode asserts. Keeping it in one place means
that teaching the generator a keyword starts here, and both compilers agree on what a type test is.
"""

from __future__ import annotations

from typing import Any

Schema = Any
"""A JSON Schema as parsed from JSON: an object (``dict``) or a boolean."""

ANNOTATIONS = frozenset(
    {
        "description",
        "example",
        "examples",
        "title",
        "$comment",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
"""Keywords that check nothing: the compilers skip them wherever they appear."""
SUPPORTED = ANNOTATIONS | {
    "$ref",
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
}
"""Every keyword the compilers know; any other stops generation (``CodegenError``)."""
TYPE_TESTS = {
    "object": ("isinstance({x}, dict)", "an object"),
    "array": ("isinstance({x}, list)", "an array"),
    "string": ("isinstance({x}, str)", "a string"),
    "boolean": ("isinstance({x}, bool)", "a boolean"),
    "null": ("{x} is None", "null"),
    "integer": (
        "(isinstance({x}, int) and not isinstance({x}, bool)"
        " or isinstance({x}, float) and {x}.is_integer())",
        "an integer",
    ),
    "number": ("(isinstance({x}, (int, float)) and not isinstance({x}, bool))", "a number"),
}
"""Each JSON type's test, a template over ``{x}``, and its name in an issue's message."""
FORMATS = ("date-time", "uuid", "uri")
"""Formats checked where formats are asserted (strict mode), by ``_support.matches_format``."""


def declared_type(schema: Schema) -> str | None:
    """The one type ``schema`` declares (``"string"`` for ``{"type": ["string"]}``), else None."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list) and len(kind) == 1:
        kind = kind[0]
    return kind if isinstance(kind, str) else None


def type_test(schema: Schema, x: str) -> str | None:
    """The test of ``schema``'s ``type`` on ``x``, if it has one."""
    if not isinstance(schema, dict) or "type" not in schema:
        return None
    return types_test(schema["type"] if isinstance(schema["type"], list) else [schema["type"]], x)


def types_test(types: list[str], x: str) -> str:
    """The test that ``x`` has one of ``types``, one operand for ``not`` and ``and``: several
    are grouped always, since a leading parenthesis (``integer`` and ``number`` have one) does
    not mean the whole test is in it."""
    tests = [TYPE_TESTS[t][0].format(x=x) for t in types]
    return tests[0] if len(tests) == 1 else "(" + " or ".join(tests) + ")"


def lone_type(schema: Schema, *, ignored: frozenset[str]) -> str | None:
    """The type of a schema that checks nothing but a single type, else None."""
    if isinstance(schema, dict) and set(schema) - ignored == {"type"}:
        kind = schema["type"]
        if isinstance(kind, str) and kind in TYPE_TESTS:
            return kind
    return None


def discriminator_values(schema: Schema) -> tuple[str, ...] | None:
    """The strings a property allows by a ``const`` or an ``enum`` of strings: the values by
    which a discriminator picks the branch holding that property, else None."""
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("const"), str):
        return (schema["const"],)
    values = schema.get("enum")
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        return tuple(values)
    return None


def find_discriminator(defs: dict[str, Schema], schemas: list[Schema]) -> str | None:
    """A property every branch requires with string values of its own (a ``const``, or an
    ``enum`` of strings) that no other branch allows, if there is one."""
    targets = []
    for schema in schemas:
        if not (isinstance(schema, dict) and set(schema) - ANNOTATIONS == {"$ref"}):
            return None
        target = defs.get(schema["$ref"].removeprefix("#/$defs/"))
        if not isinstance(target, dict) or target.get("type") != "object":
            return None
        targets.append(target)
    candidates = None
    for target in targets:
        keys = {
            name
            for name, prop in target.get("properties", {}).items()
            if discriminator_values(prop) is not None and name in target.get("required", [])
        }
        candidates = keys if candidates is None else candidates & keys
    for name in sorted(candidates or ()):
        values = [v for t in targets for v in discriminator_values(t["properties"][name]) or ()]
        if len(set(values)) == len(values):
            return str(name)
    return None
