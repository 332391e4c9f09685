"""Compile JSON Schema keywords into the source of Python validator functions.

This is the compiler of a schema as written: each definition becomes ``_<Name>(x) ->
list[Issue]`` and each inline subschema a helper named after its place in the schema, and the
compiled code accepts exactly what a JSON Schema 2020-12 validator accepts for the keywords of
``SUPPORTED`` (a property test checks this against ``jsonschema``). Any other keyword stops
generation with a message, so that a spec bump never silently weakens validation. It compiles
the lenient schema and the strict one alike; what the strict schema adds over the lenient one is
``_extra_rules``' business, which reuses the keyword checks here (``const_lines``,
``enum_lines``, ``format_lines``, ``constant``) so that an issue reads the same in both.

A ``oneOf`` whose branches are objects told apart by a required ``const`` property (the subset
conditions' ``type``) compiles to a dictionary dispatch with an error that names the known values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from codegen._errors import CodegenError
from codegen._python_source import (
    helper_name,
    message_literal,
    nested,
    without_empty_accumulator,
)
from codegen._schema_keywords import (
    ANNOTATIONS,
    FORMATS,
    SUPPORTED,
    TYPE_TESTS,
    Schema,
    discriminator_values,
    find_discriminator,
    lone_type,
    types_test,
)


class SchemaCompiler:
    """The functions and constants that validate ``defs``, by name, as source text.

    ``def_functions`` names the check of each definition; ``code`` holds everything compiled so
    far, in order, the helpers after the function that first calls them. With
    ``assert_formats``, a ``format`` of ``FORMATS`` is checked, else it is an annotation.
    """

    def __init__(self, defs: dict[str, Schema], *, assert_formats: bool) -> None:
        self.defs = defs
        self.assert_formats = assert_formats
        self.def_functions = {name: "_" + re.sub(r"\W", "_", name) for name in defs}
        if len(set(self.def_functions.values())) != len(defs):
            raise CodegenError("two definition names map to the same Python name")
        self.code: dict[str, str] = {}
        self.constant_names: dict[str, str] = {}

    def compile(self) -> dict[str, str]:
        """Every function and constant, by name, as source text (functions in schema order)."""
        for name, schema in self.defs.items():
            self._function(self.def_functions[name], schema, f"#/$defs/{name}")
        return self.code

    # -- functions --------------------------------------------------------------------------------

    def _call_target(self, schema: Schema, pointer: str) -> str:
        """Name of a function validating ``schema``: a definition's own, or a new helper."""
        if isinstance(schema, dict) and set(schema) - ANNOTATIONS == {"$ref"}:
            return self._ref_function(schema["$ref"], pointer)
        name = helper_name(pointer)
        if name in self.code or name in self.def_functions.values():
            raise CodegenError(f"{pointer}: helper name {name} is already taken")
        self._function(name, schema, pointer)
        return name

    def _ref_function(self, ref: str, pointer: str) -> str:
        prefix = "#/$defs/"
        name = ref[len(prefix) :] if ref.startswith(prefix) else None
        if name not in self.def_functions:
            raise CodegenError(f"{pointer}: $ref {ref!r} is not a bundled definition")
        return self.def_functions[name]

    def constant(self, pointer: str, kind: str, value: str) -> str:
        """A module constant named after where it is used; equal values share one constant."""
        if value in self.constant_names:
            return self.constant_names[value]
        name = f"{helper_name(pointer)}_{kind}"
        if name in self.code:
            raise CodegenError(f"{pointer}: constant name {name} is already taken")
        self.constant_names[value] = name
        self.code[name] = f"{name} = {value}\n"
        return name

    def _function(self, name: str, schema: Schema, pointer: str) -> None:
        self.code[name] = ""  # reserve the place: helpers follow the function that calls them
        body = without_empty_accumulator(list(self._body(schema, pointer)))
        lines = [f"def {name}(x: Any) -> list[Issue]:", *("    " + line for line in body)]
        self.code[name] = "\n".join(lines) + "\n"

    def _body(self, schema: Schema, pointer: str) -> Iterator[str]:
        if schema is True or schema == {}:
            yield "return []"
            return
        if schema is False:
            yield "return [((), 'no value is allowed here, got ' + describe(x))]"
            return
        if not isinstance(schema, dict):
            raise CodegenError(f"{pointer}: a schema must be an object or a boolean")
        _refuse_unsupported(schema, pointer)
        type_lines, known_type = _type_check(schema, pointer)
        yield from type_lines
        yield "e: list[Issue] = []"
        if "$ref" in schema:
            yield f"e += {self._ref_function(schema['$ref'], pointer)}(x)"
        if "const" in schema:
            yield from self.const_lines(schema["const"])
        if "enum" in schema:
            yield from self.enum_lines(schema["enum"], pointer, known_type)
        for guard_type, lines in (
            ("object", list(self._object(schema, pointer))),
            ("array", list(self._array(schema, pointer))),
            ("string", list(self._string(schema, pointer))),
            ("number", list(self._number(schema))),
        ):
            if not lines:
                continue
            if known_type == guard_type or (guard_type == "number" and known_type == "integer"):
                yield from lines
            else:
                yield from nested(TYPE_TESTS[guard_type][0].format(x="x"), lines)
        yield from self._combinations(schema, pointer, known_type)
        yield "return e"

    def _combinations(
        self, schema: dict[str, Any], pointer: str, known_type: str | None
    ) -> Iterator[str]:
        """The checks of ``allOf``, ``anyOf``, ``oneOf`` and ``not``: other schemas the value
        is held to, each a function of its own."""
        for index, part in enumerate(schema.get("allOf", [])):
            yield f"e += {self._call_target(part, f'{pointer}/allOf/{index}')}(x)"
        if "anyOf" in schema:
            yield from self._any_of(schema["anyOf"], pointer)
        if "oneOf" in schema:
            yield from self._one_of(schema["oneOf"], pointer, known_type)
        if "not" in schema:
            target = self._call_target(schema["not"], pointer + "/not")
            yield f"if not {target}(x):"
            yield f"    e.append(((), {message_literal(_not_message(schema['not']))}))"

    # -- keywords ---------------------------------------------------------------------------------

    # The keyword checks below read the value as ``x`` and report at ``()``, or, inlined in the
    # check of a containing object or array, read ``x['a']`` and report at ``('a',)``.

    def const_lines(self, value: Any, x: str = "x", at: str = "()") -> Iterator[str]:
        """The check of ``const``: a string compared directly, any other value as JSON."""
        message = f"expected {json.dumps(value)}, got "
        if isinstance(value, str):
            yield f"if {x} != {value!r}:"
        else:
            yield f"if not json_equal({x}, {value!r}):"
        yield f"    e.append(({at}, {message_literal(message)} + describe({x})))"

    def enum_lines(
        self, values: list[Any], pointer: str, known_type: str | None, x: str = "x", at: str = "()"
    ) -> Iterator[str]:
        """The check of ``enum``: strings by a ``frozenset`` constant, other values as JSON."""
        if not isinstance(values, list) or not values:
            raise CodegenError(f"{pointer}/enum: must be a non-empty array")
        message = "expected one of " + ", ".join(json.dumps(v) for v in values) + ", got "
        if all(isinstance(v, str) for v in values):
            allowed = self.constant(pointer, "ENUM", f"frozenset({sorted(values)!r})")
            if known_type == "string":
                yield f"if {x} not in {allowed}:"
            else:
                yield f"if not (isinstance({x}, str) and {x} in {allowed}):"
        else:
            options = self.constant(pointer, "ENUM", repr(tuple(values)))
            yield f"if not any(json_equal({x}, option) for option in {options}):"
        yield f"    e.append(({at}, {message_literal(message)} + describe({x})))"

    def format_lines(self, fmt: str, x: str = "x", at: str = "()") -> Iterator[str]:
        """The check of an asserted ``format`` on a value known to be a string."""
        yield f"if not matches_format({fmt!r}, {x}):"
        yield f"    e.append(({at}, {('expected a ' + fmt + ' string, got ')!r} + describe({x})))"

    def _object(self, schema: Schema, pointer: str) -> Iterator[str]:
        for name in schema.get("required", []):
            yield f"if {name!r} not in x:"
            yield f"    e.append(((), {('missing required property ' + repr(name))!r}))"
        properties = schema.get("properties", {})
        for name, prop_schema in properties.items():
            yield from nested(
                f"{name!r} in x",
                list(
                    self._check_value(
                        f"x[{name!r}]", repr(name), prop_schema, f"{pointer}/properties/{name}"
                    )
                ),
            )
        extra = schema.get("additionalProperties", True)
        if extra is True or extra == {}:
            return
        if extra is False:
            check = ["e.append(((k,), 'unexpected property ' + repr(k)))"]
            loop = "for k in x:"  # the values are not looked at: only the keys are wrong
        else:
            check = list(self._check_value("v", "k", extra, pointer + "/additionalProperties"))
            loop = "for k, v in x.items():"
        if properties:
            known = self.constant(pointer, "PROPERTIES", f"frozenset({sorted(properties)!r})")
            check = list(nested(f"k not in {known}", check))
        yield loop
        yield from ("    " + line for line in check)

    def _check_value(self, value: str, key: str, schema: Schema, pointer: str) -> Iterator[str]:
        """Lines that check ``value`` (stored under ``key``) and add its issues under that key."""
        simple_type = lone_type(schema, ignored=self._ignored())
        if simple_type is not None:
            test, expected = TYPE_TESTS[simple_type]
            yield f"if not {test.format(x=value)}:"
            yield (
                f"    e.append((({key},), {('expected ' + expected + ', got ')!r}"
                f" + describe({value})))"
            )
            return
        yield f"if r := {self._call_target(schema, pointer)}({value}):"
        yield f"    e += prefixed({key}, r)"

    def _ignored(self) -> frozenset[str]:
        """Keywords that check nothing here: annotations, and ``format`` unless asserted."""
        return ANNOTATIONS if self.assert_formats else ANNOTATIONS | {"format"}

    def _array(self, schema: Schema, pointer: str) -> Iterator[str]:
        if "minItems" in schema:
            yield f"if len(x) < {int(schema['minItems'])}:"
            message = f"expected at least {schema['minItems']} item(s), got "
            yield f"    e.append(((), {message!r} + str(len(x))))"
        if "maxItems" in schema:
            yield f"if len(x) > {int(schema['maxItems'])}:"
            message = f"expected at most {schema['maxItems']} item(s), got "
            yield f"    e.append(((), {message!r} + str(len(x))))"
        if "items" in schema and schema["items"] is not True and schema["items"] != {}:
            yield "for i, item in enumerate(x):"
            yield from (
                "    " + line
                for line in self._check_value("item", "i", schema["items"], pointer + "/items")
            )

    def _string(self, schema: Schema, pointer: str) -> Iterator[str]:
        if "minLength" in schema:
            yield f"if len(x) < {int(schema['minLength'])}:"
            yield f"    e.append(((), 'expected at least {schema['minLength']} character(s)'))"
        if "maxLength" in schema:
            yield f"if len(x) > {int(schema['maxLength'])}:"
            yield f"    e.append(((), 'expected at most {schema['maxLength']} character(s)'))"
        if "pattern" in schema:
            regex = self.constant(pointer, "PATTERN", f"re.compile({schema['pattern']!r})")
            yield f"if not {regex}.search(x):"
            message = "does not match the pattern " + repr(schema["pattern"])
            yield f"    e.append(((), {message_literal(message)}))"
        fmt = schema.get("format")
        if self.assert_formats and fmt in FORMATS:
            yield from self.format_lines(fmt)

    def _number(self, schema: Schema) -> Iterator[str]:
        for keyword, operator, words in (
            ("minimum", "<", "at least"),
            ("maximum", ">", "at most"),
            ("exclusiveMinimum", "<=", "more than"),
            ("exclusiveMaximum", ">=", "less than"),
        ):
            if keyword in schema:
                bound = schema[keyword]
                yield f"if x {operator} {bound!r}:"
                yield f"    e.append(((), 'expected a number {words} {bound}, got ' + describe(x)))"

    def _branches(self, schemas: list[Schema], pointer: str, keyword: str) -> tuple[str, str]:
        functions = [
            self._call_target(s, f"{pointer}/{keyword}/{i}") for i, s in enumerate(schemas)
        ]
        labels = [_label(s, i) for i, s in enumerate(schemas)]
        return "(" + "".join(f + ", " for f in functions) + ")", repr(tuple(labels))

    def _any_of(self, schemas: list[Schema], pointer: str) -> Iterator[str]:
        if len(schemas) == 1:
            yield f"e += {self._call_target(schemas[0], pointer + '/anyOf/0')}(x)"
            return
        functions, labels = self._branches(schemas, pointer, "anyOf")
        yield "failures = []"
        yield f"for branch in {functions}:"
        yield "    r = branch(x)"
        yield "    if not r:"
        yield "        break"
        yield "    failures.append(r)"
        yield "else:"
        yield f"    e += closest_branch(failures, {labels})"

    def _one_of(self, schemas: list[Schema], pointer: str, known_type: str | None) -> Iterator[str]:
        discriminator = find_discriminator(self.defs, schemas)
        if discriminator is not None:
            yield from self._dispatch(discriminator, schemas, pointer, known_type == "object")
            return
        functions, labels = self._branches(schemas, pointer, "oneOf")
        yield f"results = [branch(x) for branch in {functions}]"
        yield f"matched = [label for label, r in zip({labels}, results, strict=True) if not r]"
        yield "if not matched:"
        yield f"    e += closest_branch(results, {labels})"
        yield "elif len(matched) > 1:"
        yield (
            "    e.append(((), 'matches more than one of ' + ', '.join(matched)"
            " + '; it must match exactly one'))"
        )

    def _dispatch(
        self, key: str, schemas: list[Schema], pointer: str, is_object: bool
    ) -> Iterator[str]:
        entries, values = [], []
        for schema in schemas:
            target = self.defs[schema["$ref"].removeprefix("#/$defs/")]
            function = self._ref_function(schema["$ref"], pointer)
            for value in discriminator_values(target["properties"][key]) or ():
                entries.append(f"{value!r}: {function}")
                values.append(repr(value))
        table = self.constant(pointer, "BRANCHES", "{" + ", ".join(entries) + "}")
        known = ", ".join(values)
        # A value already known to be an object needs no second type check.
        yield f"d = x.get({key!r})" + ("" if is_object else " if isinstance(x, dict) else None")
        yield f"branch = {table}.get(d) if isinstance(d, str) else None"
        yield "if branch is not None:"
        yield "    e += branch(x)"
        if not is_object:
            yield "elif not isinstance(x, dict):"
            yield "    e.append(((), 'expected an object, got ' + describe(x)))"
        yield f"elif {key!r} not in x:"
        missing = message_literal(f"missing required property {key!r} (one of {known})")
        yield f"    e.append(((), {missing}))"
        yield "else:"
        yield (
            f"    e.append((({key!r},), 'unknown {key} ' + repr(d) + "
            f"{message_literal(f', expected one of {known}')}))"
        )


def _label(schema: Schema, index: int) -> str:
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).removeprefix("#/$defs/")
    return f"alternative {index + 1}"


def _not_message(schema: Schema) -> str:
    if isinstance(schema, dict) and set(schema) - ANNOTATIONS == {"required"}:
        names = [repr(n) for n in schema["required"]]
        if len(names) == 1:
            return f"must not have property {names[0]}"
        return f"must not have properties {', '.join(names[:-1])} and {names[-1]} together"
    return f"must not match {_label(schema, 0)}"


def _refuse_unsupported(schema: dict[str, Any], pointer: str) -> None:
    """A keyword the generator cannot check is an error of the build, never a silent pass."""
    unsupported = sorted(set(schema) - SUPPORTED)
    if unsupported:
        raise CodegenError(
            f"{pointer}: keyword(s) {', '.join(unsupported)} not supported by the validator "
            "generator; teach codegen/_schema_compiler.py the keyword (and list it in "
            "codegen/_schema_keywords.py, SUPPORTED) before using it"
        )


def _type_check(schema: dict[str, Any], pointer: str) -> tuple[list[str], str | None]:
    """The lines checking ``type`` (none without it), and the one type a value then has, if
    a single one is allowed (later checks need no guard of their own for it)."""
    if "type" not in schema:
        return [], None
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    unknown = [t for t in types if t not in TYPE_TESTS]
    if unknown:
        raise CodegenError(f"{pointer}: unknown type(s) {unknown}")
    expected = " or ".join(TYPE_TESTS[t][1] for t in types)
    lines = [
        f"if not {types_test(types, 'x')}:",
        f"    return [((), {('expected ' + expected + ', got ')!r} + describe(x))]",
    ]
    return lines, types[0] if len(types) == 1 else None
