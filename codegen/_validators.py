"""Compile bundled JSON Schema definitions into modules of plain Python validator functions.

Each definition becomes ``_<Name>(x) -> list[Issue]`` and each inline subschema a helper named
after its place in the schema (``_BinarySubsetCondition__operator`` checks
``#/$defs/BinarySubsetCondition/properties/operator``), so that changing one definition changes
only its own functions and constants; an ``Issue`` is ``(path_tuple, message)`` with the path
relative to the value checked, so the happy path allocates almost nothing. The strict module is
built on the lenient one: a strict check is the lenient check plus the checks of the rules the
strict schema adds, and whatever is the same in both is imported rather than repeated.

This module holds the two entry points and decides what the strict module imports; the work is
done by the modules beside it, each of which says why it is apart:

- ``_schema_keywords``: the supported keywords, the test of each type, the asserted formats;
- ``_schema_compiler``: a schema as written, keyword by keyword (``SchemaCompiler``);
- ``_extra_rules``: only what the strict schema adds to the lenient one (``ExtraRules``);
- ``_python_source``: helper names after schema locations, and the layout of lines;
- ``_validator_module``: a generated module's docstring, imports and ``VALIDATORS`` table.
"""

from __future__ import annotations

import re

from codegen._extra_rules import find_extra_rules
from codegen._schema_compiler import SchemaCompiler
from codegen._schema_keywords import Schema
from codegen._validator_module import LENIENT_ALIAS, LENIENT_DOC, render_module, strict_doc


def compile_validators(defs: dict[str, Schema], *, assert_formats: bool, header: str) -> str:
    """Python source of a module with one validator per definition and a ``VALIDATORS`` map."""
    compiler = SchemaCompiler(defs, assert_formats=assert_formats)
    return render_module(header, compiler.compile(), compiler.def_functions)


def compile_lenient_and_strict(
    lenient: dict[str, Schema],
    strict: dict[str, Schema],
    *,
    lenient_module: str,
    header: str,
) -> tuple[str, str]:
    """Sources of the lenient module and of the strict one, which builds on ``lenient_module``.

    The strict check of a definition is the lenient one followed by the checks of its extra rules
    (see ``codegen._extra_rules``); without an extra rule below it, it is the lenient one,
    imported. A definition with an ``anyOf`` over extra rules stays whole: the strict schema
    compiled as it is (a ``not`` over extra rules is refused). A function or constant is
    imported, too, when its text is the same in both modules and so is everything it refers to.
    """
    lenient_code = SchemaCompiler(lenient, assert_formats=False).compile()
    compiler = SchemaCompiler(strict, assert_formats=True)
    strict_code = compiler.compile()
    rules = find_extra_rules(compiler, lenient)
    definitions = {function: name for name, function in compiler.def_functions.items()}
    code: dict[str, str] = {}
    for name, text in strict_code.items():
        definition = definitions.get(name)
        walker = rules.walkers.get(definition) if definition is not None else None
        code[name] = text
        if walker is not None:
            code[name] = (
                f"def {name}(x: Any) -> list[Issue]:\n"
                f"    return {LENIENT_ALIAS}.{name}(x) + {walker}(x)\n"
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
        render_module(header + LENIENT_DOC, lenient_code, compiler.def_functions),
        render_module(
            header
            + strict_doc(
                {n: rules.whole[n] for n in compiler.defs if n in rules.whole},
                selects=rules.selects,
            ),
            {name: text for name, text in code.items() if name in own},
            compiler.def_functions,
            shared=sorted(imported),
            imported_from=lenient_module,
            module_import=(
                f"from {package} import {module} as {LENIENT_ALIAS}\n" if rules.walkers else ""
            ),
        ),
    )


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


def _references(text: str, known: dict[str, str]) -> set[str]:
    return {name for name in _NAME.findall(text) if name in known}
