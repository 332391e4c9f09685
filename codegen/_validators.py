"""Compile bundled JSON Schema definitions into plain Python validator functions.

Each definition becomes ``_<Name>(x) -> list[Issue]`` and each inline subschema a helper named
after its place in the schema (``_BinarySubsetCondition__operator`` checks
``#/$defs/BinarySubsetCondition/properties/operator``), so that changing one definition changes
only its own functions and constants; an ``Issue`` is ``(path_tuple, message)`` with the path
relative to the value checked, so the happy path allocates almost nothing. The compiled code
accepts exactly what a JSON Schema 2020-12 validator accepts for the keywords below (a property
test checks this against ``jsonschema``); any other keyword stops generation with a message, so
that a spec bump never silently weakens validation.

The strict validators are the lenient ones plus the prose rules: their module imports every
function and constant that is the same in both, and defines only those a rule changes (and the
ones calling them).

A ``oneOf`` whose branches are objects told apart by a required ``const`` property (the subset
conditions' ``type``) compiles to a dictionary dispatch with an error that names the known values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from codegen._errors import CodegenError

Schema = Any

_ANNOTATIONS = frozenset(
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
_SUPPORTED = _ANNOTATIONS | {
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
_TYPE_TESTS = {
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
_FORMATS = ("date-time", "uuid", "uri")


def compile_validators(defs: dict[str, Schema], *, assert_formats: bool, header: str) -> str:
    """Python source of a module with one validator per definition and a ``VALIDATORS`` map."""
    compiler = _Compiler(defs, assert_formats=assert_formats)
    return _module(header, compiler.compile(), {}, "")


def compile_lenient_and_strict(
    lenient: dict[str, Schema],
    strict: dict[str, Schema],
    *,
    lenient_module: str,
    headers: tuple[str, str],
) -> tuple[str, str]:
    """Sources of the lenient module and of the strict one, which imports what the two share.

    A definition (function or constant) is shared when its text is the same in both and so is
    everything it refers to; the strict module imports those from ``lenient_module``.
    """
    lenient_code = _Compiler(lenient, assert_formats=False).compile()
    strict_code = _Compiler(strict, assert_formats=True).compile()
    shared = {name for name, text in strict_code.items() if lenient_code.get(name) == text}
    changed = True
    while changed:
        changed = False
        for name in sorted(shared):
            if not _references(strict_code[name], strict_code) <= shared:
                shared.discard(name)
                changed = True
    own = {name: text for name, text in strict_code.items() if name not in shared}
    return (
        _module(headers[0], lenient_code, {}, ""),
        _module(headers[1], own, strict_code, lenient_module),
    )


_NAME = re.compile(r"\b_\w+")
_SUPPORT_NAMES = ("closest_branch", "describe", "json_equal", "matches_format", "prefixed")


def _references(text: str, known: dict[str, str]) -> set[str]:
    return {name for name in _NAME.findall(text) if name in known}


def _module(
    header: str, own: dict[str, str], everything: dict[str, str], imported_from: str
) -> str:
    """A validator module defining ``own`` and importing from ``imported_from`` what it uses of
    ``everything`` besides (the definitions' ``VALIDATORS`` table names every definition)."""
    names = everything or own
    table = {name: text for name, text in names.items() if text.startswith(_DEFINITION_MARK)}
    functions = [text for text in own.values() if text.startswith(("def ", _DEFINITION_MARK))]
    constants = [text for text in own.values() if not text.startswith(("def ", _DEFINITION_MARK))]
    body = "\n\n".join(functions) + "\n\n" + "".join(constants)
    body += "\nVALIDATORS: dict[str, Callable[[Any], list[Issue]]] = {\n"
    body += "".join(
        f"    {text.split(chr(10))[0].removeprefix(_DEFINITION_MARK)!r}: {name},\n"
        for name, text in table.items()
    )
    body += "}\n"
    uses = set(re.findall(r"\b\w+\b", body))
    imported = sorted(name for name in names if name not in own and name in uses)
    support = ["Issue", *(name for name in _SUPPORT_NAMES if name in uses)]
    lines = [header, "from __future__ import annotations\n\n"]
    if "re" in uses:
        lines.append("import re\n")
    lines += ["from collections.abc import Callable\n", "from typing import Any\n\n"]
    lines.append(f"from openlineage_subset_generated._support import {', '.join(support)}\n")
    if imported:
        lines.append(f"from {imported_from} import {', '.join(imported)}\n")
    lines.append("\n\n")
    return "".join(lines) + _strip_marks(body)


_DEFINITION_MARK = "# definition "
"""First line of a definition's function text, naming the definition for ``VALIDATORS``."""


def _strip_marks(body: str) -> str:
    return "\n".join(line for line in body.split("\n") if not line.startswith(_DEFINITION_MARK))


class _Compiler:
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
            self._function(self.def_functions[name], schema, f"#/$defs/{name}", definition=name)
        return self.code

    # -- functions --------------------------------------------------------------------------------

    def _call_target(self, schema: Schema, pointer: str) -> str:
        """Name of a function validating ``schema``: a definition's own, or a new helper."""
        if isinstance(schema, dict) and set(schema) - _ANNOTATIONS == {"$ref"}:
            return self._ref_function(schema["$ref"], pointer)
        name = _helper_name(pointer)
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

    def _constant(self, pointer: str, kind: str, value: str) -> str:
        """A module constant named after where it is used; equal values share one constant."""
        if value in self.constant_names:
            return self.constant_names[value]
        name = f"{_helper_name(pointer)}_{kind}"
        if name in self.code:
            raise CodegenError(f"{pointer}: constant name {name} is already taken")
        self.constant_names[value] = name
        self.code[name] = f"{name} = {value}\n"
        return name

    def _function(
        self, name: str, schema: Schema, pointer: str, definition: str | None = None
    ) -> None:
        self.code[name] = ""  # reserve the place: helpers follow the function that calls them
        body = _without_empty_accumulator(list(self._body(schema, pointer)))
        lines = [f"def {name}(x: Any) -> list[Issue]:", *("    " + line for line in body)]
        if definition is not None:
            lines.insert(0, _DEFINITION_MARK + definition)
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
        unsupported = sorted(set(schema) - _SUPPORTED)
        if unsupported:
            raise CodegenError(
                f"{pointer}: keyword(s) {', '.join(unsupported)} not supported by the validator "
                "generator; teach codegen/_validators.py the keyword before using it"
            )
        known_type = None
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            unknown = [t for t in types if t not in _TYPE_TESTS]
            if unknown:
                raise CodegenError(f"{pointer}: unknown type(s) {unknown}")
            test = " or ".join(_TYPE_TESTS[t][0].format(x="x") for t in types)
            expected = " or ".join(_TYPE_TESTS[t][1] for t in types)
            yield f"if not {_parenthesized(test)}:"
            yield f"    return [((), {('expected ' + expected + ', got ')!r} + describe(x))]"
            known_type = types[0] if len(types) == 1 else None
        yield "e: list[Issue] = []"
        if "$ref" in schema:
            yield f"e += {self._ref_function(schema['$ref'], pointer)}(x)"
        if "const" in schema:
            yield from self._const(schema["const"])
        if "enum" in schema:
            yield from self._enum(schema["enum"], pointer, known_type)
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
                yield from _nested(_TYPE_TESTS[guard_type][0].format(x="x"), lines)
        for index, part in enumerate(schema.get("allOf", [])):
            yield f"e += {self._call_target(part, f'{pointer}/allOf/{index}')}(x)"
        if "anyOf" in schema:
            yield from self._any_of(schema["anyOf"], pointer)
        if "oneOf" in schema:
            yield from self._one_of(schema["oneOf"], pointer, known_type)
        if "not" in schema:
            target = self._call_target(schema["not"], pointer + "/not")
            yield f"if not {target}(x):"
            yield f"    e.append(((), {_text(_not_message(schema['not']))}))"
        yield "return e"

    # -- keywords ---------------------------------------------------------------------------------

    def _const(self, value: Any) -> Iterator[str]:
        message = f"expected {json.dumps(value)}, got "
        if isinstance(value, str):
            yield f"if x != {value!r}:"
        else:
            yield f"if not json_equal(x, {value!r}):"
        yield f"    e.append(((), {_text(message)} + describe(x)))"

    def _enum(self, values: list[Any], pointer: str, known_type: str | None) -> Iterator[str]:
        if not isinstance(values, list) or not values:
            raise CodegenError(f"{pointer}/enum: must be a non-empty array")
        message = "expected one of " + ", ".join(json.dumps(v) for v in values) + ", got "
        if all(isinstance(v, str) for v in values):
            allowed = self._constant(pointer, "ENUM", f"frozenset({sorted(values)!r})")
            if known_type == "string":
                yield f"if x not in {allowed}:"
            else:
                yield f"if not (isinstance(x, str) and x in {allowed}):"
        else:
            options = self._constant(pointer, "ENUM", repr(tuple(values)))
            yield f"if not any(json_equal(x, option) for option in {options}):"
        yield f"    e.append(((), {_text(message)} + describe(x)))"

    def _object(self, schema: Schema, pointer: str) -> Iterator[str]:
        for name in schema.get("required", []):
            yield f"if {name!r} not in x:"
            yield f"    e.append(((), {('missing required property ' + repr(name))!r}))"
        properties = schema.get("properties", {})
        for name, prop_schema in properties.items():
            yield from _nested(
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
        else:
            check = list(self._check_value("v", "k", extra, pointer + "/additionalProperties"))
        if properties:
            known = self._constant(pointer, "PROPERTIES", f"frozenset({sorted(properties)!r})")
            check = list(_nested(f"k not in {known}", check))
        yield "for k, v in x.items():"
        yield from ("    " + line for line in check)

    def _check_value(self, value: str, key: str, schema: Schema, pointer: str) -> Iterator[str]:
        """Lines that check ``value`` (stored under ``key``) and add its issues under that key."""
        simple_type = _simple_type(schema, ignored=self._ignored())
        if simple_type is not None:
            test, expected = _TYPE_TESTS[simple_type]
            yield f"if not {_parenthesized(test.format(x=value))}:"
            yield (
                f"    e.append((({key},), {('expected ' + expected + ', got ')!r}"
                f" + describe({value})))"
            )
            return
        yield f"if r := {self._call_target(schema, pointer)}({value}):"
        yield f"    e += prefixed({key}, r)"

    def _ignored(self) -> frozenset[str]:
        """Keywords that check nothing here: annotations, and ``format`` unless asserted."""
        return _ANNOTATIONS if self.assert_formats else _ANNOTATIONS | {"format"}

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
            regex = self._constant(pointer, "PATTERN", f"re.compile({schema['pattern']!r})")
            yield f"if not {regex}.search(x):"
            message = "does not match the pattern " + repr(schema["pattern"])
            yield f"    e.append(((), {_text(message)}))"
        fmt = schema.get("format")
        if self.assert_formats and fmt in _FORMATS:
            yield f"if not matches_format({fmt!r}, x):"
            yield f"    e.append(((), {('expected a ' + fmt + ' string, got ')!r} + describe(x)))"

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
        discriminator = self._discriminator(schemas)
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

    def _discriminator(self, schemas: list[Schema]) -> str | None:
        """A property every branch requires with a distinct string ``const``, if there is one."""
        targets = []
        for schema in schemas:
            if not (isinstance(schema, dict) and set(schema) - _ANNOTATIONS == {"$ref"}):
                return None
            target = self.defs.get(schema["$ref"].removeprefix("#/$defs/"))
            if not isinstance(target, dict) or target.get("type") != "object":
                return None
            targets.append(target)
        candidates = None
        for target in targets:
            consts = {
                name
                for name, prop in target.get("properties", {}).items()
                if isinstance(prop, dict)
                and isinstance(prop.get("const"), str)
                and name in target.get("required", [])
            }
            candidates = consts if candidates is None else candidates & consts
        for name in sorted(candidates or ()):
            values = [t["properties"][name]["const"] for t in targets]
            if len(set(values)) == len(values):
                return str(name)
        return None

    def _dispatch(
        self, key: str, schemas: list[Schema], pointer: str, is_object: bool
    ) -> Iterator[str]:
        entries = []
        for schema in schemas:
            target_name = schema["$ref"].removeprefix("#/$defs/")
            const = self.defs[target_name]["properties"][key]["const"]
            entries.append(f"{const!r}: {self._ref_function(schema['$ref'], pointer)}")
        table = self._constant(pointer, "BRANCHES", "{" + ", ".join(entries) + "}")
        known = ", ".join(
            repr(self.defs[s["$ref"].removeprefix("#/$defs/")]["properties"][key]["const"])
            for s in schemas
        )
        # A value already known to be an object needs no second type check.
        yield f"d = x.get({key!r})" + ("" if is_object else " if isinstance(x, dict) else None")
        yield f"branch = {table}.get(d) if isinstance(d, str) else None"
        yield "if branch is not None:"
        yield "    e += branch(x)"
        if not is_object:
            yield "elif not isinstance(x, dict):"
            yield "    e.append(((), 'expected an object, got ' + describe(x)))"
        yield f"elif {key!r} not in x:"
        yield f"    e.append(((), {_text(f'missing required property {key!r} (one of {known})')}))"
        yield "else:"
        yield (
            f"    e.append((({key!r},), 'unknown {key} ' + repr(d) + "
            f"{_text(f', expected one of {known}')}))"
        )


def _without_empty_accumulator(body: list[str]) -> list[str]:
    """``body`` returning ``[]`` or its one call's issues directly when it collects nothing else."""
    start = "e: list[Issue] = []"
    if body[-2:] == [start, "return e"]:
        return [*body[:-2], "return []"]
    if len(body) >= 3 and body[-3] == start and body[-1] == "return e":
        call = body[-2].removeprefix("e += ")
        if call != body[-2] and re.fullmatch(r"_\w+\(x\)", call):
            return [*body[:-3], f"return {call}"]
    return body


def _helper_name(pointer: str) -> str:
    """Python name of the function checking ``pointer`` (``#/$defs/A/properties/b/items`` ->
    ``_A__b__items``): the definition, then each step below it, ``properties`` left out."""
    steps = pointer.removeprefix("#/$defs/").split("/")
    parts = [steps[0]]
    index = 1
    while index < len(steps):
        step = steps[index]
        if step in ("properties", "allOf", "anyOf", "oneOf") and index + 1 < len(steps):
            following = steps[index + 1]
            parts.append(following if step == "properties" else step + following)
            index += 2
        else:
            parts.append(step)
            index += 1
    return "_" + "__".join(re.sub(r"\W", "_", part) for part in parts)


def _text(message: str, width: int = 60) -> str:
    """A string literal of ``message``, as parts of at most ``width`` characters when longer
    (adjacent literals, which ruff then lays out one per line within the line length)."""
    if len(message) <= width:
        return repr(message)
    parts, current = [], ""
    for word in re.split(r"(?<= )", message):
        if current and len(current) + len(word) > width:
            parts.append(current)
            current = ""
        current += word
    parts.append(current)
    return "(" + " ".join(repr(part) for part in parts) + ")"


def _parenthesized(test: str) -> str:
    return f"({test})" if " or " in test and not test.startswith("(") else test


def _nested(condition: str, lines: list[str]) -> Iterator[str]:
    """``lines`` run when ``condition`` holds; a lone ``if`` in ``lines`` joins the condition."""
    if not lines:
        return
    rest = lines[1:]
    single_if = (
        lines[0].startswith("if ")
        and lines[0].endswith(":")
        and all(line.startswith("    ") for line in rest)
    )
    if single_if:
        inner = lines[0][3:-1]
        if " or " in inner or ":=" in inner:
            inner = f"({inner})"
        yield f"if {condition} and {inner}:"
        yield from rest
        return
    yield f"if {condition}:"
    yield from ("    " + line for line in lines)


def _simple_type(schema: Schema, *, ignored: frozenset[str]) -> str | None:
    """The type of a schema that checks nothing but a single type, else None."""
    if isinstance(schema, dict) and set(schema) - ignored == {"type"}:
        kind = schema["type"]
        if isinstance(kind, str) and kind in _TYPE_TESTS:
            return kind
    return None


def _label(schema: Schema, index: int) -> str:
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).removeprefix("#/$defs/")
    return f"alternative {index + 1}"


def _not_message(schema: Schema) -> str:
    if isinstance(schema, dict) and set(schema) - _ANNOTATIONS == {"required"}:
        names = [repr(n) for n in schema["required"]]
        if len(names) == 1:
            return f"must not have property {names[0]}"
        return f"must not have properties {', '.join(names[:-1])} and {names[-1]} together"
    return f"must not match {_label(schema, 0)}"
