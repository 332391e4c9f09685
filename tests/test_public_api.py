"""The type check of the public API (tests/typing/public_api.py) names every exported name.

mypy checks that file in ``nox -s typecheck``; this test keeps it complete: a name added to a
public face without a type check of its own fails here.

A face's ``__all__`` has two parts: ``__all__ = [...]``, the user API, then
``__all__ += [...]``, the names internal to the package (what its other rooms use, not
promised to users; docs/architecture.md, "Faces"). Only the first part is the public API.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

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


def package_internal(module: str) -> set[str]:
    """The names a face adds to ``__all__`` with ``__all__ += [...]``: internal to the package."""
    init = importlib.import_module(module).__file__
    assert init is not None
    found: set[str] = set()
    for node in ast.parse(Path(init).read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "__all__"
            and isinstance(node.value, ast.List)
        ):
            found |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    return found


def public_names(module: str) -> set[str]:
    """A face's user API: its ``__all__`` without the package-internal part."""
    return set(importlib.import_module(module).__all__) - package_internal(module)


@pytest.mark.parametrize("module", PUBLIC)
def test_every_exported_name_has_a_type_check(module: str) -> None:
    exported = public_names(module)
    missing = sorted(exported - _names_used())
    assert not missing, f"{module} exports names tests/typing/public_api.py never uses: {missing}"


def test_negative_cases_are_there() -> None:
    """Calls that must not type-check: mypy's warn_unused_ignores keeps each one honest."""
    text = TYPE_CHECKS.read_text(encoding="utf-8")
    assert text.count("# type: ignore[") >= 10


@pytest.mark.parametrize("module", PUBLIC)
def test_the_type_check_names_no_package_internal_name_as_public(module: str) -> None:
    """tests/typing/public_api.py checks the user API: an internal name there would promise it."""
    tree = ast.parse(TYPE_CHECKS.read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == module
        for alias in node.names
    }
    internal = sorted(imported & package_internal(module))
    assert not internal, f"public_api.py imports package-internal names of {module}: {internal}"
