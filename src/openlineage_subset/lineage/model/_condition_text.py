"""Conditions as the answers show them: :func:`~openlineage_subset.render`'s text, the columns
of the partitions they list in the dataset's order.

A query's answer shows each distinct condition once per order of columns, and most are
partition lists of hundreds of partitions whose columns repeat the same values (a day's
countries): :class:`ConditionText` writes those directly, each ``column = 'value'`` once, the
text :func:`render` gives for them put in column order by ``in_column_order``; any other
condition goes through both (tests/lineage/test_rendering.py holds the two to the same text).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from openlineage_subset import MAX_DEPTH, SubsetDocumentError, dimension_text, render
from openlineage_subset.lineage.model._conditions import in_column_order

_FACET_KEYS = ("inputCondition", "outputCondition")


def rendered(condition: Any) -> str | None:
    """A condition as text (None: the whole dataset); one :func:`render` refuses, as JSON."""
    if condition is None:
        return None
    try:
        return render(condition)
    except (SubsetDocumentError, ValueError, TypeError):
        return json.dumps(condition)


class ConditionText:
    """The text of the conditions of one query, each (condition, column order) made once."""

    def __init__(self) -> None:
        self._done: dict[tuple[str, tuple[str, ...]], str] = {}
        self._pairs: dict[tuple[str, Any], str] = {}
        self._orders: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]] = {}

    def text(self, key: str, condition: Any, order: tuple[str, ...]) -> str:
        """The text of ``condition`` (whose canonical JSON is ``key``; not None), the columns
        of the partitions it lists in ``order`` (then by name): ``render(in_column_order(...))``
        ("" for a condition rendered as nothing)."""
        found = self._done.get((key, order))
        if found is None:
            found = self._listed(condition, order)
            if found is None:
                rank = {column: number for number, column in enumerate(order)}
                found = rendered(in_column_order(condition, rank)) or ""
            self._done[key, order] = found
        return found

    def _listed(self, condition: Any, order: tuple[str, ...]) -> str | None:
        """The text of partition lists joined by OR (each listed partition's columns of text
        or null), written directly; None for any other condition, which :func:`render` shows
        otherwise (a facet's, one nested too deep) or refuses."""
        if not isinstance(condition, dict) or any(key in condition for key in _FACET_KEYS):
            return None
        shown: list[str] = []
        stack: list[tuple[Any, int]] = [(condition, 1)]
        while stack:
            node, level = stack.pop()
            if not isinstance(node, dict):
                return None
            kind = node.get("type")
            if kind == "binary" and node.get("operator") == "OR":
                # A chain of OR prints flat: left, then right.
                stack.append((node.get("right"), level + 1))
                stack.append((node.get("left"), level + 1))
                continue
            listed = node.get("partitions")
            if kind != "partition" or not isinstance(listed, list):
                return None
            if not listed:
                shown.append("NO PARTITION")
                continue
            if level + 3 > MAX_DEPTH:  # the list, a partition, its dimensions
                return None
            for item in listed:
                dimensions = item.get("dimensions") if isinstance(item, dict) else None
                if not isinstance(dimensions, dict):
                    return None
                text = self._partition(dimensions, order)
                if text is None:
                    return None
                shown.append(text)
        return " OR ".join(shown)

    def _partition(self, dimensions: Mapping[str, Any], order: tuple[str, ...]) -> str | None:
        columns = tuple(dimensions)
        ordered = self._orders.get((columns, order))
        if ordered is None:
            rank = {column: number for number, column in enumerate(order)}
            ordered = tuple(sorted(columns, key=lambda name: (rank.get(name, len(rank)), name)))
            self._orders[columns, order] = ordered
        pairs = self._pairs
        parts = []
        for column in ordered:
            value = dimensions[column]
            if value is not None and not isinstance(value, str):
                return None  # a number, a list: as render() shows it
            text = pairs.get((column, value))
            if text is None:
                text = pairs[column, value] = dimension_text(column, value)
            parts.append(text)
        return f"PARTITION ({', '.join(parts)})"


class AccessConditions:
    """The stored conditions (canonical JSON) of runs' accesses as text, the columns of the
    partitions they list in their dataset's order (``order``: a dataset's id to its columns,
    :meth:`~openlineage_subset.lineage.engine.DatasetCatalog.column_order`): the runs
    list and a run's page show them as every other answer does (``day`` before ``country``
    where the dataset's events name ``day`` first), each made once."""

    def __init__(self, order: Callable[[int], tuple[str, ...]]) -> None:
        self._order = order
        self._text = ConditionText()

    def text(self, dataset_id: int, condition: str | None) -> str | None:
        """The condition's text (None: none, a whole dataset)."""
        if condition is None:
            return None
        return self._text.text(condition, json.loads(condition), self._order(dataset_id))
