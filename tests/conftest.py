"""Shared fixtures: repository paths, the reference spec copy, hypothesis profiles."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from openlineage_subset import spec, spec_versions

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_SPEC = Path(os.environ.get("OL_SUBSET_REFERENCE_SPEC", ROOT.parent / "shared" / "spec"))
# Tests name no spec version: the URLs come from the newest generated one, so that a spec bump
# (a new folder under schemas/ and `python -m codegen`) needs no test edit.
FACET_URL = spec().facet_schema_url
INPUT_URL = spec().facet_def_url("InputSubsetInputDatasetFacet")
OUTPUT_URL = spec().facet_def_url("OutputSubsetOutputDatasetFacet")
CORE_URL = spec().module.CORE_SCHEMA_URL + "#/$defs/RunEvent"
PRODUCER = "https://github.com/openlineage-subset/openlineage-subset/tree/0.1.0/tests"

settings.register_profile(
    "default", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def unknown_version() -> str:
    """A facet version newer than every generated one (``1-0-0`` -> ``1-1-0``)."""
    major, minor, _ = spec_versions()[-1].split("-")
    return f"{major}-{int(minor) + 1}-0"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def reference_spec() -> Path:
    """The reference copy of the official schemas and examples (skips when it is absent)."""
    if not (REFERENCE_SPEC / "facets" / "1-0-0" / "BaseSubsetDatasetFacet.json").is_file():
        pytest.skip(
            f"reference spec not found at {REFERENCE_SPEC}; set OL_SUBSET_REFERENCE_SPEC to the "
            "folder holding facets/, 2-0-2/ and tests/"
        )
    return REFERENCE_SPEC


@pytest.fixture(scope="session")
def official_examples(reference_spec: Path) -> dict[str, Any]:
    """The official BaseSubsetDatasetFacet examples of the reference copy, by file name."""
    folder = reference_spec / "tests" / "BaseSubsetDatasetFacet"
    return {path.name: load_json(path) for path in sorted(folder.glob("*.json"))}


def docs_examples() -> dict[str, Any]:
    """The four examples of the public facet documentation, transcribed in tests/data."""
    folder = ROOT / "tests" / "data" / "docs_examples"
    return {path.name: load_json(path) for path in sorted(folder.glob("*.json"))}
