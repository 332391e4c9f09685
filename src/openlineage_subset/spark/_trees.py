"""Spark's ``toJSON()`` trees, decoded into plain Python nodes.

``TreeNode.toJSON()`` writes a tree as a flat list in pre-order: each node is an object with its
``class``, its ``num-children``, and its fields, where a field naming a child holds that child's
index among the node's children (``"left": 0``) and expression-valued fields of plan nodes hold
nested flat lists. One call to ``toJSON()`` thus carries a whole plan or expression out of the JVM.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ExactValues:
    """What a node's JSON leaves out, read separately from the JVM when the node is kept."""

    timestamp_micros: int | None = None
    """A timestamp literal's value in microseconds since the epoch: its JSON prints it in the
    session time zone without an offset."""
    set_values: list[str] | None = None
    """An ``InSet``'s values as Spark stores them internally: its JSON has no values at all."""


@dataclass(frozen=True)
class Node:
    """One tree node: its short class name, its fields, its children, and its pre-order index."""

    kind: str
    fields: dict[str, Any]
    children: tuple[Node, ...] = ()
    index: int = 0
    exact: ExactValues = field(default_factory=ExactValues, compare=False)
    """Filled in after decoding, for the few nodes that need it (see ``ExactValues``)."""

    def child(self, name: str) -> Node:
        """The child a field names (``node.child("left")``)."""
        position = self.fields[name]
        if not isinstance(position, int) or not 0 <= position < len(self.children):
            raise ValueError(f"{self.kind}.{name} does not name a child")
        return self.children[position]

    def child_list(self, name: str) -> list[Node]:
        """The children a list field names (``In.list``)."""
        positions = self.fields.get(name) or []
        return [self.children[p] for p in positions]

    def walk(self) -> Iterator[Node]:
        """This node and all below it, in pre-order."""
        yield self
        for child in self.children:
            yield from child.walk()


def decode(flat: list[dict[str, Any]]) -> Node:
    """The tree of a flat pre-order ``toJSON()`` list.

    >>> tree = decode([
    ...     {"class": "org.apache.spark.sql.catalyst.expressions.EqualTo", "num-children": 2,
    ...      "left": 0, "right": 1},
    ...     {"class": "org.apache.spark.sql.catalyst.expressions.AttributeReference",
    ...      "num-children": 0, "name": "country", "dataType": "string"},
    ...     {"class": "org.apache.spark.sql.catalyst.expressions.Literal", "num-children": 0,
    ...      "value": "PL", "dataType": "string"},
    ... ])
    >>> tree.kind, tree.child("left").fields["name"], tree.child("right").index
    ('EqualTo', 'country', 2)
    """
    if not flat:
        raise ValueError("an empty toJSON() list holds no tree")
    node, end = _decode_at(flat, 0)
    if end != len(flat):
        raise ValueError(f"toJSON() list has {len(flat) - end} node(s) after its tree")
    return node


def _decode_at(flat: list[dict[str, Any]], start: int) -> tuple[Node, int]:
    raw = flat[start]
    count = int(raw.get("num-children", 0))
    children = []
    position = start + 1
    for _ in range(count):
        child, position = _decode_at(flat, position)
        children.append(child)
    fields = {k: v for k, v in raw.items() if k not in ("class", "num-children")}
    kind = str(raw["class"]).rsplit(".", 1)[-1]
    return Node(kind, fields, tuple(children), start), position
