"""Which generated spec version serves a document: by its ``_schemaURL``, else the newest."""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from dataclasses import dataclass
from functools import cache
from types import ModuleType

import openlineage_subset_generated as _generated

from openlineage_subset._errors import OpenLineageSubsetWarning

FACET_FILE = "BaseSubsetDatasetFacet.json"
INPUT_FACET_DEF = "InputSubsetInputDatasetFacet"
OUTPUT_FACET_DEF = "OutputSubsetOutputDatasetFacet"
_FACET_VERSION = re.compile(r"/spec/facets/(\d+-\d+-\d+)/" + re.escape(FACET_FILE))
_CORE_VERSION = re.compile(r"/spec/(\d+-\d+-\d+)/OpenLineage\.json")


class UnknownSpecVersionWarning(OpenLineageSubsetWarning):
    """A document names a spec version this installation has no model for; the newest is used."""


@dataclass(frozen=True)
class SpecVersion:
    """One generated version of the subset facet schema, with the core schema it references.

    >>> spec("1-0-0").models.LocationSubsetCondition(locations=["s3://bucket/a"]).type
    'location'
    """

    version: str
    module: ModuleType

    @property
    def models(self) -> ModuleType:
        """The generated dataclasses."""
        models: ModuleType = self.module.models
        return models

    @property
    def validators(self) -> ModuleType:
        """Validators of the schema as written."""
        validators: ModuleType = self.module.validators
        return validators

    @property
    def strict_validators(self) -> ModuleType:
        """Validators that also enforce the schema's prose rules."""
        strict: ModuleType = self.module.strict_validators
        return strict

    @property
    def facet_schema_url(self) -> str:
        """``https://openlineage.io/spec/facets/<version>/BaseSubsetDatasetFacet.json``."""
        return str(self.module.FACET_SCHEMA_URL)

    @property
    def core_version(self) -> str:
        """The OpenLineage core version the facet schema references (``2-0-2``)."""
        return str(self.module.CORE_VERSION)

    @property
    def facet_defs(self) -> tuple[str, ...]:
        """Names of the ``$defs`` of the facet schema."""
        return tuple(self.module.FACET_DEFS)

    def facet_def_url(self, name: str) -> str:
        """The ``_schemaURL`` of a facet definition of this version."""
        return f"{self.facet_schema_url}#/$defs/{name}"

    def event_url(self, name: str = "RunEvent") -> str:
        """The ``schemaURL`` of an event of the core version this version references.

        >>> spec("1-0-0").event_url()
        'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent'
        """
        return f"{self.module.CORE_SCHEMA_URL}#/$defs/{name}"


def spec_versions() -> tuple[str, ...]:
    """Every spec version with generated models, oldest first.

    >>> spec_versions()[0]
    '1-0-0'
    """
    return tuple(_generated.SPEC_VERSIONS)


@cache
def spec(version: str | None = None) -> SpecVersion:
    """The generated spec ``version`` (``"1-0-0"``), or the newest when ``version`` is None.

    >>> spec().version == spec_versions()[-1]
    True
    """
    if version is None:
        version = _generated.LATEST_SPEC_VERSION
    if version not in _generated.MODULES:
        raise ValueError(
            f"unknown spec version {version!r}; this installation has {', '.join(spec_versions())}"
        )
    return SpecVersion(version, importlib.import_module(_generated.MODULES[version]))


def facet_version_in(schema_url: object) -> str | None:
    """The facet schema version a ``_schemaURL`` names (``1-0-0``), or None if it names none."""
    if not isinstance(schema_url, str):
        return None
    match = _FACET_VERSION.search(schema_url)
    return match.group(1) if match else None


def spec_for_facet(schema_url: object) -> SpecVersion:
    """The version that serves a facet with this ``_schemaURL``.

    An unknown or missing version falls back to the newest, with an
    :class:`UnknownSpecVersionWarning` (a missing ``_schemaURL`` is reported by validation).
    """
    version = facet_version_in(schema_url)
    if version is None or version in _generated.MODULES:
        return spec(version)
    latest = spec()
    _warn(
        f"_schemaURL {schema_url!r} names version {version} of {FACET_FILE}, which this "
        f"installation does not have; using the newest, {latest.version}"
    )
    return latest


def spec_for_event(schema_url: object) -> SpecVersion:
    """The version whose core model serves an event with this ``schemaURL``.

    The newest facet version built on the event's core version; the newest overall (with an
    :class:`UnknownSpecVersionWarning`) when no facet version is built on it.
    """
    match = _CORE_VERSION.search(schema_url) if isinstance(schema_url, str) else None
    if match is None:
        return spec()
    for version in reversed(spec_versions()):
        if spec(version).core_version == match.group(1):
            return spec(version)
    latest = spec()
    _warn(
        f"event schemaURL {schema_url!r} names OpenLineage {match.group(1)}; this installation "
        f"validates events against OpenLineage {latest.core_version}"
    )
    return latest


def _warn(message: str) -> None:
    """Warn with the caller's line: the first frame outside this package."""
    frame = sys._getframe(1)
    level = 2  # stacklevel 2 is the frame that called _warn
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        "openlineage_subset"
    ):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, UnknownSpecVersionWarning, stacklevel=level)
