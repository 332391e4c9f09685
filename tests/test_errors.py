"""One root for the package's own exceptions (and one for its warnings), as httpx has one.

Every exception class the package defines derives from ``OpenLineageSubsetError`` (keeping its
older base, ``ValueError``, ``TypeError``, ``OSError``...); every warning class from
``OpenLineageSubsetWarning``. The walk imports every module under ``src/`` and reads the
classes each defines, so a new exception class without the root fails here. Exempt: classes
whose name starts with an underscore, control flow inside one module that never leaves it
(``_Stopped``, ``_Unsure``, ``_HeadRefused``).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import openlineage_subset
from openlineage_subset import (
    OpenLineageSubsetError,
    OpenLineageSubsetWarning,
    SubsetDocumentError,
    UnknownSpecVersionWarning,
)

OPTIONAL = ("starlette", "uvicorn", "pyspark", "py4j")
"""The extras' packages: a module needing one is skipped where it is not installed."""


def _modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(openlineage_subset.__path__, "openlineage_subset.")
        if info.name != "openlineage_subset.__main__"
    )


def _defined_here(name: str) -> list[type[BaseException]]:
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        if error.name and error.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {error.name}")
        raise
    return [
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == name and issubclass(cls, BaseException)
    ]


@pytest.mark.parametrize("name", _modules())
def test_every_exception_class_derives_from_the_root(name: str) -> None:
    wrong = []
    for cls in _defined_here(name):
        if cls.__name__.startswith("_"):
            continue
        root = OpenLineageSubsetWarning if issubclass(cls, Warning) else OpenLineageSubsetError
        if not issubclass(cls, root):
            wrong.append(f"{cls.__name__} (not a {root.__name__})")
    assert not wrong, f"{name} defines exceptions outside the package's root: {wrong}"


def test_the_walk_finds_the_package_exceptions() -> None:
    """The walk can fail: it sees the classes the package is known to define."""
    found = {
        cls.__name__
        for name in ("openlineage_subset._issues", "openlineage_subset._versions")
        for cls in _defined_here(name)
    }
    assert {"SubsetDocumentError", "UnknownSpecVersionWarning"} <= found


def test_the_older_bases_are_kept() -> None:
    """A caller catching ``ValueError`` (or ``UserWarning``) still catches what it did."""
    with pytest.raises(ValueError, match="unusable") as caught:
        raise SubsetDocumentError("unusable", [])
    assert isinstance(caught.value, OpenLineageSubsetError)
    assert issubclass(UnknownSpecVersionWarning, UserWarning)
    assert not issubclass(OpenLineageSubsetError, ValueError)
