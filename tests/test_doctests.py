"""The examples in the docstrings of the public package run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import openlineage_subset

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(openlineage_subset.__path__, "openlineage_subset.")
    if not name.endswith("__main__")
)


@pytest.mark.parametrize("name", ["openlineage_subset", *MODULES])
def test_docstring_examples(name: str) -> None:
    if name.startswith("openlineage_subset.service") and not all(
        importlib.util.find_spec(extra) for extra in ("starlette", "uvicorn")
    ):
        pytest.skip("the serve extra is not installed: pip install 'openlineage-subset[serve]'")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
