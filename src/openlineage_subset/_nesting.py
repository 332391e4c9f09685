"""The nesting limit: deep or cyclic input raises ``SubsetDocumentError``, not ``RecursionError``.

Parsing, validation, ``dump()``, ``render()`` and ``matches()`` walk a document recursively, a
few Python frames per level (the generated validators too). Each first measures its input with an
iterative walk: objects and arrays (and models) nested more than ``MAX_DEPTH`` levels deep, and
Python structures that contain themselves, are refused with the JSON path where the limit was
passed. A deep document within the limit is then walked with stack room for its depth, whatever
the caller's own stack depth.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import threading
from collections.abc import Iterable, Mapping
from types import TracebackType

from openlineage_subset_generated._support import JsonObject

from openlineage_subset._issues import SubsetDocumentError, ValidationIssue, json_path

MAX_DEPTH = 512
"""The most levels of objects and arrays a document may nest (``{"a": [1]}`` nests 2)."""
TOO_DEEP = (
    f"nested too deeply: more than {MAX_DEPTH} levels of objects and arrays, the most this "
    "version reads"
)

# Python frames per level of the costliest recursive walk here, the parse converters: 3 on
# Python 3.11 (a comprehension is a frame of its own before 3.12), and one to spare. A test at
# MAX_DEPTH from a nearly full stack fails with 2.
_FRAMES_PER_LEVEL = 4
_FRAMES_BESIDES = 100
# Up to this depth a walk runs on the caller's stack like any Python code (a few hundred frames);
# making room costs more than checking a typical facet.
_SHALLOW = 64
_SCALARS = frozenset((str, int, float, bool, type(None)))

Part = str | int


def check_nesting(value: object, what: str) -> int:
    """How many levels ``value`` nests; raises :class:`SubsetDocumentError` past the limit.

    ``what`` names the value in the error (``"subset facet"``). A structure that contains itself
    is refused too: as JSON it would never end.

    >>> check_nesting({"subset": {"inputCondition": {"type": "location", "locations": []}}}, "x")
    4
    >>> cyclic = {"type": "binary"}
    >>> cyclic["left"] = cyclic
    >>> check_nesting({"inputCondition": cyclic}, "condition")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    openlineage_subset._issues.SubsetDocumentError: cannot read the condition:
      $.inputCondition.left: contains itself (the value at $.inputCondition), ...
    """
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    push, pop = stack.append, stack.pop
    while stack:
        node, level = pop()
        # Parsed JSON holds only dicts, lists and scalars: test those first, it is the hot path.
        children: Iterable[object] | None
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            children = _children(node)
            if children is None:
                continue
        if level > MAX_DEPTH:
            raise SubsetDocumentError(f"cannot read the {what}", [_where_too_deep(value)])
        if level > deepest:  # noqa: PLR1730  (max() would cost a call per object here)
            deepest = level
        for child in children:
            if type(child) not in _SCALARS:
                push((child, level + 1))
    return deepest


def stack_room(levels: int) -> contextlib.AbstractContextManager[None]:
    """A context in which a recursive walk of ``levels`` levels (``check_nesting``'s) fits.

    Up to 64 levels the walk runs on the caller's stack as it is.

    >>> with stack_room(MAX_DEPTH):
    ...     pass
    """
    if levels <= _SHALLOW:
        return contextlib.nullcontext()
    return _StackRoom(levels * _FRAMES_PER_LEVEL + _FRAMES_BESIDES)


class _StackRoom:
    """Raises the recursion limit (one per process) above the caller's, and puts it back after.

    The room is bounded: ``check_nesting`` bounds the depth first, so a walk takes at most about
    2,150 frames beyond the caller's limit. A limit other code sets meanwhile is lost when the
    last walk puts the caller's back.
    """

    _lock = threading.Lock()
    _wanted: list[int] = []  # noqa: RUF012  (shared on purpose: one limit for every thread)
    _caller_limit = 0

    def __init__(self, frames: int) -> None:
        self._frames = frames

    def __enter__(self) -> None:
        with self._lock:
            if not _StackRoom._wanted:
                _StackRoom._caller_limit = sys.getrecursionlimit()
            _StackRoom._wanted.append(self._frames)
            # The deepest walk under way sets the limit: every thread's walk fits in it.
            sys.setrecursionlimit(_StackRoom._caller_limit + max(_StackRoom._wanted))

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with self._lock:
            _StackRoom._wanted.remove(self._frames)
            extra = max(_StackRoom._wanted, default=0)
            sys.setrecursionlimit(_StackRoom._caller_limit + extra)


def _children(node: object) -> Iterable[object] | None:
    """The values one level below ``node``, or None for a value that holds none."""
    if isinstance(node, (str, bytes)):
        return None
    if isinstance(node, Mapping):
        return node.values()
    if isinstance(node, (list, tuple)):
        return node
    if isinstance(node, JsonObject):
        values = [getattr(node, attribute) for attribute, _, _ in model_properties(type(node))]
        values.extend(node.additional_properties.values())
        return values
    return None


def _named_children(node: object) -> list[tuple[Part, object]] | None:
    """``_children`` with the key or index of each, for the JSON path."""
    if isinstance(node, (str, bytes)):
        return None
    if isinstance(node, Mapping):
        return [(key if isinstance(key, str) else repr(key), v) for key, v in node.items()]
    if isinstance(node, (list, tuple)):
        return list(enumerate(node))
    if isinstance(node, JsonObject):
        return _model_items(node)
    return None


def _model_items(model: JsonObject) -> list[tuple[Part, object]]:
    """A model's values by JSON name, as ``dump()`` writes them."""
    items: list[tuple[Part, object]] = [
        (json_name, getattr(model, attribute))
        for attribute, json_name, _ in model_properties(type(model))
    ]
    items.extend(model.additional_properties.items())
    return items


_PROPERTIES: dict[type, tuple[tuple[str, str, bool], ...]] = {}


def model_properties(cls: type) -> tuple[tuple[str, str, bool], ...]:
    """(attribute, JSON name, optional) of each schema property of a generated class, read
    once per class: ``dataclasses.fields`` and the names of every base class cost a tenth of a
    millisecond a model, and capture dumps a few dozen models per action."""
    found = _PROPERTIES.get(cls)
    if found is None:
        names: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            names.update(klass.__dict__.get("JSON_NAMES", {}))
        found = tuple(
            (f.name, names.get(f.name, f.name), f.default is None)
            for f in dataclasses.fields(cls)
            if f.name != "additional_properties"
        )
        _PROPERTIES[cls] = found
    return found


def _where_too_deep(value: object) -> ValidationIssue:
    """The first place, in document order, that contains itself or passes ``MAX_DEPTH``."""
    above: dict[int, tuple[Part, ...]] = {}  # the containers above the node, by id: their paths
    stack: list[tuple[object, tuple[Part, ...], bool]] = [(value, (), False)]
    while stack:
        node, path, leaving = stack.pop()
        if leaving:
            del above[id(node)]
            continue
        children = _named_children(node)
        if children is None:
            continue
        if id(node) in above:
            return ValidationIssue(
                json_path(path),
                f"contains itself (the value at {json_path(above[id(node)])}), which JSON "
                "cannot: pass a copy instead of the value itself",
            )
        if len(path) == MAX_DEPTH:
            return ValidationIssue(
                json_path(path),
                f"{TOO_DEEP}; write long AND/OR chains as balanced trees "
                "(openlineage_subset.all_of / any_of)",
            )
        above[id(node)] = path
        stack.append((node, path, True))
        # Last child first, so that the stack walks them in document order.
        stack.extend((child, (*path, key), False) for key, child in reversed(children))
    raise AssertionError("check_nesting found a place past the limit")  # pragma: no cover
