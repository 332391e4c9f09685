"""Parse JSON documents into the generated dataclasses and dump them back, losing nothing.

Conversion follows the type hints of the generated classes, read once per class: dataclasses
by field (JSON names from ``JSON_NAMES``), unions of dataclasses by their ``Literal`` type
field, enums by value (an unknown string stays a string where the schema allows one). Properties
a schema does not name go to ``additional_properties`` and come back out unchanged. A ``subset``
facet inside an event is parsed with the spec version its own ``_schemaURL`` names. Input nested
more than ``MAX_DEPTH`` levels, or containing itself, raises ``SubsetDocumentError`` up front.
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union, cast, overload

from openlineage_subset_generated._support import (
    EventBase,
    InputSubsetFacet,
    Issue,
    JsonObject,
    OutputSubsetFacet,
    SubsetCondition,
    describe,
)

from openlineage_subset._issues import SubsetDocumentError, ValidationIssue, json_path
from openlineage_subset._nesting import check_nesting, model_properties, stack_room
from openlineage_subset._versions import (
    INPUT_FACET_DEF,
    OUTPUT_FACET_DEF,
    SpecVersion,
    spec,
    spec_for_event,
    spec_for_facet,
)

SUBSET_FACET_KEY = "subset"
CONDITION_DEF = "BaseSubsetCondition"
"""The facet schema's definition of a condition (any of its kinds)."""
EVENT_DEFINITIONS = ("RunEvent", "DatasetEvent", "JobEvent")
"""The core model's event definitions, in the order a valid event is matched to one."""

Converter = Callable[[Any], Any]
JsonValue = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None
"""A JSON value as ``json.loads`` gives it: what :func:`dump` returns."""


def parse_facet(obj: object) -> InputSubsetFacet | OutputSubsetFacet:
    """Parse a subset facet (the value under the ``subset`` key) into its model.

    The spec version is the one its ``_schemaURL`` names (the newest, with a warning, when this
    installation does not have it). Raises :class:`SubsetDocumentError` listing every problem,
    also for a facet nested more than 512 levels deep or containing itself.

    >>> facet = parse_facet({
    ...     "inputCondition": {"type": "location", "locations": ["s3://bucket/2024/10/15"]},
    ...     "_producer": "https://example.com/producer",
    ...     "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"
    ...                   "#/$defs/InputSubsetInputDatasetFacet",
    ... })
    >>> type(facet).__name__, facet.input_condition.locations
    ('InputSubsetInputDatasetFacet', ['s3://bucket/2024/10/15'])
    """
    if not isinstance(obj, Mapping):
        raise SubsetDocumentError(
            "not a subset facet", [ValidationIssue("$", f"expected an object, got {describe(obj)}")]
        )
    if set(obj) == {SUBSET_FACET_KEY}:
        raise SubsetDocumentError(
            "not a subset facet",
            [ValidationIssue("$", "this is a facet map; pass the facet itself: obj['subset']")],
        )
    levels = check_nesting(obj, "subset facet")
    spec = spec_for_facet(obj.get("_schemaURL"))
    with stack_room(levels):
        facet = _parse_subset_facet(spec, obj, ())
    return cast(InputSubsetFacet | OutputSubsetFacet, facet)


def parse_condition(obj: object, *, version: str | None = None) -> SubsetCondition:
    """Parse a subset condition (what ``inputCondition`` or ``outputCondition`` holds).

    A condition carries no ``_schemaURL``: ``version`` names the spec version of its models
    (the newest when None). Raises :class:`SubsetDocumentError` listing every problem.

    >>> condition = parse_condition({"type": "location", "locations": ["s3://bucket/2024"]})
    >>> type(condition).__name__, condition.locations
    ('LocationSubsetCondition', ['s3://bucket/2024'])
    """
    if not isinstance(obj, Mapping):
        raise SubsetDocumentError(
            "not a subset condition",
            [ValidationIssue("$", f"expected an object, got {describe(obj)}")],
        )
    levels = check_nesting(obj, "subset condition")
    chosen = spec(version)
    with stack_room(levels):
        issues = chosen.validators.VALIDATORS[CONDITION_DEF](obj)
        if issues:
            raise SubsetDocumentError("invalid subset condition", _to_issues(issues))
        return cast(SubsetCondition, _condition_converter(chosen)(obj))


def _condition_converter(chosen: SpecVersion) -> Converter:
    """The conversion of a valid condition of ``chosen``: the one its input facet applies to
    its ``inputCondition`` (a union of the condition classes, told apart by ``type``)."""
    facet_class = getattr(chosen.models, INPUT_FACET_DEF)
    hint = typing.get_type_hints(facet_class)["input_condition"]
    return _converter(hint, facet_class)


def parse_event(obj: object) -> EventBase:
    """Parse an OpenLineage RunEvent, JobEvent or DatasetEvent, subset facets included.

    The core model comes from the newest spec version built on the event's OpenLineage version;
    each ``subset`` facet is parsed with the version its own ``_schemaURL`` names. Raises
    :class:`SubsetDocumentError` like :func:`parse_facet`.

    >>> event = parse_event({
    ...     "eventTime": "2024-10-15T10:00:00Z", "producer": "https://example.com/producer",
    ...     "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    ...     "eventType": "START",
    ...     "run": {"runId": "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11"},
    ...     "job": {"namespace": "demo", "name": "daily_sales"},
    ... })
    >>> type(event).__name__, event.event_type.value
    ('RunEvent', 'START')
    """
    if not isinstance(obj, Mapping):
        raise SubsetDocumentError(
            "not an OpenLineage event",
            [ValidationIssue("$", f"expected an object, got {describe(obj)}")],
        )
    levels = check_nesting(obj, "OpenLineage event")
    with stack_room(levels):
        event = _parse_valid_event(obj)
    return cast(EventBase, event)


def _parse_valid_event(obj: Mapping[str, Any]) -> Any:
    spec = spec_for_event(obj.get("schemaURL"))
    issues = spec.validators.VALIDATORS[spec.module.CORE_ROOT](obj)
    facets = list(subset_facet_paths(obj))
    issues = [issue for issue in issues if not _below_any(issue[0], facets)]
    for path, _role, facet in facets:
        facet_spec = spec_for_facet(facet.get("_schemaURL") if isinstance(facet, Mapping) else None)
        issues += _with_prefix(
            path, facet_spec.validators.VALIDATORS["BaseSubsetDatasetFacet"](facet)
        )
    if issues:
        raise SubsetDocumentError("invalid OpenLineage event", _to_issues(issues))
    for name in EVENT_DEFINITIONS:
        if not spec.validators.VALIDATORS[name](obj):
            return _object_converter(getattr(spec.models, name))(obj)
    raise AssertionError("a valid event matches one event definition")  # pragma: no cover


Role = Literal["input", "output"]
_FACET_PLACES: tuple[tuple[str, str, Role], ...] = (
    ("inputs", "inputFacets", "input"),
    ("outputs", "outputFacets", "output"),
)


def subset_facet_paths(
    event: Mapping[str, Any],
) -> typing.Iterator[tuple[tuple[str | int, ...], Role, Any]]:
    """Path, role and value of each ``subset`` facet of an event's inputs and outputs."""
    for list_key, facets_key, role in _FACET_PLACES:
        datasets = event.get(list_key)
        if not isinstance(datasets, list):
            continue
        for index, dataset in enumerate(datasets):
            facets = dataset.get(facets_key) if isinstance(dataset, Mapping) else None
            if isinstance(facets, Mapping) and SUBSET_FACET_KEY in facets:
                yield (
                    (list_key, index, facets_key, SUBSET_FACET_KEY),
                    role,
                    facets[SUBSET_FACET_KEY],
                )


def _below_any(
    path: tuple[str | int, ...], facets: list[tuple[tuple[str | int, ...], Role, Any]]
) -> bool:
    return any(path[: len(prefix)] == prefix for prefix, _, _ in facets)


def _with_prefix(prefix: tuple[str | int, ...], issues: list[Issue]) -> list[Issue]:
    return [((*prefix, *path), message) for path, message in issues]


def _to_issues(issues: list[Issue]) -> list[ValidationIssue]:
    return [ValidationIssue(json_path(path), message) for path, message in issues]


def _parse_subset_facet(spec: SpecVersion, obj: Any, prefix: tuple[str | int, ...]) -> Any:
    issues = spec.validators.VALIDATORS["BaseSubsetDatasetFacet"](obj)
    if issues:
        raise SubsetDocumentError("invalid subset facet", _to_issues(_with_prefix(prefix, issues)))
    return _build_subset_facet(spec, obj)


def _build_subset_facet(spec: SpecVersion, valid_facet: Any) -> Any:
    """The model of a facet already known to be valid: input or output, by which one it is."""
    is_input = not spec.validators.VALIDATORS[INPUT_FACET_DEF](valid_facet)
    name = INPUT_FACET_DEF if is_input else OUTPUT_FACET_DEF
    return _object_converter(getattr(spec.models, name))(valid_facet)


@overload
def dump(model: JsonObject) -> dict[str, JsonValue]: ...
@overload
def dump(model: list[Any]) -> list[JsonValue]: ...
@overload
def dump(model: object) -> JsonValue: ...


def dump(model: object) -> JsonValue:
    """The JSON value of a generated model (condition, facet, dataset, event), as dicts and lists.

    ``dump(parse_facet(d)) == d`` for every valid facet: unknown properties are kept. A model
    nested more than 512 levels deep (a long chain of ``a & b & c ...``) or containing itself
    raises :class:`SubsetDocumentError`.

    >>> from openlineage_subset import field
    >>> dump(field("country") == "PL")["right"]
    {'type': 'literal', 'value': 'PL'}
    """
    levels = check_nesting(model, "model")
    with stack_room(levels):
        return cast(JsonValue, _dump(model))


def _dump(model: Any) -> Any:
    if isinstance(model, JsonObject):
        return _dump_object(model)
    if isinstance(model, enum.Enum):
        return model.value
    if isinstance(model, list):
        return [_dump(item) for item in model]
    if isinstance(model, dict):
        return {key: _dump(value) for key, value in model.items()}
    return model


def _dump_object(model: JsonObject) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for attribute, json_name, optional in model_properties(type(model)):
        value = getattr(model, attribute)
        if value is None and optional:
            continue
        out[json_name] = _dump(value)
    for key, value in model.additional_properties.items():
        if key in out:
            raise ValueError(
                f"{type(model).__name__}.additional_properties repeats the property {key!r}; "
                f"set it through the attribute instead"
            )
        out[key] = value
    return out


_CONVERTERS: dict[type, Converter] = {}


def _object_converter(cls: type) -> Converter:
    """A function turning a (valid) JSON object into an instance of ``cls``."""
    cached = _CONVERTERS.get(cls)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls)
    plan = [
        (attr, json_name, _converter(hints[attr], cls))
        for attr, json_name, _ in model_properties(cls)
    ]
    known = {json_name for _, json_name, _ in plan}

    def convert(data: Mapping[str, Any]) -> Any:
        values = {attr: conv(data[key]) for attr, key, conv in plan if key in data}
        extra = {key: value for key, value in data.items() if key not in known}
        return cls(**values, additional_properties=extra)

    _CONVERTERS[cls] = convert
    return convert


def _converter(hint: Any, owner: type) -> Converter:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        members = [arg for arg in args if arg is not type(None)]
        if len(members) == 1:
            return _converter(members[0], owner)
        return _union_converter(tuple(members), owner)
    if origin is list:
        item = _converter(args[0], owner)
        return lambda value: [item(v) for v in value]
    if origin is dict:
        if _holds_subset_facets(args[1], owner):
            return _facet_map_converter(_converter(args[1], owner))
        element = _converter(args[1], owner)
        return lambda value: {k: element(v) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, JsonObject):

        def convert_object(value: Any) -> Any:
            # Looked up at call time: the types are recursive (a binary condition holds conditions).
            return _object_converter(hint)(value)

        return convert_object
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint
    return _identity


def _identity(value: Any) -> Any:
    return value


def _union_converter(members: tuple[Any, ...], owner: type) -> Converter:
    classes = [m for m in members if isinstance(m, type) and issubclass(m, JsonObject)]
    if classes and len(classes) == len(members):
        key, table = _discriminator(classes)
        return lambda value: _object_converter(table[value[key]])(value)
    enums = [m for m in members if isinstance(m, type) and issubclass(m, enum.Enum)]
    if len(enums) == 1 and str in members and len(members) == 2:
        enum_type = enums[0]
        values = {member.value for member in enum_type}
        return lambda value: enum_type(value) if value in values else value
    raise TypeError(f"{owner.__name__}: no conversion for the union {members}")


def _discriminator(classes: list[type]) -> tuple[str, dict[str, type]]:
    """The field whose ``Literal`` values tell the classes of a union apart, and the table (a
    class may have several: ``Literal["year", "month"]``, each of its own)."""
    literals = []
    for cls in classes:
        hints = typing.get_type_hints(cls)
        literals.append(
            {
                json_name: typing.get_args(hints[attr])
                for attr, json_name, _ in model_properties(cls)
                if typing.get_origin(hints[attr]) is Literal
            }
        )
    for key in sorted(set.intersection(*(set(found) for found in literals))):
        pairs = [
            (value, cls)
            for found, cls in zip(literals, classes, strict=True)
            for value in found[key]
        ]
        table = dict(pairs)
        if len(table) == len(pairs):
            return key, table
    raise TypeError(f"no Literal field tells {[c.__name__ for c in classes]} apart")


def _holds_subset_facets(value_hint: Any, owner: type) -> bool:
    """Whether a facet map with values of this class may hold a ``subset`` facet."""
    models = sys.modules[owner.__module__]
    facet_classes = (
        getattr(models, INPUT_FACET_DEF, None),
        getattr(models, OUTPUT_FACET_DEF, None),
    )
    return isinstance(value_hint, type) and any(
        isinstance(cls, type) and issubclass(cls, value_hint) for cls in facet_classes
    )


def _facet_map_converter(other_facets: Converter) -> Converter:
    def convert(value: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for key, facet in value.items():
            if key == SUBSET_FACET_KEY:
                out[key] = _build_subset_facet(spec_for_facet(facet.get("_schemaURL")), facet)
            else:
                out[key] = other_facets(facet)
        return out

    return convert
