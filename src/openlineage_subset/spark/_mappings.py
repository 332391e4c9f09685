"""Partition mappings: which input partitions each output partition of a write came from, where
the plan proves it.

A write's query is walked once, as Spark optimized it (the logical plan its write command
holds), from the scans up. For each scan of a partitioned dataset the walk carries *keys*: an
attribute of the current node, the dataset's partition column, and the steps that turn the
column's value into the attribute's. A key holds when **every** output row of the node was
computed only from rows of that scan whose column, after the steps, equals the row's attribute.
At the scan, each partition column is its own key. Each operator keeps what it cannot break:

- row by row (Filter, Sort, repartitioning, Python UDFs evaluated beside the row, Generate):
  every key;
- Project: a key's attribute passed on as itself, renamed, or through a function the consumer
  can apply to a partition value (:data:`STEP` below: a date shifted by a constant, its year,
  month or day, a date format; casts that keep the value's text);
- Aggregate: keys whose attribute is a grouping column (a group's rows share it), and what the
  output computes from it; Window: keys whose attribute is in the window's PARTITION BY;
- Join: both sides' keys (the preserved side only, for an outer join), and across an equality
  of the condition (``a.day = b.day``) a key of one side holds of the other side's column too;
- Union: a key holds of an output column when it holds at that position in every branch
  reading the scan;
- anything else (limits, Expand, subqueries, an operator this module does not know): no key.

A dataset is mapped by an output partition column when every scan of it in the action
reached the write's column with the same key. A scan the walk cannot place (a cached relation,
an RDD, a relation Spark reused) leaves every mapping unproven: the answer is then the sound
superset, as without mappings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from openlineage_subset.producer import dataset_identity, scrubbed_logger
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._facts import ScanFacts, WriteFacts
from openlineage_subset.spark._reads import reads_or_whole
from openlineage_subset.spark._trees import Node, decode

log = scrubbed_logger("openlineage_subset.spark")

Step = tuple[Any, ...]
"""One step: ``("dateAdd", days)``, ``("year",)``, ``("month",)``, ``("dayOfMonth",)``,
``("dateFormat", pattern)``."""
Key = tuple[int, str, tuple[Step, ...]]
"""(attribute id, the scan's partition column, steps from the column's value to the attribute's)."""
Reach = dict[int, frozenset[Key]]
"""The keys of each scan (by its index among the action's scans) below a node."""
Traced = tuple[int, tuple[Step, ...], "str | None"]
"""(attribute id, steps from its value, the resulting type) of an expression."""


DATE_PATTERNS = frozenset({"yyyy", "yyyy-MM", "yyyyMM", "yyyy-MM-dd", "yyyyMMdd"})
"""``date_format`` patterns a mapping may name (the facet's schema lists the same)."""
_DATE_PARTS = {"Year": "year", "Month": "month", "DayOfMonth": "dayOfMonth"}
_SAME_TEXT_CASTS = {
    # (from, to): casts after which a partition value reads the same
    ("date", "string"),
    ("integer", "string"),
    ("long", "string"),
    ("short", "string"),
    ("byte", "string"),
    ("integer", "long"),
    ("short", "integer"),
    ("short", "long"),
    ("byte", "short"),
    ("byte", "integer"),
    ("byte", "long"),
    ("string", "string"),
}
_SAME_OUTPUT = frozenset(
    {
        "Filter",
        "Sort",
        "Repartition",
        "RepartitionByExpression",
        "RebalancePartitions",
        "WriteFiles",
        "SubqueryAlias",
        "ResolvedHint",
        "Sample",
    }
)
"""Row by row, their output the child's."""
_ROW_BY_ROW = _SAME_OUTPUT | {"BatchEvalPython", "ArrowEvalPython", "Generate"}
"""Each output row made of one input row: every key holds (the last three add columns)."""
_LIMITS = frozenset({"GlobalLimit", "LocalLimit", "Tail", "Offset", "GlobalLimitAndOffset"})
"""Which rows they keep depends on other rows: no key survives them (their output is the
child's)."""
_DATASET_FREE_LEAVES = frozenset(
    {"LocalRelation", "Range", "OneRowRelation", "LogicalRDD", "ExternalRDD", "InMemoryRelation"}
)
"""Leaves whose files, if any, are scans the walk never matches: their datasets stay unmapped."""
_HARMLESS_SUBQUERIES = frozenset({"DynamicPruningSubquery", "DynamicPruningExpression"})
"""Dynamic partition pruning: it never changes a result (it only skips what a join drops)."""
_PRESERVING_JOINS = {
    # join type: (left's keys kept, right's keys kept, keys carried across equalities to)
    "Inner": (True, True, "both"),
    "Cross": (True, True, "both"),
    "LeftSemi": (True, False, "left"),
    "LeftAnti": (True, False, "left"),
    "ExistenceJoin": (True, False, "left"),
    "LeftOuter": (True, False, "left"),
    "RightOuter": (False, True, "right"),
}


class _Unproven(Exception):
    """The walk met something that may make any row depend on any other: no mapping at all."""


@dataclass(frozen=True)
class _Walked:
    reach: Reach
    output: tuple[int, ...] | None
    """The node's output attribute ids in order, where known (a Union needs them)."""


def partition_mappings(
    write: WriteFacts, scans: Sequence[ScanFacts], config: SubsetConfig
) -> list[dict[str, Any]]:
    """The mappings of one write (the ``mappings`` of an ``olsubset_partitionMapping`` facet):
    for each output partition column the plan proves to come from an input dataset's partition
    column, that column and the steps between them. Empty where nothing is proven."""
    if write.query is None or not write.partition_ids or not scans:
        return []
    try:
        walked = _walk(write.query, _leaf_scans(scans))
    except _Unproven as why:
        log.debug("no partition mapping for %s: %s", write.root, why)
        return []
    except (KeyError, ValueError, TypeError, IndexError, RecursionError) as error:
        # A plan shaped otherwise than this module knows: no mapping, and a line to debug it.
        log.debug("no partition mapping for %s: %r", write.root, error)
        return []
    by_dataset: dict[tuple[str, str], list[int]] = {}
    for index, facts in enumerate(scans):
        if facts.jdbc is not None:
            continue  # a database's table: no partition to map
        for identity in _identities(facts, config):
            by_dataset.setdefault(identity, []).append(index)
    found = []
    for (namespace, name), indexes in sorted(by_dataset.items()):
        if any(index not in walked.reach for index in indexes):
            continue  # a scan of it the walk did not reach through the query
        for column, attribute in zip(write.partition_columns, write.partition_ids, strict=False):
            if attribute is None:
                continue
            common = set.intersection(
                *(
                    {(col, steps) for a, col, steps in walked.reach[i] if a == attribute}
                    for i in indexes
                )
            )
            for input_field, steps in sorted(common, key=repr):
                found.append(
                    {
                        "field": column,
                        "input": {"namespace": namespace, "name": name},
                        "inputField": input_field,
                        "steps": [_step_json(step) for step in steps],
                    }
                )
    return found


def _identities(facts: ScanFacts, config: SubsetConfig) -> set[tuple[str, str]]:
    """The datasets one scan read, named as its inputs are (see ``input_datasets_from_scans``)."""
    found = set()
    for read in reads_or_whole(facts, config, lambda *_: None):
        try:
            found.add(dataset_identity(read.root))
        except ValueError:
            continue
    return found


def _step_json(step: Step) -> dict[str, Any]:
    if step[0] == "dateAdd":
        return {"op": "dateAdd", "days": step[1]}
    if step[0] == "dateFormat":
        return {"op": "dateFormat", "pattern": step[1]}
    return {"op": step[0]}


def _leaf_scans(scans: Sequence[ScanFacts]) -> dict[int, list[tuple[int, ScanFacts]]]:
    """Each attribute id a scan outputs -> the scans (index, facts) that output it."""
    found: dict[int, list[tuple[int, ScanFacts]]] = {}
    for index, facts in enumerate(scans):
        for _, attribute in facts.attributes:
            found.setdefault(attribute, []).append((index, facts))
    return found


def _walk(node: Node, scans: dict[int, list[tuple[int, ScanFacts]]]) -> _Walked:
    _check_subqueries(node)
    kind = node.kind
    if not node.children:
        return _leaf(node, scans)
    children = [_walk(child, scans) for child in node.children]
    if kind == "Union":
        return _union(node, children)
    if kind == "Join":
        return _join(node, children[0], children[1])
    (child,) = children
    if kind == "Project":
        projected = [_expression(flat) for flat in node.fields["projectList"]]
        return _Walked(_projected(child.reach, projected, None), _named_ids(projected))
    if kind == "Aggregate":
        grouping = _attributes_of(node.fields["groupingExpressions"])
        outputs = [_expression(flat) for flat in node.fields["aggregateExpressions"]]
        return _Walked(_projected(child.reach, outputs, grouping), _named_ids(outputs))
    if kind == "Window":
        spec = _attributes_of(node.fields["partitionSpec"])
        windowed = [_expression(flat) for flat in node.fields["windowExpressions"]]
        reach = {
            scan: frozenset(key for key in keys if key[0] in spec)
            for scan, keys in child.reach.items()
        }
        added = _named_ids(windowed)
        output = None if child.output is None or added is None else (*child.output, *added)
        return _Walked(reach, output)
    if kind in _ROW_BY_ROW:
        return _Walked(child.reach, child.output if kind in _SAME_OUTPUT else None)
    # Limits, Expand (grouping sets), and whatever is not known: no key survives.
    kept_output = child.output if kind in _LIMITS else None
    return _Walked({scan: frozenset() for scan in child.reach}, kept_output)


def _leaf(node: Node, scans: dict[int, list[tuple[int, ScanFacts]]]) -> _Walked:
    attributes = [_expression(flat) for flat in node.fields.get("output") or ()]
    ids = tuple(_attribute(tree) for tree in attributes)
    placed = {index: facts for i in ids for index, facts in scans.get(i, ())}
    if not placed:
        if node.kind in _DATASET_FREE_LEAVES:
            return _Walked({}, ids or None)
        # A relation no scan of the action outputs (one Spark reused for another): it may read
        # any dataset, so no mapping of any dataset is proven.
        raise _Unproven(f"a {node.kind} that no scan of the action matches")
    reach: Reach = {}
    for index, facts in placed.items():
        by_name = dict(facts.attributes)
        reach[index] = frozenset(
            (by_name[column], column, ())
            for column in facts.partition_columns
            if column in by_name and by_name[column] in ids
        )
    return _Walked(reach, ids)


def _union(node: Node, children: list[_Walked]) -> _Walked:
    first = children[0].output
    if first is None or any(child.output is None for child in children):
        return _Walked({scan: frozenset() for c in children for scan in c.reach}, first)
    reach: Reach = {}
    for child in children:
        assert child.output is not None
        position = {attribute: at for at, attribute in enumerate(child.output)}
        for scan, keys in child.reach.items():
            moved = frozenset(
                (first[position[a]], col, steps) for a, col, steps in keys if a in position
            )
            reach[scan] = reach[scan] & moved if scan in reach else moved
    return _Walked(reach, first)


def _join(node: Node, left: _Walked, right: _Walked) -> _Walked:
    join_type = str((node.fields.get("joinType") or {}).get("object", "")).rsplit(".", 1)[-1]
    join_type = join_type.rstrip("$")
    if join_type not in _PRESERVING_JOINS:
        return _Walked({scan: frozenset() for scan in (*left.reach, *right.reach)}, None)
    keep_left, keep_right, across = _PRESERVING_JOINS[join_type]
    to_left, to_right = _equalities(node, set(left.output or ()), set(right.output or ()))
    reach: Reach = {}
    for side, kept, other_map, carried in (
        (left, keep_left, to_right, across in ("both", "right")),
        (right, keep_right, to_left, across in ("both", "left")),
    ):
        for scan, keys in side.reach.items():
            found = set(keys) if kept else set()
            if carried:
                found |= {(other_map[a], col, s) for a, col, s in keys if a in other_map}
            reach[scan] = frozenset(found)
    output = None
    if left.output is not None and right.output is not None:
        if join_type in ("LeftSemi", "LeftAnti"):
            output = left.output
        elif join_type != "ExistenceJoin":
            output = (*left.output, *right.output)
    return _Walked(reach, output)


def _equalities(
    node: Node, left_ids: set[int], right_ids: set[int]
) -> tuple[dict[int, int], dict[int, int]]:
    """The join condition's equalities of a left and a right column (``a.day = b.day``): for
    each right column the left one it equals, and the other way round."""
    to_left: dict[int, int] = {}
    to_right: dict[int, int] = {}
    condition = node.fields.get("condition")
    for conjunct in _conjuncts(decode(condition)) if condition else ():
        if conjunct.kind not in ("EqualTo", "EqualNullSafe"):
            continue
        one, other = conjunct.child("left"), conjunct.child("right")
        if one.kind != "AttributeReference" or other.kind != "AttributeReference":
            continue
        a, b = _attribute(one), _attribute(other)
        if a in right_ids and b in left_ids:
            a, b = b, a
        if a in left_ids and b in right_ids:
            to_left[b], to_right[a] = a, b
    return to_left, to_right


def _projected(reach: Reach, expressions: list[Node], grouping: set[int] | None) -> Reach:
    """Keys of a Project's (or an Aggregate's, ``grouping`` its grouping columns) output."""
    traced = []
    for tree in expressions:
        out = _named_id(tree)
        found = _trace(tree)
        if out is None or found is None:
            continue
        attribute, steps, _ = found
        if grouping is not None and attribute not in grouping:
            continue
        traced.append((out, attribute, steps))
    result: Reach = {}
    for scan, keys in reach.items():
        result[scan] = frozenset(
            (out, col, (*key_steps, *steps))
            for a, col, key_steps in keys
            if grouping is None or a in grouping
            for out, attribute, steps in traced
            if attribute == a
        )
    return result


def _trace(tree: Node) -> Traced | None:
    """(attribute id, steps, resulting type) of an expression that is a function the consumer
    can apply of one attribute; None for any other expression."""
    kind = tree.kind
    if kind == "AttributeReference":
        return _attribute(tree), (), tree.fields.get("dataType")
    if kind in ("Alias", "Empty2Null"):
        return _trace(tree.children[0])
    if kind == "Cast":
        return _cast(tree)
    if kind in ("DateAdd", "DateSub") or kind in _DATE_PARTS:
        return _date_function(tree)
    if kind == "DateFormatClass":
        return _date_format(tree)
    return None


def _date_function(tree: Node) -> Traced | None:
    """A date shifted by a constant number of days, or its year, month or day of month."""
    if tree.kind in _DATE_PARTS:
        inner = _trace(tree.children[0])
        if inner is None or inner[2] != "date":
            return None
        return inner[0], (*inner[1], (_DATE_PARTS[tree.kind],)), "integer"
    start, days = _operands(tree, ("startDate", "days"))
    inner = _trace(start)
    shift = _integer_literal(days)
    if inner is None or shift is None or inner[2] != "date":
        return None
    step = ("dateAdd", shift if tree.kind == "DateAdd" else -shift)
    return inner[0], (*inner[1], step), "date"


def _cast(tree: Node) -> Traced | None:
    """A cast after which a partition value reads the same (or, text to date, a date's ISO
    text: the consumer maps only values that are ISO dates)."""
    inner = _trace(tree.children[0])
    if inner is None:
        return None
    attribute, steps, source = inner
    target = tree.fields.get("dataType")
    if (source, target) in _SAME_TEXT_CASTS or source == target:
        return attribute, steps, target
    if source == "string" and target == "date":
        return attribute, (*steps, ("dateAdd", 0)), "date"
    return None


def _date_format(tree: Node) -> Traced | None:
    """``date_format(day, 'yyyy-MM')`` of a date: Spark casts the date to a timestamp (its
    midnight in the session's zone) and formats it in the same zone, the date's own text."""
    value, pattern = tree.children[0], tree.children[1]
    if value.kind != "Cast" or value.fields.get("dataType") != "timestamp":
        return None
    inner = _trace(value.children[0])
    text = _string_literal(pattern)
    if inner is None or inner[2] != "date" or text not in DATE_PATTERNS:
        return None
    return inner[0], (*inner[1], ("dateFormat", text)), "string"


def _operands(tree: Node, names: tuple[str, str]) -> tuple[Node, Node]:
    if all(name in tree.fields for name in names):
        return tree.child(names[0]), tree.child(names[1])
    return tree.children[0], tree.children[1]


def _integer_literal(tree: Node) -> int | None:
    if tree.kind != "Literal" or tree.fields.get("dataType") not in ("integer", "short", "byte"):
        return None
    try:
        return int(str(tree.fields.get("value")))
    except ValueError:
        return None


def _string_literal(tree: Node) -> str | None:
    if tree.kind != "Literal" or tree.fields.get("dataType") != "string":
        return None
    value = tree.fields.get("value")
    return value if isinstance(value, str) else None


def _conjuncts(tree: Node) -> Iterator[Node]:
    if tree.kind == "And":
        yield from _conjuncts(tree.child("left"))
        yield from _conjuncts(tree.child("right"))
    else:
        yield tree


def _check_subqueries(node: Node) -> None:
    for value in node.fields.values():
        for flat in _flat_lists(value):
            for entry in flat:
                kind = str(entry.get("class", "")).rsplit(".", 1)[-1]
                if kind not in _HARMLESS_SUBQUERIES and (
                    "Subquery" in kind or kind in ("Exists", "ListQuery", "OuterReference")
                ):
                    raise _Unproven(f"a {kind} in a {node.kind}")


def _flat_lists(value: Any) -> Iterable[list[dict[str, Any]]]:
    """The expressions a plan node's field holds, each a flat ``toJSON()`` list."""
    if isinstance(value, list) and value:
        if all(isinstance(item, dict) and "class" in item for item in value):
            yield value
        else:
            for item in value:
                yield from _flat_lists(item)


Flat = list[dict[str, Any]]
"""An expression as ``toJSON()`` writes it: its nodes in pre-order."""


def _expression(flat: Flat) -> Node:
    return decode(flat)


def _attributes_of(expressions: list[Flat]) -> set[int]:
    """The ids of the expressions that are plain columns (grouping keys, PARTITION BY)."""
    trees = map(_expression, expressions)
    return {_attribute(tree) for tree in trees if tree.kind == "AttributeReference"}


def _attribute(tree: Node) -> int:
    return int(tree.fields["exprId"]["id"])


def _named_id(tree: Node) -> int | None:
    if tree.kind in ("Alias", "AttributeReference"):
        return _attribute(tree)
    return None


def _named_ids(trees: list[Node]) -> tuple[int, ...] | None:
    ids = tuple(_named_id(tree) for tree in trees)
    return None if None in ids else ids  # type: ignore[return-value]
