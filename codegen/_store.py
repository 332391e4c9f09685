"""Load the JSON Schemas under ``schemas/`` and find the subset facet versions among them.

Every schema lives at the path its ``$id`` names below ``https://openlineage.io/``, so a remote
``$ref`` resolves to a local file without any network access.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen._errors import CodegenError

SPEC_HOST = "https://openlineage.io/"
FACET_FILE = "BaseSubsetDatasetFacet.json"
_FACET_ID = re.compile(
    r"^https://openlineage\.io/spec/facets/(?P<version>\d+-\d+-\d+)/" + re.escape(FACET_FILE) + "$"
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
            expected = self.root / uri.removeprefix(SPEC_HOST)
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
        if uri != SPEC_HOST + relative:
            raise CodegenError(
                f"{path}: its $id is {uri!r} but its path says {SPEC_HOST + relative!r}; "
                "move the file so that its path below schemas/ mirrors its $id"
            )
        documents[uri] = SchemaDocument(uri=uri, path=path, content=content)
    return SchemaStore(root=root, documents=documents)
