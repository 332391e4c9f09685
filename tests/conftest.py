"""Shared fixtures (the reference spec copy) and hypothesis profiles; helpers are in helpers.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import REFERENCE_SPEC, load_json

settings.register_profile(
    "default", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# `nox -s sdk` on the other Pythons: the same properties, fewer examples (`tests` runs the rest).
settings.register_profile(
    "other-python", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


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
