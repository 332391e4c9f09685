"""A spec bump needs no hand edit: in a copy of the repository, a new facet version folder and
``python -m codegen`` are all it takes for the SDK's tests to pass on the new newest version."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

SDK_TESTS = (
    "tests/test_parse_dump.py",
    "tests/test_validate.py",
    "tests/test_validators_differential.py",
    "tests/test_builders.py",
    "tests/cli/test_cli.py",
    "tests/test_doctests.py",
)
"""The SDK's tests (a subset of the suite, to stay near half a minute; every test but those
needing files outside the copy passes there too)."""
COPIED = (
    "codegen",
    "examples",
    "generated",
    "schemas",
    "src",
    "tests",
    "pyproject.toml",
    "README.md",
)
SKIPPED = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache")


def _copy_repository(target: Path) -> Path:
    """The parts of the repository the SDK tests read, with the shared seeds and reference spec
    (next to the repository, when present) linked at the same place relative to the copy."""
    if (ROOT.parent / "shared").is_dir():
        (target.parent / "shared").symlink_to(ROOT.parent / "shared")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=SKIPPED)
        else:
            shutil.copy2(source, target / name)
    return target


def _add_version_with_one_property(repository: Path) -> str:
    """Copy the copy's newest facet folder to the next version, with one more optional property
    (as its newest is read from the folders, calling this again bumps again)."""
    facets = repository / "schemas" / "spec" / "facets"
    newest = max(
        (folder.name for folder in facets.iterdir() if folder.is_dir()),
        key=lambda version: tuple(int(part) for part in version.split("-")),
    )
    major, minor, _ = newest.split("-")
    bumped = f"{major}-{int(minor) + 1}-0"
    shutil.copytree(facets / newest, facets / bumped)
    path = facets / bumped / "BaseSubsetDatasetFacet.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    schema["$id"] = schema["$id"].replace(f"/{newest}/", f"/{bumped}/")
    schema["$defs"]["LocationSubsetCondition"]["properties"]["description"] = {
        "type": "string",
        "description": "Why these locations were read.",
    }
    path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    return bumped


def _run(repository: Path, *command: str) -> subprocess.CompletedProcess[str]:
    # The copy's packages come first, ahead of the editable install of this checkout. Property
    # tests there try fewer examples: what they explore is explored by this run's own tests;
    # the copy's run says that the new version is one they pass on (half of this test's time).
    path = os.pathsep.join(str(repository / folder) for folder in ("src", "generated", "."))
    return subprocess.run(
        [sys.executable, *command],
        cwd=repository,
        env=dict(os.environ, PYTHONPATH=path, HYPOTHESIS_PROFILE="other-python"),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.parametrize("bumps", [1, 2])
def test_new_version_folders_and_codegen_make_the_sdk_tests_pass(
    tmp_path: Path, bumps: int
) -> None:
    """One bump makes the newest version the one the official examples name (1-1-0); two make
    it a version past theirs, which the tests must not take for the one they name."""
    repository = _copy_repository(tmp_path / "repository")
    for _ in range(bumps):
        bumped = _add_version_with_one_property(repository)

    generated = _run(repository, "-m", "codegen")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    module = "v" + bumped.replace("-", "_")
    assert (repository / "generated" / "openlineage_subset_generated" / module).is_dir()

    newest = _run(repository, "-c", "import openlineage_subset as o; print(o.spec().version)")
    assert newest.stdout.strip() == bumped, newest.stdout + newest.stderr
    tests = _run(repository, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SDK_TESTS)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
