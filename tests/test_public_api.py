"""The type check of the public API (tests/typing/public_api.py) names every exported name.

mypy checks that file in ``nox -s typecheck``; this test keeps it complete: a name added to a
public face without a type check of its own fails here.
"""

from __future__ import annotations

import ast
import importlib

import pytest

from tests.helpers import ROOT

TYPE_CHECKS = ROOT / "tests" / "typing" / "public_api.py"
PUBLIC = (
    "openlineage_subset",
    "openlineage_subset.spark",
    "openlineage_subset.lineage",
    "openlineage_subset.report",
)


def _names_used() -> set[str]:
    tree = ast.parse(TYPE_CHECKS.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.rpartition(".")[2])
    return found


@pytest.mark.parametrize("module", PUBLIC)
def test_every_exported_name_has_a_type_check(module: str) -> None:
    exported = set(importlib.import_module(module).__all__)
    missing = sorted(exported - _names_used())
    assert not missing, f"{module} exports names tests/typing/public_api.py never uses: {missing}"


def test_negative_cases_are_there() -> None:
    """Calls that must not type-check: mypy's warn_unused_ignores keeps each one honest."""
    text = TYPE_CHECKS.read_text(encoding="utf-8")
    assert text.count("# type: ignore[") >= 10
