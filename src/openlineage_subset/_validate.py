"""``validate()``: a facet map, a subset facet or an OpenLineage event, against the schemas.

The checks run the validators generated from the schemas (fast, exact: a test compares them with
``jsonschema``). ``strict=True`` adds what the schema says only in prose: the documented values
of ``comparison`` and ``operator``, the ``format`` of URIs, UUIDs and timestamps, a ``_schemaURL``
that names an existing definition of a known version matching the facet's role, input facets
under ``inputFacets`` / output facets under ``outputFacets``, and no subset facet of an event
under another key than ``subset`` (:func:`misplaced_subset_facets`). A document nested more than
``MAX_DEPTH`` levels deep, or containing itself, gets one issue saying where, and is not checked
further.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any, Literal

from openlineage_subset_generated._support import Issue, describe

from openlineage_subset._convert import (
    EVENT_DEFINITIONS,
    SUBSET_FACET_KEY,
    Role,
    subset_facet_paths,
)
from openlineage_subset._issues import SubsetDocumentError, ValidationIssue, json_path
from openlineage_subset._nesting import check_nesting, stack_room
from openlineage_subset._versions import (
    FACET_FILE,
    INPUT_FACET_DEF,
    OUTPUT_FACET_DEF,
    SpecVersion,
    spec_for_event,
    spec_for_facet,
    spec_versions,
)

Path = tuple[str | int, ...]

_EVENT_KEYS = frozenset(
    {
        "eventTime",
        "eventType",
        "producer",
        "schemaURL",
        "run",
        "job",
        "dataset",
        "inputs",
        "outputs",
    }
)
_FACET_KEYS = frozenset({"inputCondition", "outputCondition"})
# Where other producers put the subset facet: (list, the spec's place, the other key).
_ALIAS_PLACES = (
    ("inputs", "inputFacets", "inputSubset"),
    ("outputs", "outputFacets", "outputSubset"),
)
_ROLE_DEFS: dict[Role, str] = {"input": INPUT_FACET_DEF, "output": OUTPUT_FACET_DEF}
_ROLE_PLACES: dict[Role, str] = {"input": "inputFacets", "output": "outputFacets"}
_ROLE_CONDITIONS: dict[Role, str] = {"input": "inputCondition", "output": "outputCondition"}
_EVENT_DEF_URL = re.compile(r"/OpenLineage\.json#/\$defs/(?P<name>[A-Za-z]+)\Z")
_FACET_DEF_URL = re.compile(
    r"https://openlineage\.io/spec/facets/(?P<version>\d+-\d+-\d+)/"
    + re.escape(FACET_FILE)
    + r"#/\$defs/(?P<name>[^/]+)"
)


def validate(document: object, *, strict: bool = False) -> list[ValidationIssue]:
    """Problems in ``document``, each with its JSONPath; an empty list when it is valid.

    ``document`` is a facet map (``{"subset": {...}}``), a subset facet, or an OpenLineage
    RunEvent/JobEvent/DatasetEvent, whose ``subset`` facets under ``inputs[].inputFacets`` and
    ``outputs[].outputFacets`` are checked against the subset schema of their version. A
    document nested more than 512 levels of objects and arrays deep, or containing itself, is
    reported as one issue at the place where it passes the limit.

    >>> facet_map = {"subset": {
    ...     "inputCondition": {"type": "compare", "comparison": "EQUALS",
    ...         "left": {"type": "field", "field": "country"},
    ...         "right": {"type": "literal", "value": "PL"}},
    ...     "_producer": "https://example.com/producer",
    ...     "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"
    ...                   "#/$defs/InputSubsetInputDatasetFacet"}}
    >>> validate(facet_map)
    []
    >>> [str(issue) for issue in validate(facet_map, strict=True)]  # doctest: +ELLIPSIS
    ['$.subset.inputCondition.comparison: expected one of "EQUAL", ...']
    """
    if not isinstance(document, Mapping):
        return [
            ValidationIssue(
                "$",
                "expected a JSON object (a facet map, a subset facet or an "
                f"OpenLineage event), got {describe(document)}",
            )
        ]
    try:
        levels = check_nesting(document, "document")
    except SubsetDocumentError as error:
        return list(error.issues)
    return validate_within(document, levels, strict=strict)


def validate_within(
    document: Mapping[str, Any], levels: int, *, strict: bool = False
) -> list[ValidationIssue]:
    """:func:`validate` of a JSON object whose nesting its caller already knows: ``levels``
    deep (at most ``MAX_DEPTH``), containing no cycle. Ingest knows both from a line's text at
    a fraction of the cost of walking the parsed document.

    >>> facet_map = {"subset": {"inputCondition": {"type": "near"},
    ...     "_producer": "https://example.com/producer",
    ...     "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"
    ...                   "#/$defs/InputSubsetInputDatasetFacet"}}
    >>> [str(issue) for issue in validate_within(facet_map, levels=3)]  # doctest: +ELLIPSIS
    ["$.subset.inputCondition.type: unknown type 'near', expected one of ..."]
    """
    checker = _Checker(strict)
    kind = document_kind(document)
    if kind is None:
        return [ValidationIssue("$", _not_a_document(document))]
    with stack_room(levels):
        if kind == "event":
            checker.event(document)
        elif kind == "facet map":
            checker.facet_map(document)
        else:
            checker.facet(document, (), None)
    return checker.issues


def misplaced_subset_facets(document: object) -> list[ValidationIssue]:
    """The subset facets an event's datasets hold elsewhere than the spec's place (``subset``
    under ``inputFacets``/``outputFacets``): under ``facets.inputSubset`` (Airflow's all-facets
    system test), ``inputFacets.inputSubset`` (the Go client) and their output twins. Each is
    an issue of the ``strict`` rule naming the right place: ``validate(strict=True)`` reports
    them, ``ol-subset validate`` without ``--strict`` shows them as warnings, and the lineage
    store reads such a facet where the spec's place holds none.

    >>> event = {"eventTime": "2024-10-15T10:00:00Z", "inputs": [{"namespace": "s3://b",
    ...     "name": "t", "facets": {"inputSubset": {"inputCondition": {}}}}]}
    >>> print(misplaced_subset_facets(event)[0])  # doctest: +NORMALIZE_WHITESPACE
    $.inputs[0].facets.inputSubset: a subset facet under facets.inputSubset is not the spec's
    place: put it under inputFacets.subset (ol-subset lineage reads it here only leniently)
    """
    if not isinstance(document, Mapping) or document_kind(document) != "event":
        return []
    found = []
    for list_key, facets_key, key in _ALIAS_PLACES:
        datasets = document.get(list_key)
        for index, dataset in enumerate(datasets if isinstance(datasets, list) else ()):
            if not isinstance(dataset, Mapping):
                continue
            own = dataset.get(facets_key)
            beside = isinstance(own, Mapping) and SUBSET_FACET_KEY in own
            for place in ("facets", facets_key):
                facets = dataset.get(place)
                if not isinstance(facets, Mapping) or not isinstance(facets.get(key), Mapping):
                    continue
                right = f"{facets_key}.{SUBSET_FACET_KEY}"
                if beside:
                    message = (
                        f"a subset facet under {place}.{key} beside {right}: not the spec's "
                        f"place, and {right} is the one read; remove this one"
                    )
                else:
                    message = (
                        f"a subset facet under {place}.{key} is not the spec's place: put it "
                        f"under {right} (ol-subset lineage reads it here only leniently)"
                    )
                path = json_path((list_key, index, place, key))
                found.append(ValidationIssue(path, message, "strict"))
    return found


def document_kind(document: Mapping[str, Any]) -> Literal["event", "facet map", "facet"] | None:
    """What a JSON object is: an event, a facet map (``{"subset": ...}``), a bare facet, or None."""
    if not _EVENT_KEYS.isdisjoint(document):
        return "event"
    if SUBSET_FACET_KEY in document:
        return "facet map"
    if not _FACET_KEYS.isdisjoint(document):
        return "facet"
    return None


def without_subset_facet(document: object) -> str | None:
    """What an OpenLineage document without any subset facet is (an event with none, another
    facet, a facet map of other facets); None when it has one, or is no OpenLineage document.

    >>> without_subset_facet({"eventTime": "2024-10-15T10:00:00Z", "inputs": []})
    'an OpenLineage event without subset facets'
    >>> without_subset_facet({"_producer": "p", "_schemaURL": "https://x/SchemaDatasetFacet.json"})
    'another facet (https://x/SchemaDatasetFacet.json)'
    """
    if not isinstance(document, Mapping):
        return None
    kind = document_kind(document)
    if kind == "event":
        # one under another key counts as one, misplaced: see misplaced_subset_facets
        if next(subset_facet_paths(document), None) is None and not misplaced_subset_facets(
            document
        ):
            return "an OpenLineage event without subset facets"
        return None
    if kind is not None:
        return None
    if _is_facet(document):
        return f"another facet ({document.get('_schemaURL', 'no _schemaURL')})"
    if document and all(_is_facet(value) for value in document.values()):
        return f"a facet map of other facets ({', '.join(map(repr, list(document)[:5]))})"
    return None


def _is_facet(value: object) -> bool:
    return isinstance(value, Mapping) and ("_producer" in value or "_schemaURL" in value)


def _not_a_document(document: Mapping[str, Any]) -> str:
    if "filter" in document:
        return (
            "this looks like the 2025 draft of the subset facet (key 'filter'); the released "
            "facet uses the key 'subset' with 'inputCondition' or 'outputCondition' "
            "(BaseSubsetDatasetFacet.json 1-0-0)"
        )
    keys = ", ".join(repr(k) for k in list(document)[:5]) or "no keys"
    return (
        f"not a facet map (key 'subset'), a subset facet (key 'inputCondition' or "
        f"'outputCondition') or an OpenLineage event (keys 'eventTime', 'run', 'job', ...); "
        f"found {keys}"
    )


class _Checker:
    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.issues: list[ValidationIssue] = []
        self._seen: set[tuple[str, str]] = set()

    def add(self, prefix: Path, found: list[Issue], rule: Literal["schema", "strict"]) -> None:
        for path, message in found:
            issue = ValidationIssue(json_path((*prefix, *path)), message, rule)
            if (issue.path, issue.message) not in self._seen:
                self._seen.add((issue.path, issue.message))
                self.issues.append(issue)

    def run(
        self,
        spec: SpecVersion,
        definition: str,
        value: Any,
        prefix: Path,
        strict_definition: str | None = None,
    ) -> None:
        """Validate ``value`` against a definition (in strict mode, ``strict_definition`` when
        given: a narrower one), telling schema issues from strict ones."""
        if not self.strict:
            self.add(prefix, spec.validators.VALIDATORS[definition](value), "schema")
            return
        strict = spec.strict_validators.VALIDATORS[strict_definition or definition](value)
        # A strict check returns its lenient check's issues and more, so when it passes, so does
        # the lenient check of the same definition; a narrower definition passing says nothing
        # of the wider one (a JobEvent can also be a DatasetEvent, which the schema forbids).
        if strict or strict_definition not in (None, definition):
            lenient = spec.validators.VALIDATORS[definition](value)
            self.add(prefix, lenient, "schema")
            known = set(lenient)
            self.add(prefix, [issue for issue in strict if issue not in known], "strict")

    def event(self, event: Mapping[str, Any]) -> None:
        spec = spec_for_event(event.get("schemaURL"))
        facets = list(subset_facet_paths(event))
        before = len(self.issues)
        named = self._named_event(event.get("schemaURL"))
        self.run(spec, str(spec.module.CORE_ROOT), event, (), strict_definition=named)
        # The subset schema includes the core facet rules; report them once, from the facet check.
        facet_paths = {json_path(path) for path, _, _ in facets}
        self.issues[before:] = [
            issue
            for issue in self.issues[before:]
            if not any(
                issue.path == p or issue.path.startswith((p + ".", p + "[")) for p in facet_paths
            )
        ]
        # What was dropped must not count as reported, or the facet check could not report it.
        self._seen = {(issue.path, issue.message) for issue in self.issues}
        for path, role, facet in facets:
            self.facet(facet, path, role)
        if self.strict:
            for issue in misplaced_subset_facets(event):
                if (issue.path, issue.message) not in self._seen:
                    self._seen.add((issue.path, issue.message))
                    self.issues.append(issue)

    @staticmethod
    def _named_event(schema_url: object) -> str | None:
        """The event definition an event's ``schemaURL`` names (``#/$defs/RunEvent``): strict
        mode holds the event to it, so a RunEvent without ``run`` is not taken for a JobEvent."""
        match = _EVENT_DEF_URL.search(schema_url) if isinstance(schema_url, str) else None
        if match is not None and match.group("name") in EVENT_DEFINITIONS:
            return match.group("name")
        return None

    def facet_map(self, document: Mapping[str, Any]) -> None:
        facet = document[SUBSET_FACET_KEY]
        spec = spec_for_facet(facet.get("_schemaURL") if isinstance(facet, Mapping) else None)
        self.run(spec, str(spec.module.FACET_ROOT), document, ())
        if self.strict and isinstance(facet, Mapping):
            self._strict_facet_rules(spec, facet, (SUBSET_FACET_KEY,), None)

    def facet(self, facet: Any, path: Path, place: Role | None) -> None:
        spec = spec_for_facet(facet.get("_schemaURL") if isinstance(facet, Mapping) else None)
        self.run(spec, "BaseSubsetDatasetFacet", facet, path)
        if self.strict and isinstance(facet, Mapping):
            self._strict_facet_rules(spec, facet, path, place)

    def _strict_facet_rules(
        self, spec: SpecVersion, facet: Mapping[str, Any], path: Path, place: Role | None
    ) -> None:
        role = _role_of(spec, facet)
        if place is not None and role is not None and role != place:
            self.add(
                path,
                [
                    (
                        (),
                        (
                            f"an {role} subset facet ({_ROLE_CONDITIONS[role]}) under "
                            f"{_ROLE_PLACES[place]}; a dataset there needs an {place} facet with "
                            f"{_ROLE_CONDITIONS[place]} ({_ROLE_DEFS[place]})"
                        ),
                    )
                ],
                "strict",
            )
        problem = schema_url_problem(facet.get("_schemaURL"), role or place, spec)
        if problem:
            self.add((*path, "_schemaURL"), [((), problem)], "strict")


def _role_of(spec: SpecVersion, facet: Mapping[str, Any]) -> Role | None:
    present = [role for role, key in _ROLE_CONDITIONS.items() if key in facet]
    if len(present) == 1:
        return present[0]
    for role, definition in _ROLE_DEFS.items():
        if not spec.validators.VALIDATORS[definition](facet):
            return role
    return None


def schema_url_problem(url: object, role: Role | None, spec: SpecVersion) -> str | None:
    """Why a facet's ``_schemaURL`` does not name the definition it should, or None if it does.

    >>> from openlineage_subset import spec
    >>> print(schema_url_problem(
    ...     "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json#/$defs/Nope",
    ...     "input", spec("1-0-0")))  # doctest: +ELLIPSIS
    '$defs/Nope' is not a definition of BaseSubsetDatasetFacet.json 1-0-0; expected https://...
    """
    if not isinstance(url, str):
        return None
    expected_def = _ROLE_DEFS[role] if role else f"{INPUT_FACET_DEF} or {OUTPUT_FACET_DEF}"
    expected = f"{spec.facet_schema_url}#/$defs/{expected_def}"
    match = _FACET_DEF_URL.fullmatch(url)
    if not match:
        return f"{url!r} does not name a definition of {FACET_FILE}; expected {expected}"
    problems = []
    version, name = match["version"], match["name"]
    if version not in spec_versions():
        problems.append(
            f"version {version} of {FACET_FILE} does not exist "
            f"(known: {', '.join(spec_versions())})"
        )
    if name not in spec.facet_defs:
        hint = difflib.get_close_matches(name, spec.facet_defs, n=1)
        problems.append(
            f"'$defs/{name}' is not a definition of {FACET_FILE} {spec.version}"
            + (f" (did you mean '{hint[0]}'?)" if hint else "")
        )
    elif role and name != _ROLE_DEFS[role]:
        problems.append(f"'$defs/{name}' is not the definition of an {role} facet")
    if not problems:
        return None
    return "; ".join(problems) + f"; expected {expected}"
