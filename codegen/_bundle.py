"""Bundle one facet schema version with the core schema it references into a single ``$defs`` map.

The bundle is what both generators read: every ``$ref`` becomes ``#/$defs/<Name>``, the roots of
the documents become named definitions, and inline object schemas below ``properties``/``items``
are hoisted to named definitions so that every generated class has a schema URL of its own.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

from codegen._errors import CodegenError
from codegen._store import SchemaDocument, SchemaStore

Schema = dict[str, Any]

_SPECIAL_CASES = Path(__file__).with_name("special_cases.json")
_ANNOTATION_ONLY_ROOT_KEYS = {"$schema", "$id", "$defs", "title", "description", "$comment"}
_ALLOWED_VALUES = re.compile(r"^\s*Allowed values:\s*(?P<rest>.+)$", re.DOTALL)


def special_cases() -> dict[str, Any]:
    """The generator's small table of names the schemas cannot express (see the JSON file)."""
    loaded: dict[str, Any] = json.loads(_SPECIAL_CASES.read_text(encoding="utf-8"))
    return loaded


@dataclass
class Bundle:
    """One facet version plus everything it references, as named definitions."""

    version: str
    facet: SchemaDocument
    documents: list[SchemaDocument]
    defs: dict[str, Schema] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    """Absolute schema URL (document ``$id`` + JSON pointer) of each definition."""
    roots: dict[str, str] = field(default_factory=dict)
    """Definition name of each document root, by document ``$id``."""

    @property
    def core(self) -> SchemaDocument:
        """The core OpenLineage document the facet schema references."""
        others = [doc for doc in self.documents if doc.uri != self.facet.uri]
        if len(others) != 1:
            raise CodegenError(
                f"{self.facet.path}: expected exactly one referenced core schema, found "
                f"{[doc.uri for doc in others]}"
            )
        return others[0]

    def defs_of(self, document: SchemaDocument) -> list[str]:
        """Names of the definitions that came from ``document`` (its ``$defs`` and its root)."""
        return [name for name, url in self.origins.items() if urldefrag(url)[0] == document.uri]


def build_bundle(store: SchemaStore, version: str, facet: SchemaDocument) -> Bundle:
    """Collect ``facet`` and the documents it references, rewrite refs, hoist inline objects."""
    names = special_cases()["root_names"]
    documents = _referenced_documents(store, facet)
    bundle = Bundle(version=version, facet=facet, documents=documents)
    for document in documents:
        file_name = document.uri.rsplit("/", 1)[-1]
        if file_name not in names:
            raise CodegenError(
                f"{document.path}: no class name for the root of {file_name}; add it to "
                f"'root_names' in {_SPECIAL_CASES}"
            )
        bundle.roots[document.uri] = names[file_name]
    for document in documents:
        root = {k: v for k, v in document.content.items() if k not in _ANNOTATION_ONLY_ROOT_KEYS}
        if root:
            _add_def(bundle, bundle.roots[document.uri], root, document.uri)
        for name, schema in document.content.get("$defs", {}).items():
            _add_def(bundle, name, schema, f"{document.uri}#/$defs/{name}")
    for name in list(bundle.defs):
        document_uri = urldefrag(bundle.origins[name])[0]
        bundle.defs[name] = _rewrite_refs(bundle, bundle.defs[name], document_uri)
    for name in list(bundle.defs):
        _hoist_inline_objects(bundle, name)
    return bundle


def facet_only(bundle: Bundle) -> Bundle:
    """``bundle`` with only the definitions the facet document reaches: its own (root and
    ``$defs``) and those they reference, directly or not. A custom facet's module so holds the
    facet and the core definitions it extends (``OutputDatasetFacet``, ``BaseFacet``), not a
    second copy of the whole event model."""
    pending = bundle.defs_of(bundle.facet)
    kept: set[str] = set()
    while pending:
        name = pending.pop()
        if name not in kept:
            kept.add(name)
            pending += [ref.removeprefix("#/$defs/") for ref in _refs(bundle.defs[name])]
    return Bundle(
        version=bundle.version,
        facet=bundle.facet,
        documents=bundle.documents,
        defs={name: schema for name, schema in bundle.defs.items() if name in kept},
        origins={name: url for name, url in bundle.origins.items() if name in kept},
        roots={uri: name for uri, name in bundle.roots.items() if name in kept},
    )


def _referenced_documents(store: SchemaStore, start: SchemaDocument) -> list[SchemaDocument]:
    seen = {start.uri: start}
    pending = [start]
    while pending:
        document = pending.pop()
        for ref in _refs(document.content):
            target, _ = urldefrag(urljoin(document.uri, ref))
            if target not in seen:
                seen[target] = store.get(target, referenced_from=str(document.path))
                pending.append(seen[target])
    return sorted(seen.values(), key=lambda doc: (doc.uri != start.uri, doc.uri))


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        for value in node.values():
            found.extend(_refs(value))
        return found
    if isinstance(node, list):
        return [ref for item in node for ref in _refs(item)]
    return []


def _add_def(bundle: Bundle, name: str, schema: Schema, origin: str) -> None:
    if name in bundle.defs:
        raise CodegenError(
            f"definition {name!r} exists in both {bundle.origins[name]} and {origin}; "
            "generated classes need distinct names"
        )
    bundle.defs[name] = copy.deepcopy(schema)
    bundle.origins[name] = origin


def _rewrite_refs(bundle: Bundle, node: Any, base_uri: str) -> Any:
    if isinstance(node, list):
        return [_rewrite_refs(bundle, item, base_uri) for item in node]
    if not isinstance(node, dict):
        return node
    rewritten = {key: _rewrite_refs(bundle, value, base_uri) for key, value in node.items()}
    if isinstance(node.get("$ref"), str):
        rewritten["$ref"] = "#/$defs/" + _def_name_for_ref(bundle, node["$ref"], base_uri)
    return rewritten


def _def_name_for_ref(bundle: Bundle, ref: str, base_uri: str) -> str:
    target_uri, fragment = urldefrag(urljoin(base_uri, ref))
    if fragment in ("", "/"):
        return bundle.roots[target_uri]
    parts = fragment.split("/")
    if len(parts) == 3 and parts[:2] == ["", "$defs"]:
        name = parts[2]
        if bundle.origins.get(name) == f"{target_uri}#/$defs/{name}":
            return name
        raise CodegenError(
            f"$ref {ref!r} (in {base_uri}) points to a definition that does not exist"
        )
    raise CodegenError(
        f"$ref {ref!r} (in {base_uri}): only refs to a document or to '#/$defs/<Name>' "
        "are supported"
    )


def _hoist_inline_objects(bundle: Bundle, def_name: str) -> None:
    """Give inline object schemas under ``properties``/``items`` a definition of their own."""
    pending: list[tuple[Schema, str]] = [(bundle.defs[def_name], bundle.origins[def_name])]
    while pending:
        schema, pointer = pending.pop()
        for sub_key in ("allOf", "anyOf", "oneOf"):
            for index, part in enumerate(schema.get(sub_key, [])):
                pending.append((part, f"{pointer}/{sub_key}/{index}"))
        for prop, prop_schema in schema.get("properties", {}).items():
            prop_pointer = f"{pointer}/properties/{prop}"
            items = prop_schema.get("items")
            if isinstance(items, dict) and "properties" in items:
                prop_schema["items"] = _hoist(
                    bundle, _pascal(_singular(prop)), items, prop_pointer + "/items"
                )
            elif "properties" in prop_schema:
                schema["properties"][prop] = _hoist(
                    bundle, _pascal(prop), prop_schema, prop_pointer
                )
            else:
                pending.append((prop_schema, prop_pointer))


def _hoist(bundle: Bundle, name: str, schema: Schema, origin: str) -> Schema:
    _add_def(bundle, name, schema, origin)
    _hoist_inline_objects(bundle, name)
    return {"$ref": f"#/$defs/{name}"}


def _pascal(name: str) -> str:
    words = re.split(r"[^0-9A-Za-z]+", name)
    return "".join(word[:1].upper() + word[1:] for word in words if word)


def _singular(name: str) -> str:
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


@dataclass(frozen=True)
class AllowedValues:
    """A string property whose allowed values the schema gives only in its description."""

    def_name: str
    property: str
    values: tuple[str, ...]
    enum_name: str


def allowed_values(bundle: Bundle) -> list[AllowedValues]:
    """Properties described as ``Allowed values: 'A', 'B'``: rules the schema states in prose."""
    found = []
    for def_name, schema in bundle.defs.items():
        for prop, prop_schema in schema.get("properties", {}).items():
            match = _ALLOWED_VALUES.match(str(prop_schema.get("description", "")))
            if not match:
                continue
            values = tuple(re.findall(r"'([^']*)'", match["rest"]))
            if not values or prop_schema.get("type") != "string":
                raise CodegenError(
                    f"{bundle.origins[def_name]}/properties/{prop}: a description starting with "
                    "'Allowed values:' must quote the values ('A', 'B') of a string property"
                )
            found.append(AllowedValues(def_name, prop, values, _pascal(prop)))
    by_enum: dict[str, tuple[str, ...]] = {}
    for rule in found:
        if by_enum.setdefault(rule.enum_name, rule.values) != rule.values:
            raise CodegenError(
                f"property {rule.property!r} lists different allowed values in different "
                "definitions; they would need two enums of the same name"
            )
        if rule.enum_name in bundle.defs:
            raise CodegenError(f"enum {rule.enum_name!r} would shadow a definition of that name")
    return found


def strict_defs(bundle: Bundle) -> dict[str, Schema]:
    """The definitions with their prose rules made explicit: allowed values become ``enum``."""
    defs = copy.deepcopy(bundle.defs)
    for rule in allowed_values(bundle):
        defs[rule.def_name]["properties"][rule.property]["enum"] = list(rule.values)
    return defs


def model_defs(bundle: Bundle) -> dict[str, Schema]:
    """The definitions as the model generator should see them.

    A property with documented allowed values becomes ``<Enum> | str``: the enum names the
    documented values, and any other string still parses (the schema itself accepts it).
    """
    defs = copy.deepcopy(bundle.defs)
    for rule in allowed_values(bundle):
        prop_schema = defs[rule.def_name]["properties"][rule.property]
        defs[rule.enum_name] = {
            "type": "string",
            "enum": list(rule.values),
            "description": prop_schema.get("description", ""),
        }
        defs[rule.def_name]["properties"][rule.property] = {
            "anyOf": [{"$ref": f"#/$defs/{rule.enum_name}"}, {"type": "string"}],
            "description": prop_schema.get("description", ""),
        }
    return defs
