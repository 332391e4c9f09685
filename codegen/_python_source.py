"""The shape of the Python source the validator compilers emit, apart from what it checks.

Naming a helper after the schema location it checks (``helper_name``) keeps one schema change to
one local diff of the generated module; the rest lays lines out (nesting under a condition,
message literals that ruff can wrap) and shortens a function's body when it collects nothing or
one thing only, since the happy path of a check should allocate nothing. Kept out of the
compilers, so that each reads as what it checks, and a generated function has the same shape
whether it checks the schema or only the extra rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator


def helper_name(pointer: str) -> str:
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


def message_literal(message: str, width: int = 60) -> str:
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


def nested(condition: str, lines: list[str]) -> Iterator[str]:
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


def without_empty_accumulator(body: list[str]) -> list[str]:
    """``body`` returning ``[]`` or its one call's issues directly when it collects nothing else."""
    start = "e: list[Issue] = []"
    if body[-2:] == [start, "return e"]:
        return [*body[:-2], "return []"]
    if len(body) >= 3 and body[-3] == start and body[-1] == "return e":
        call = body[-2].removeprefix("e += ")
        if call != body[-2] and re.fullmatch(r"\w+\(x(, _\w+)?\)", call):
            return [*body[:-3], f"return {call}"]
    return body


def returning_directly(body: list[str]) -> list[str]:
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
