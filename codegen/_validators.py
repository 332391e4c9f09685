"""Compile bundled JSON Schema definitions into plain Python validator functions.

Each definition becomes ``_<Name>(x) -> list[Issue]`` and each inline subschema a helper named
after its place in the schema (``_BinarySubsetCondition__operator`` checks
``#/$defs/BinarySubsetCondition/properties/operator``), so that changing one definition changes
only its own functions and constants; an ``Issue`` is ``(path_tuple, message)`` with the path
relative to the value checked, so the happy path allocates almost nothing. The compiled code
accepts exactly what a JSON Schema 2020-12 validator accepts for the keywords below (a property
test checks this against ``jsonschema``); any other keyword stops generation with a message, so
that a spec bump never silently weakens validation.

The strict validators are the lenient ones plus the prose rules: the strict check of a definition
returns the lenient check's issues followed by those of ``_<location>_extra``, which checks only
the rules the strict schema adds (``_ExtraRules``); a definition with no such rule below it is
the lenient check itself, imported. A ``oneOf`` takes its branch by the schema alone and adds the
extra rules of that branch, so strict mode never accepts what the schema rejects. A definition
with an ``anyOf`` (of several branches) over extra rules is compiled whole, and the module
docstring says why; a ``not`` over extra rules is refused with a ``CodegenError`` (under a
``not``, a rule would make strict mode accept what the schema rejects).

A ``oneOf`` whose branches are objects told apart by a required ``const`` property (the subset
conditions' ``type``) compiles to a dictionary dispatch with an error that names the known values.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator, Sequence
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
    return _module(header, compiler.compile(), compiler.def_functions)


def compile_lenient_and_strict(
    lenient: dict[str, Schema],
    strict: dict[str, Schema],
    *,
    lenient_module: str,
    header: str,
) -> tuple[str, str]:
    """Sources of the lenient module and of the strict one, which builds on ``lenient_module``.

    The strict check of a definition is the lenient one followed by the checks of its extra rules
    (see ``_ExtraRules``); without an extra rule below it, it is the lenient one, imported. A
    definition with an ``anyOf`` over extra rules stays whole: the strict schema compiled as it
    is (a ``not`` over extra rules is refused). A function or constant is imported, too, when its
    text is the same in both modules and so is everything it refers to.
    """
    lenient_code = _Compiler(lenient, assert_formats=False).compile()
    compiler = _Compiler(strict, assert_formats=True)
    strict_code = compiler.compile()
    rules = _extra_rules(compiler, lenient)
    definitions = {function: name for name, function in compiler.def_functions.items()}
    code: dict[str, str] = {}
    for name, text in strict_code.items():
        definition = definitions.get(name)
        walker = rules.walkers.get(definition) if definition is not None else None
        code[name] = text
        if walker is not None:
            code[name] = (
                f"def {name}(x: Any) -> list[Issue]:\n"
                f"    return {_LENIENT}.{name}(x) + {walker}(x)\n"
            )
        if definition is not None:
            code.update(rules.functions_of(definition))
    code.update(rules.constants())
    imported = _shared(
        code,
        lenient_code,
        {f for f, n in definitions.items() if n not in rules.whole and n not in rules.walkers},
        set(definitions),
    )
    own: dict[str, str] = {}
    pending = [name for name in definitions if name not in imported]
    while pending:
        name = pending.pop()
        if name not in own:
            own[name] = code[name]
            pending += [n for n in _references(code[name], code) if n not in imported]
    package, _, module = lenient_module.rpartition(".")
    return (
        _module(header + _LENIENT_DOC, lenient_code, compiler.def_functions),
        _module(
            header
            + _strict_doc(
                {n: rules.whole[n] for n in compiler.defs if n in rules.whole},
                selects=rules.selects,
            ),
            {name: text for name, text in code.items() if name in own},
            compiler.def_functions,
            shared=sorted(imported),
            imported_from=lenient_module,
            module_import=(
                f"from {package} import {module} as {_LENIENT}\n" if rules.walkers else ""
            ),
        ),
    )


_LENIENT_DOC = '"""Validators: the schema as written."""\n\n'


_LENIENT = "lenient"
"""The name the strict module imports the lenient one as."""


def _strict_doc(whole: dict[str, str], *, selects: bool) -> str:
    """The strict module's docstring: how it is built, and why each whole definition is."""
    paragraphs = [
        "Strict validators: the schema plus its prose rules (documented allowed values, formats).",
        "The strict check of a definition is its lenient one, from ``validators``, followed by "
        "``_<location>_extra``: the checks of the extra rules alone, which go down only where an "
        "extra rule lies below. A definition with no extra rule below it is its lenient check, "
        "imported.",
    ]
    if selects:
        paragraphs.append(
            "A ``oneOf`` takes its branch by the schema alone, and adds the extra rules of that "
            "branch only when the value matches exactly one (``selected_extra``): were the rules "
            "to choose too, a value matching two branches under the schema, an issue, could match "
            "one under the rules, and strict mode would accept what the schema rejects."
        )
    if whole:
        paragraphs.append(
            "Defined whole, the schema with the rules compiled in, since lenient issues plus extra "
            "ones would differ from its strict issues:"
        )
    else:
        paragraphs.append(
            "Nothing here is compiled whole: every strict check returns exactly the issues of its "
            "lenient check, then those of the extra rules."
        )
    items = [
        textwrap.fill(f"- ``{name}``: {reason}.", width=96, subsequent_indent="  ")
        for name, reason in whole.items()
    ]
    text = "\n\n".join([*(textwrap.fill(p, width=96) for p in paragraphs), "\n".join(items)])
    return '"""' + text.rstrip() + '\n"""\n\n'


def _shared(
    code: dict[str, str], lenient_code: dict[str, str], pinned: set[str], checks: set[str]
) -> set[str]:
    """Names the strict module imports: ``pinned`` (the checks of definitions with no extra rule),
    and, besides the other ``checks``, functions and constants whose text is the lenient one and
    that refer only to shared names."""
    shared = pinned | {
        name for name, text in code.items() if lenient_code.get(name) == text and name not in checks
    }
    changed = True
    while changed:
        changed = False
        for name in sorted(shared - pinned):
            if not _references(code[name], code) <= shared:
                shared.discard(name)
                changed = True
    return shared


_NAME = re.compile(r"(?<![.\w])_\w+")
"""A name a function or constant refers to; not one read from a module (``lenient._A``)."""
_SUPPORT_NAMES = (
    "closest_branch",
    "describe",
    "json_equal",
    "matches_format",
    "prefixed",
    "selected_extra",
)


def _references(text: str, known: dict[str, str]) -> set[str]:
    return {name for name in _NAME.findall(text) if name in known}


def _module(
    header: str,
    own: dict[str, str],
    table: dict[str, str],
    *,
    shared: Sequence[str] = (),
    imported_from: str = "",
    module_import: str = "",
) -> str:
    """A validator module defining ``own``, importing from ``imported_from`` what it uses of
    ``shared``, with ``VALIDATORS`` naming the function of each definition in ``table``."""
    functions = [text for text in own.values() if text.startswith("def ")]
    constants = [text for text in own.values() if not text.startswith("def ")]
    body = "\n\n".join(functions) + "\n\n" + "".join(constants)
    body += "\nVALIDATORS: dict[str, Callable[[Any], list[Issue]]] = {\n"
    body += "".join(f"    {definition!r}: {name},\n" for definition, name in table.items())
    body += "}\n"
    uses = set(re.findall(r"\b\w+\b", body))
    imported = [name for name in shared if name not in own and name in uses]
    support = ["Issue", *(name for name in _SUPPORT_NAMES if name in uses)]
    lines = [header, "from __future__ import annotations\n\n"]
    if "re" in uses:
        lines.append("import re\n")
    lines += ["from collections.abc import Callable\n", "from typing import Any\n\n"]
    lines.append(f"from openlineage_subset_generated._support import {', '.join(support)}\n")
    lines.append(module_import)
    if imported:
        lines.append(f"from {imported_from} import {', '.join(imported)}\n")
    lines.append("\n\n")
    return "".join(lines) + body


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
            self._function(self.def_functions[name], schema, f"#/$defs/{name}")
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

    def _function(self, name: str, schema: Schema, pointer: str) -> None:
        self.code[name] = ""  # reserve the place: helpers follow the function that calls them
        body = _without_empty_accumulator(list(self._body(schema, pointer)))
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
            expected = " or ".join(_TYPE_TESTS[t][1] for t in types)
            yield f"if not {_types_test(types, 'x')}:"
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

    # The keyword checks below read the value as ``x`` and report at ``()``, or, inlined in the
    # check of a containing object or array, read ``x['a']`` and report at ``('a',)``.

    def _const(self, value: Any, x: str = "x", at: str = "()") -> Iterator[str]:
        message = f"expected {json.dumps(value)}, got "
        if isinstance(value, str):
            yield f"if {x} != {value!r}:"
        else:
            yield f"if not json_equal({x}, {value!r}):"
        yield f"    e.append(({at}, {_text(message)} + describe({x})))"

    def _enum(
        self, values: list[Any], pointer: str, known_type: str | None, x: str = "x", at: str = "()"
    ) -> Iterator[str]:
        if not isinstance(values, list) or not values:
            raise CodegenError(f"{pointer}/enum: must be a non-empty array")
        message = "expected one of " + ", ".join(json.dumps(v) for v in values) + ", got "
        if all(isinstance(v, str) for v in values):
            allowed = self._constant(pointer, "ENUM", f"frozenset({sorted(values)!r})")
            if known_type == "string":
                yield f"if {x} not in {allowed}:"
            else:
                yield f"if not (isinstance({x}, str) and {x} in {allowed}):"
        else:
            options = self._constant(pointer, "ENUM", repr(tuple(values)))
            yield f"if not any(json_equal({x}, option) for option in {options}):"
        yield f"    e.append(({at}, {_text(message)} + describe({x})))"

    def _format(self, fmt: str, x: str = "x", at: str = "()") -> Iterator[str]:
        """The check of an asserted ``format`` on a value known to be a string."""
        yield f"if not matches_format({fmt!r}, {x}):"
        yield f"    e.append(({at}, {('expected a ' + fmt + ' string, got ')!r} + describe({x})))"

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
            yield from self._format(fmt)

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
        discriminator = _discriminator(self.defs, schemas)
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


def _discriminator(defs: dict[str, Schema], schemas: list[Schema]) -> str | None:
    """A property every branch requires with a distinct string ``const``, if there is one."""
    targets = []
    for schema in schemas:
        if not (isinstance(schema, dict) and set(schema) - _ANNOTATIONS == {"$ref"}):
            return None
        target = defs.get(schema["$ref"].removeprefix("#/$defs/"))
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


_SUBSCHEMA_KEYWORDS = (
    "properties",
    "additionalProperties",
    "items",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
)
_ADDED_KEYWORDS = ("const", "enum")
"""Keywords the strict schema may add to a lenient one (``format`` is asserted in strict only)."""


class _Whole(Exception):
    """A definition whose strict issues are not its lenient ones plus some; says why."""


def _extra_rules(compiler: _Compiler, lenient: dict[str, Schema]) -> _ExtraRules:
    """The extra-rule functions of ``compiler``'s (strict) definitions over ``lenient``.

    Which definitions have an extra rule below them, and which must stay whole, depends on the
    definitions they refer to, recursion included: both grow from none until nothing changes.
    """
    extra: set[str] = set()
    whole: dict[str, str] = {}
    while True:
        rules = _ExtraRules(compiler, lenient, extra, whole)
        found, stays_whole = set(), {}
        for name in compiler.defs:
            if name in whole:
                continue
            try:
                if rules.definition(name) is not None:
                    found.add(name)
            except _Whole as reason:
                stays_whole[name] = str(reason)
        # A round that made a definition whole may have called its extra function elsewhere.
        if not stays_whole and found | set(whole) == extra:
            rules.resolve_forwards()
            return rules
        whole.update(stays_whole)
        extra = found | set(whole)


class _ExtraRules:
    """Functions ``_<location>_extra`` that check only what the strict schema adds to the lenient
    one, for definitions whose strict check is then ``lenient check + extra function``.

    An extra function walks a value like the strict check does but reports only the extra rules:
    where the value has the wrong type it reports nothing (the lenient check does), and it goes
    down only into the parts with an extra rule below them. That sum is exact for ``allOf``, a
    one-branch ``anyOf`` and a ``oneOf``, whose branch the schema alone selects (by the lenient
    schema's ``const`` where it has one, else by the lenient branch checks); any other ``anyOf``
    or a ``not`` over extra rules raises ``_Whole``.
    """

    def __init__(
        self,
        compiler: _Compiler,
        lenient: dict[str, Schema],
        extra: set[str],
        whole: dict[str, str],
    ) -> None:
        self.compiler = compiler
        self.lenient = lenient
        self.extra = extra
        self.whole = whole
        self.code: dict[str, str] = {}
        self.owner: dict[str, str] = {}
        """The definition each function was made for (it comes after that definition's check)."""
        self.walkers: dict[str, str] = {}
        """The extra function of each definition that has one."""
        self.guards: dict[str, str | None] = {}
        self.forwards: dict[str, str] = {}
        """Functions that only call another one (after their type guard, if any)."""
        self.constant_names: dict[str, str] = {}
        self.definition_name = ""
        self.selects = False
        """Whether a ``oneOf`` adds the extra rules of the branch the schema selects."""

    def definition(self, name: str) -> str | None:
        """The extra function of definition ``name``, or None when no extra rule lies below it."""
        self.definition_name = name
        walker = self._function(f"#/$defs/{name}", self.lenient[name], self.compiler.defs[name])
        if walker is not None:
            self.walkers[name] = walker
        return walker

    def functions_of(self, definition: str) -> dict[str, str]:
        return {
            name: text
            for name, text in self.code.items()
            if self.owner.get(name) == definition and text.startswith("def ")
        }

    def constants(self) -> dict[str, str]:
        return {name: text for name, text in self.code.items() if not text.startswith("def ")}

    def resolve_forwards(self) -> None:
        """Call the target of a function that only forwards to another instead of it (a facet
        whose extra rules are all those of ``BaseFacet`` uses ``_BaseFacet_extra``)."""
        replaced = {}
        for name in self.forwards:
            target, seen = name, set()
            while target in self.forwards and target not in seen:
                seen.add(target)
                guard = self.guards[target]
                if guard is not None and self.guards[self.forwards[target]] != guard:
                    break
                target = self.forwards[target]
            if target != name:
                replaced[name] = target
        if not replaced:
            return
        names = re.compile(r"\b(" + "|".join(map(re.escape, replaced)) + r")\b")
        self.code = {
            name: names.sub(lambda match: replaced[match[0]], text)
            for name, text in self.code.items()
            if name not in replaced
        }
        self.walkers = {
            definition: replaced.get(walker, walker) for definition, walker in self.walkers.items()
        }

    # -- functions --------------------------------------------------------------------------------

    def _function(self, pointer: str, lenient: Schema, strict: Schema) -> str | None:
        name = _helper_name(pointer) + "_extra"
        if name in self.code or name in self.compiler.code:
            raise CodegenError(f"{pointer}: helper name {name} is already taken")
        self.code[name] = ""  # reserve the place: helpers follow the function that calls them
        lines = list(self._lines(pointer, lenient, strict))
        if not lines:
            del self.code[name]
            return None
        guard = _type_test(strict, "x")
        body = [] if guard is None else [f"if not {guard}:", "    return []"]
        body += _returning_directly(
            _without_empty_accumulator(["e: list[Issue] = []", *lines, "return e"])
        )
        call = re.fullmatch(r"return (_\w+)\(x\)", body[-1])
        if call and len(body) == (1 if guard is None else 3):
            self.forwards[name] = call[1]
        self.guards[name] = guard
        self.owner[name] = self.definition_name
        lines = [f"def {name}(x: Any) -> list[Issue]:", *("    " + line for line in body)]
        self.code[name] = "\n".join(lines) + "\n"
        return name

    def _target(self, pointer: str, lenient: Schema, strict: Schema) -> str | None:
        if isinstance(strict, dict) and set(strict) - _ANNOTATIONS == {"$ref"}:
            _check_same(pointer, lenient, strict)
            return self._ref(strict["$ref"])
        return self._function(pointer, lenient, strict)

    def _ref(self, ref: str) -> str | None:
        name = ref.removeprefix("#/$defs/")
        if name in self.whole:
            raise _Whole(f"it refers to ``{name}``, which is whole")
        return self.compiler.def_functions[name] + "_extra" if name in self.extra else None

    def _constant(self, pointer: str, kind: str, value: str) -> str:
        if value in self.constant_names:
            return self.constant_names[value]
        name = f"{_helper_name(pointer)}_{kind}"
        if name in self.code or name in self.compiler.code:
            raise CodegenError(f"{pointer}: constant name {name} is already taken")
        self.constant_names[value] = name
        self.code[name] = f"{name} = {value}\n"
        return name

    def _lines(self, pointer: str, lenient: Schema, strict: Schema) -> Iterator[str]:
        _check_same(pointer, lenient, strict)
        if not isinstance(strict, dict):
            return
        known_type = _known_type(strict)
        if "$ref" in strict:
            target = self._ref(strict["$ref"])
            if target is not None:
                yield f"e += {target}(x)"
        yield from self._added(pointer, lenient, strict, "x", "()")
        for guard_type, lines in (
            ("object", list(self._object(pointer, lenient, strict))),
            ("array", list(self._array(pointer, lenient, strict))),
            ("string", list(self._string(strict, "x", "()"))),
        ):
            if known_type == guard_type:
                yield from lines
            else:
                yield from _nested(_TYPE_TESTS[guard_type][0].format(x="x"), lines)
        for index, part in enumerate(strict.get("allOf", [])):
            yield from self._part(f"{pointer}/allOf/{index}", lenient["allOf"][index], part)
        yield from self._alternatives(pointer, lenient, strict)
        if "not" in strict and self._target(pointer + "/not", lenient["not"], strict["not"]):
            # Negated, a rule would make strict mode accept what the schema rejects: a value the
            # schema's "not" refuses passes once the rule fails it. No schema has one yet; a
            # spec that brings one needs a decision on what the rule means there.
            raise CodegenError(
                f"{pointer}/not negates prose rules (documented values or formats): strict mode "
                "would accept values the schema rejects. Strict validators for a rule under a "
                "'not' are not supported; move the rule out of the 'not' or extend "
                "codegen/_validators.py (_ExtraRules) to decide it by the schema alone"
            )

    # -- keywords ---------------------------------------------------------------------------------

    def _added(
        self, pointer: str, lenient: Schema, strict: Schema, x: str, at: str
    ) -> Iterator[str]:
        if "const" in strict and "const" not in lenient:
            yield from self.compiler._const(strict["const"], x, at)
        if "enum" in strict and "enum" not in lenient:
            known_type = _known_type(strict)
            yield from self.compiler._enum(strict["enum"], pointer, known_type, x, at)

    def _string(self, strict: Schema, x: str, at: str) -> Iterator[str]:
        if strict.get("format") in _FORMATS:
            yield from self.compiler._format(strict["format"], x, at)

    def _object(self, pointer: str, lenient: Schema, strict: Schema) -> Iterator[str]:
        properties = strict.get("properties", {})
        for name, prop_schema in properties.items():
            yield from _nested(
                f"{name!r} in x",
                self._value(
                    f"x[{name!r}]",
                    repr(name),
                    f"{pointer}/properties/{name}",
                    lenient["properties"][name],
                    prop_schema,
                ),
            )
        extra = strict.get("additionalProperties", True)
        if not isinstance(extra, dict) or extra == {}:
            return
        check = self._value(
            "v", "k", pointer + "/additionalProperties", lenient["additionalProperties"], extra
        )
        if check and properties:
            known = self.compiler._constant(
                pointer, "PROPERTIES", f"frozenset({sorted(properties)!r})"
            )
            check = list(_nested(f"k not in {known}", check))
        if check:
            yield "for k, v in x.items():"
            yield from ("    " + line for line in check)

    def _array(self, pointer: str, lenient: Schema, strict: Schema) -> Iterator[str]:
        items = strict.get("items", True)
        if not isinstance(items, dict) or items == {}:
            return
        check = self._value("item", "i", pointer + "/items", lenient["items"], items)
        if check:
            yield "for i, item in enumerate(x):"
            yield from ("    " + line for line in check)

    def _value(self, x: str, key: str, pointer: str, lenient: Schema, strict: Schema) -> list[str]:
        """Lines that check the extra rules of ``x`` (stored under ``key``) and add its issues
        under that key: inline for rules on the value itself, else a call."""
        if isinstance(strict, dict) and not set(strict) & {"$ref", *_SUBSCHEMA_KEYWORDS}:
            _check_same(pointer, lenient, strict)
            at = f"({key},)"
            lines = list(self._added(pointer, lenient, strict, x, at))
            string = list(self._string(strict, x, at))
            if _known_type(strict) == "string":
                lines += string
            else:
                lines += _nested(_TYPE_TESTS["string"][0].format(x=x), string)
            guard = _type_test(strict, x)
            return lines if guard is None else list(_nested(guard, lines))
        target = self._target(pointer, lenient, strict)
        if target is None:
            return []
        return [f"if r := {target}({x}):", f"    e += prefixed({key}, r)"]

    def _part(self, pointer: str, lenient: Schema, strict: Schema) -> Iterator[str]:
        """The checks of a part of ``allOf``: a call for a definition, else inline (under the
        part's type), which saves a call per part on every value checked."""
        if isinstance(strict, dict) and set(strict) - _ANNOTATIONS == {"$ref"}:
            target = self._target(pointer, lenient, strict)
            if target is not None:
                yield f"e += {target}(x)"
            return
        lines = list(self._lines(pointer, lenient, strict))
        guard = _type_test(strict, "x")
        yield from lines if guard is None else _nested(guard, lines)

    def _alternatives(self, pointer: str, lenient: Schema, strict: Schema) -> Iterator[str]:
        if len(strict.get("anyOf", [])) == 1:
            target = self._target(pointer + "/anyOf/0", lenient["anyOf"][0], strict["anyOf"][0])
            if target is not None:
                yield f"e += {target}(x)"
        elif "anyOf" in strict and self._any_extra(pointer, "anyOf", lenient, strict):
            raise _Whole(
                f"its ``anyOf`` ({pointer}/anyOf) has branches with extra rules, which can change "
                "the branch its issues come from"
            )
        if "oneOf" not in strict:
            return
        # The lenient schema's discriminator: a const only the rules add must not pick the branch.
        key = _discriminator(self.lenient, lenient["oneOf"])
        if key is None:
            yield from self._selected(pointer, lenient, strict)
            return
        entries = []
        for branch in strict["oneOf"]:
            target = self._ref(branch["$ref"])
            if target is not None:
                definition = self.lenient[branch["$ref"].removeprefix("#/$defs/")]
                entries.append(f"{definition['properties'][key]['const']!r}: {target}")
        if not entries:
            return
        table = self._constant(pointer, "EXTRA_BRANCHES", "{" + ", ".join(entries) + "}")
        is_object = _known_type(strict) == "object"
        yield f"d = x.get({key!r})" + ("" if is_object else " if isinstance(x, dict) else None")
        yield f"branch = {table}.get(d) if isinstance(d, str) else None"
        yield "if branch is not None:"
        yield "    e += branch(x)"

    def _selected(self, pointer: str, lenient: Schema, strict: Schema) -> Iterator[str]:
        """The extra rules of the branch of a ``oneOf`` without a discriminator that the schema
        alone selects, found by the lenient checks of its branches."""
        pairs, any_extra = [], False
        for index, branch in enumerate(strict["oneOf"]):
            at = f"{pointer}/oneOf/{index}"
            target = self._target(at, lenient["oneOf"][index], branch)
            any_extra = any_extra or target is not None
            if isinstance(branch, dict) and set(branch) - _ANNOTATIONS == {"$ref"}:
                check = self.compiler.def_functions[branch["$ref"].removeprefix("#/$defs/")]
            else:
                check = _helper_name(at)
            pairs.append(f"({_LENIENT}.{check}, {target})")
        if not any_extra:
            return
        self.selects = True
        table = self._constant(pointer, "EXTRA_ONE_OF", "(" + ", ".join(pairs) + ",)")
        yield f"e += selected_extra(x, {table})"

    def _any_extra(self, pointer: str, keyword: str, lenient: Schema, strict: Schema) -> bool:
        return any(
            self._target(f"{pointer}/{keyword}/{index}", lenient[keyword][index], branch)
            is not None
            for index, branch in enumerate(strict[keyword])
        )


def _check_same(pointer: str, lenient: Schema, strict: Schema) -> None:
    """Raise ``_Whole`` where ``strict`` differs from ``lenient`` other than by added keywords."""
    if not isinstance(strict, dict) or not isinstance(lenient, dict):
        if strict != lenient:
            raise _Whole(f"the strict schema changes {pointer}")
        return
    for keyword in (set(strict) | set(lenient)) - _ANNOTATIONS - {"format"}:
        if keyword in _ADDED_KEYWORDS and keyword not in lenient:
            continue
        mine, theirs = strict.get(keyword), lenient.get(keyword)
        if keyword in _SUBSCHEMA_KEYWORDS:
            # Only the shape here: the subschemas are compared where they are checked.
            mine, theirs = _shape(keyword, mine), _shape(keyword, theirs)
        if mine != theirs:
            raise _Whole(f"the strict schema changes ``{keyword}`` at {pointer}")


def _shape(keyword: str, subschemas: Any) -> Any:
    """The names of ``properties``, the length of a list of subschemas, else whether there is
    a subschema."""
    if keyword == "properties" and isinstance(subschemas, dict):
        return sorted(subschemas)
    return len(subschemas) if isinstance(subschemas, list) else subschemas is not None


def _known_type(schema: Schema) -> str | None:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list) and len(kind) == 1:
        kind = kind[0]
    return kind if isinstance(kind, str) else None


def _type_test(schema: Schema, x: str) -> str | None:
    """The test of ``schema``'s ``type`` on ``x``, if it has one."""
    if not isinstance(schema, dict) or "type" not in schema:
        return None
    return _types_test(schema["type"] if isinstance(schema["type"], list) else [schema["type"]], x)


def _types_test(types: list[str], x: str) -> str:
    """The test that ``x`` has one of ``types``, one operand for ``not`` and ``and``: several
    are grouped always, since a leading parenthesis (``integer`` and ``number`` have one) does
    not mean the whole test is in it."""
    tests = [_TYPE_TESTS[t][0].format(x=x) for t in types]
    return tests[0] if len(tests) == 1 else "(" + " or ".join(tests) + ")"


def _without_empty_accumulator(body: list[str]) -> list[str]:
    """``body`` returning ``[]`` or its one call's issues directly when it collects nothing else."""
    start = "e: list[Issue] = []"
    if body[-2:] == [start, "return e"]:
        return [*body[:-2], "return []"]
    if len(body) >= 3 and body[-3] == start and body[-1] == "return e":
        call = body[-2].removeprefix("e += ")
        if call != body[-2] and re.fullmatch(r"\w+\(x(, _\w+)?\)", call):
            return [*body[:-3], f"return {call}"]
    return body


def _returning_directly(body: list[str]) -> list[str]:
    """``body`` returning its one collected issue or call result directly, when it collects in
    one place only, under one ``if``: an extra-rule check most often finds nothing, and then
    allocates nothing."""
    start = "e: list[Issue] = []"
    if start not in body or body[-1] != "return e":
        return body
    index = body.index(start)
    middle = body[index + 1 : -1]
    if (
        len(middle) < 2
        or not middle[-2].startswith("if ")
        or any("e +=" in line or "e.append(" in line for line in middle[:-1])
    ):
        return body
    collect = middle[-1]
    if collect.startswith("    e += "):
        returned = collect.removeprefix("    e += ")
    elif collect.startswith("    e.append(") and collect.endswith(")"):
        returned = "[" + collect.removeprefix("    e.append(")[:-1] + "]"
    else:
        return body
    return [*body[:index], *middle[:-1], "    return " + returned, "return []"]


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
