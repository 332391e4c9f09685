"""What tests share: repository paths, the spec URLs of the newest version, example loaders.

Tests name no spec version: the URLs come from the newest generated one, so that a spec bump (a
new folder under schemas/ and ``python -m codegen``) needs no test edit. Fixtures and hypothesis
profiles are in ``conftest.py``; helpers are imported from here.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import settings

from openlineage_subset import spec, spec_versions

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_SPEC = Path(os.environ.get("OL_SUBSET_REFERENCE_SPEC", ROOT.parent / "shared" / "spec"))
FACET_URL = spec().facet_schema_url
INPUT_URL = spec().facet_def_url("InputSubsetInputDatasetFacet")
OUTPUT_URL = spec().facet_def_url("OutputSubsetOutputDatasetFacet")
CORE_URL = spec().event_url()
PRODUCER = "https://github.com/openlineage-subset/openlineage-subset/tree/0.1.0/tests"


def unknown_version() -> str:
    """A facet version newer than every generated one (``1-0-0`` -> ``1-1-0``)."""
    major, minor, _ = spec_versions()[-1].split("-")
    return f"{major}-{int(minor) + 1}-0"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def docs_examples() -> dict[str, Any]:
    """The four examples of the public facet documentation, transcribed in tests/data."""
    folder = ROOT / "tests" / "data" / "docs_examples"
    return {path.name: load_json(path) for path in sorted(folder.glob("*.json"))}


TYPE_LISTS = [
    *itertools.permutations(["integer", "number", "string", "null", "boolean"], 2),
    *itertools.permutations(["null", "number", "boolean"]),
    *itertools.permutations(["integer", "string", "array"]),
    ("object", "integer", "null"),
]
"""Type lists in every order: the tests of ``integer`` and ``number`` are themselves in
parentheses, which once made ``["integer", "string"]`` compile to ``not (A) or B``."""


def examples(times: int) -> int:
    """``times`` the examples of the loaded hypothesis profile (150 by default, 2,000 under
    HYPOTHESIS_PROFILE=thorough, 25 on nox's other Pythons): for a property whose telling cases
    are rare among its inputs, more examples that still scale with the profile."""
    return times * settings().max_examples


def run_codegen(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m codegen ARGS`` in the repository, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def sqlite_steps(connection: Any, call: Any) -> tuple[int, Any]:
    """The steps of SQLite's virtual machine ``call()`` takes on ``connection`` (a
    ``sqlite3.Connection``): what its statements read, whatever the machine's speed; and
    what it returned."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    connection.set_progress_handler(count, 1)
    try:
        answer = call()
    finally:
        connection.set_progress_handler(None, 1)
    return steps, answer
