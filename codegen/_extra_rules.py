"""Compile only what the strict schema adds to the lenient one: its prose rules.

The strict validators are the lenient ones plus the prose rules (documented allowed values,
formats): the strict check of a definition returns the lenient check's issues followed by those
of ``_<location>_extra``, which checks only the rules the strict schema adds. That way a strict
check costs one extra walk over the parts with a rule below them, and the strict module imports,
rather than repeats, every check a rule does not touch.

The sum is exact only where the schema alone picks what the rules apply to. A ``oneOf`` takes
its branch by the schema alone and adds the extra rules of that branch, so strict mode never
accepts what the schema rejects; a definition with an ``anyOf`` (of several branches) over extra
rules is compiled whole instead (``find_extra_rules`` says why, for the strict module's
docstring), and a ``not`` over extra rules is refused with a ``CodegenError`` (under a ``not``, a
rule would make strict mode accept what the schema rejects).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from codegen._errors import CodegenError
from codegen._python_source import (
    helper_name,
    nested,
    returning_directly,
    without_empty_accumulator,
)
from codegen._schema_compiler import SchemaCompiler
from codegen._schema_keywords import (
    ANNOTATIONS,
    FORMATS,
    TYPE_TESTS,
    Schema,
    declared_type,
    discriminator_values,
    find_discriminator,
    type_test,
)
from codegen._validator_module import LENIENT_ALIAS

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


def find_extra_rules(compiler: SchemaCompiler, lenient: dict[str, Schema]) -> ExtraRules:
    """The extra-rule functions of ``compiler``'s (strict) definitions over ``lenient``.

    Which definitions have an extra rule below them, and which must stay whole, depends on the
    definitions they refer to, recursion included: both grow from none until nothing changes.
    """
    extra: set[str] = set()
    whole: dict[str, str] = {}
    while True:
        rules = ExtraRules(compiler, lenient, extra, whole)
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


class ExtraRules:
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
        compiler: SchemaCompiler,
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
        name = helper_name(pointer) + "_extra"
        if name in self.code or name in self.compiler.code:
            raise CodegenError(f"{pointer}: helper name {name} is already taken")
        self.code[name] = ""  # reserve the place: helpers follow the function that calls them
        lines = list(self._lines(pointer, lenient, strict))
        if not lines:
            del self.code[name]
            return None
        guard = type_test(strict, "x")
        body = [] if guard is None else [f"if not {guard}:", "    return []"]
        body += returning_directly(
            without_empty_accumulator(["e: list[Issue] = []", *lines, "return e"])
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
        if isinstance(strict, dict) and set(strict) - ANNOTATIONS == {"$ref"}:
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
        name = f"{helper_name(pointer)}_{kind}"
        if name in self.code or name in self.compiler.code:
            raise CodegenError(f"{pointer}: constant name {name} is already taken")
        self.constant_names[value] = name
        self.code[name] = f"{name} = {value}\n"
        return name

    def _lines(self, pointer: str, lenient: Schema, strict: Schema) -> Iterator[str]:
        _check_same(pointer, lenient, strict)
        if not isinstance(strict, dict):
            return
        known_type = declared_type(strict)
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
                yield from nested(TYPE_TESTS[guard_type][0].format(x="x"), lines)
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
                "codegen/_extra_rules.py (ExtraRules) to decide it by the schema alone"
            )

    # -- keywords ---------------------------------------------------------------------------------

    def _added(
        self, pointer: str, lenient: Schema, strict: Schema, x: str, at: str
    ) -> Iterator[str]:
        if "const" in strict and "const" not in lenient:
            yield from self.compiler.const_lines(strict["const"], x, at)
        if "enum" in strict and "enum" not in lenient:
            known_type = declared_type(strict)
            yield from self.compiler.enum_lines(strict["enum"], pointer, known_type, x, at)

    def _string(self, strict: Schema, x: str, at: str) -> Iterator[str]:
        if strict.get("format") in FORMATS:
            yield from self.compiler.format_lines(strict["format"], x, at)

    def _object(self, pointer: str, lenient: Schema, strict: Schema) -> Iterator[str]:
        properties = strict.get("properties", {})
        for name, prop_schema in properties.items():
            yield from nested(
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
            known = self.compiler.constant(
                pointer, "PROPERTIES", f"frozenset({sorted(properties)!r})"
            )
            check = list(nested(f"k not in {known}", check))
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
            if declared_type(strict) == "string":
                lines += string
            else:
                lines += nested(TYPE_TESTS["string"][0].format(x=x), string)
            guard = type_test(strict, x)
            return lines if guard is None else list(nested(guard, lines))
        target = self._target(pointer, lenient, strict)
        if target is None:
            return []
        return [f"if r := {target}({x}):", f"    e += prefixed({key}, r)"]

    def _part(self, pointer: str, lenient: Schema, strict: Schema) -> Iterator[str]:
        """The checks of a part of ``allOf``: a call for a definition, else inline (under the
        part's type), which saves a call per part on every value checked."""
        if isinstance(strict, dict) and set(strict) - ANNOTATIONS == {"$ref"}:
            target = self._target(pointer, lenient, strict)
            if target is not None:
                yield f"e += {target}(x)"
            return
        lines = list(self._lines(pointer, lenient, strict))
        guard = type_test(strict, "x")
        yield from lines if guard is None else nested(guard, lines)

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
        key = find_discriminator(self.lenient, lenient["oneOf"])
        if key is None:
            yield from self._selected(pointer, lenient, strict)
            return
        entries = []
        for branch in strict["oneOf"]:
            target = self._ref(branch["$ref"])
            if target is not None:
                definition = self.lenient[branch["$ref"].removeprefix("#/$defs/")]
                for value in discriminator_values(definition["properties"][key]) or ():
                    entries.append(f"{value!r}: {target}")
        if not entries:
            return
        table = self._constant(pointer, "EXTRA_BRANCHES", "{" + ", ".join(entries) + "}")
        is_object = declared_type(strict) == "object"
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
            if isinstance(branch, dict) and set(branch) - ANNOTATIONS == {"$ref"}:
                check = self.compiler.def_functions[branch["$ref"].removeprefix("#/$defs/")]
            else:
                check = helper_name(at)
            pairs.append(f"({LENIENT_ALIAS}.{check}, {target})")
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
    for keyword in (set(strict) | set(lenient)) - ANNOTATIONS - {"format"}:
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
