"""The schema files shipped with the package, and ``jsonschema`` validators built from them.

The generated validators are what :func:`~openlineage_subset.validate` uses; these are the
reference implementation, for cross-checks and for tools that want a ``jsonschema`` validator.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
import referencing
from referencing.jsonschema import DRAFT202012

from openlineage_subset._versions import spec


def _walk(folder: Any) -> list[Any]:
    """JSON files below a package resource folder (an importlib Traversable)."""
    found = []
    for entry in folder.iterdir():
        if entry.is_dir():
            found.extend(_walk(entry))
        elif entry.name.endswith(".json"):
            found.append(entry)
    return found


@cache
def schema_documents() -> dict[str, Any]:
    """Every shipped schema by its ``$id`` (the facet schemas and the OpenLineage core).

    >>> "https://openlineage.io/spec/2-0-2/OpenLineage.json" in schema_documents()
    True
    """
    documents = {}
    for entry in _walk(files("openlineage_subset_generated") / "schemas"):
        content = json.loads(entry.read_text(encoding="utf-8"))
        documents[content["$id"]] = content
    return documents


def schema_registry() -> referencing.Registry[Any]:
    """A ``referencing.Registry`` of the shipped schemas: ``$ref``s resolve without network."""
    return referencing.Registry().with_resources(
        (uri, DRAFT202012.create_resource(content)) for uri, content in schema_documents().items()
    )


def reference_validator(
    definition: str | None = None, version: str | None = None
) -> jsonschema.Draft202012Validator:
    """A prebuilt ``jsonschema`` validator for the facet schema of ``version`` (newest by default).

    With ``definition`` it validates that ``$defs`` entry (``"InputSubsetInputDatasetFacet"``);
    with ``definition="OpenLineage"`` the core event schema the facet schema references.

    >>> validator = reference_validator("LocationSubsetCondition")
    >>> validator.is_valid({"type": "location", "locations": ["s3://bucket/a"]})
    True
    """
    chosen = spec(version)
    if definition is None:
        target = chosen.facet_schema_url
    elif definition == "OpenLineage":
        target = str(chosen.module.CORE_SCHEMA_URL)
    else:
        target = chosen.facet_def_url(definition)
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": target}
    return jsonschema.Draft202012Validator(schema, registry=schema_registry())
