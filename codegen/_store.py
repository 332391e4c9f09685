"""Load the JSON Schemas under ``schemas/`` and find the facets among them.

Every schema lives at the path its ``$id`` names, so a remote ``$ref`` resolves to a local file
without any network access: OpenLineage's own schemas below ``https://openlineage.io/``, this
project's custom facets (``schemas/custom/``) below the raw URL of ``schemas/`` in this
repository, which is where they are served from.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen._errors import CodegenError

SPEC_HOST = "https://openlineage.io/"
CUSTOM_FOLDER = "custom/"
CUSTOM_HOST = (
    "https://raw.githubusercontent.com/openlineage-subset/openlineage-subset/main/schemas/"
)
"""Where ``schemas/`` of this repository is served from: the base of a custom schema's ``$id``."""
FACET_FILE = "BaseSubsetDatasetFacet.json"
_FACET_ID = re.compile(
    r"^https://openlineage\.io/spec/facets/(?P<version>\d+-\d+-\d+)/" + re.escape(FACET_FILE) + "$"
)
_CUSTOM_FACET_ID = re.compile(
    "^"
    + re.escape(CUSTOM_HOST + CUSTOM_FOLDER)
    + r"facets/(?P<version>\d+-\d+-\d+)/(?P<name>[A-Za-z][A-Za-z0-9]*)\.json$"
)


@dataclass(frozen=True)
class SchemaDocument:
    """One schema file: its ``$id``, where it lives, and its parsed content."""

    uri: str
    path: Path
    content: dict[str, Any]


@dataclass(frozen=True)
class SchemaStore:
    """All schemas below a ``schemas/`` folder, by ``$id``."""

    root: Path
    documents: dict[str, SchemaDocument]

    def get(self, uri: str, *, referenced_from: str) -> SchemaDocument:
        try:
            return self.documents[uri]
        except KeyError:
            expected = self.root / relative_path(uri)
            raise CodegenError(
                f"{referenced_from} references {uri}, which is not in {self.root}: "
                f"add it as {expected}"
            ) from None

    def facet_versions(self) -> dict[str, SchemaDocument]:
        """The subset facet schemas by version, oldest first (``{"1-0-0": doc}``)."""
        found = {}
        for uri, document in self.documents.items():
            match = _FACET_ID.match(uri)
            if match:
                found[match["version"]] = document
        return dict(sorted(found.items(), key=lambda item: version_key(item[0])))

    def custom_facets(self) -> list[CustomFacet]:
        """This project's custom facet schemas (``schemas/custom/facets/<version>/<Name>.json``),
        by name, then oldest version first."""
        found = []
        for uri, document in self.documents.items():
            match = _CUSTOM_FACET_ID.match(uri)
            if match:
                found.append(CustomFacet(match["name"], match["version"], document))
        return sorted(found, key=lambda facet: (facet.name, version_key(facet.version)))


@dataclass(frozen=True)
class CustomFacet:
    """One version of a custom facet schema: ``PartitionMappingOutputDatasetFacet`` 1-0-0."""

    name: str
    version: str
    document: SchemaDocument


def expected_id(relative: str) -> str:
    """The ``$id`` of the schema at ``relative`` below ``schemas/``: its URL on openlineage.io
    (``spec/2-0-2/OpenLineage.json``: ``https://openlineage.io/spec/2-0-2/OpenLineage.json``),
    or, below ``custom/``, its URL in this repository (``CUSTOM_HOST`` + ``custom/...``)."""
    if relative.startswith(CUSTOM_FOLDER):
        return CUSTOM_HOST + relative
    return SPEC_HOST + relative


def relative_path(uri: str) -> str:
    """Where below ``schemas/`` the schema of ``uri`` belongs (the inverse of ``expected_id``)."""
    if is_custom(uri):
        return uri.removeprefix(CUSTOM_HOST)
    return uri.removeprefix(SPEC_HOST)


def is_custom(uri: str) -> bool:
    """Whether the schema of ``uri`` is one of this project's own (below ``schemas/custom/``)."""
    return uri.startswith(CUSTOM_HOST + CUSTOM_FOLDER)


def version_key(version: str) -> tuple[int, ...]:
    """Sort key for ``1-10-0`` style versions (numeric, so 1-10-0 comes after 1-9-0)."""
    return tuple(int(part) for part in version.split("-"))


def load_store(root: Path) -> SchemaStore:
    """Read every ``*.json`` below ``root``; fail on a file whose path does not mirror its $id."""
    if not root.is_dir():
        raise CodegenError(f"schema folder {root} does not exist")
    documents: dict[str, SchemaDocument] = {}
    for path in sorted(root.rglob("*.json")):
        relative = path.relative_to(root).as_posix()
        try:
            content = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise CodegenError(f"{path}: not valid JSON: {error}") from None
        if not isinstance(content, dict) or not isinstance(content.get("$id"), str):
            raise CodegenError(f"{path}: a schema must be a JSON object with a string '$id'")
        uri = content["$id"]
        expected = expected_id(relative)
        if uri != expected:
            where = (
                f"files below schemas/{CUSTOM_FOLDER} are served from {CUSTOM_HOST}"
                if relative.startswith(CUSTOM_FOLDER)
                else f"files outside schemas/{CUSTOM_FOLDER} mirror {SPEC_HOST}"
            )
            raise CodegenError(
                f"{path}: its $id is {uri!r} but its path says {expected!r} ({where}); "
                "move the file so that its path below schemas/ mirrors its $id"
            )
        documents[uri] = SchemaDocument(uri=uri, path=path, content=content)
    return SchemaStore(root=root, documents=documents)
