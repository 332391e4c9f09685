"""Partition mappings from plans, without a JVM: each rule of ``spark/_mappings.py`` on small
hand-made plans in Spark's ``toJSON()`` form (the oracle test in tests/spark checks the rules
against what Spark computes, on plans Spark makes)."""

from __future__ import annotations

import dataclasses
from typing import Any

from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._facts import ScanFacts, WriteFacts
from openlineage_subset.spark._mappings import partition_mappings
from openlineage_subset.spark._trees import decode

Flat = list[dict[str, Any]]
P = "org.apache.spark.sql.catalyst.plans.logical."
E = "org.apache.spark.sql.catalyst.expressions."


def attr(name: str, at: int, kind: str = "date") -> Flat:
    return [{"class": E + "AttributeReference", "num-children": 0, "name": name,
             "dataType": kind, "exprId": {"id": at}}]  # fmt: skip


def alias(name: str, at: int, child: Flat) -> Flat:
    return [{"class": E + "Alias", "num-children": 1, "child": 0, "name": name,
             "exprId": {"id": at}}, *child]  # fmt: skip


def call(kind: str, *children: Flat, **fields: Any) -> Flat:
    names = ["left", "right"] if len(children) == 2 else ["child"]
    node = {"class": E + kind, "num-children": len(children), **fields}
    node.update({name: index for index, name in enumerate(names[: len(children)])})
    return [node, *(item for child in children for item in child)]


def literal(value: Any, kind: str) -> Flat:
    return [{"class": E + "Literal", "num-children": 0, "value": str(value), "dataType": kind}]


def plan(kind: str, *children: Flat, **fields: Any) -> Flat:
    node: dict[str, Any] = {"class": P + kind, "num-children": len(children), **fields}
    if len(children) == 1:
        node["child"] = 0
    elif len(children) == 2 and kind == "Join":
        node.update(left=0, right=1)
    else:
        node["children"] = list(range(len(children)))
    return [node, *(item for child in children for item in child)]


def relation(*columns: Flat) -> Flat:
    return [{"class": "org.apache.spark.sql.execution.datasources.LogicalRelation",
             "num-children": 0, "output": list(columns)}]  # fmt: skip


def scan(path: str, *attributes: tuple[str, int]) -> ScanFacts:
    return ScanFacts(
        source="FileSourceScanExec",
        format="parquet",
        root_paths=(f"file:{path}",),
        partition_columns=tuple(name for name, _ in attributes),
        attributes=attributes,
    )


RAW = scan("/lake/raw", ("day", 1), ("region", 2))
DIM = scan("/lake/dim", ("day", 11))
RAW_RELATION = relation(attr("amount", 0, "integer"), attr("day", 1), attr("region", 2, "string"))
DIM_RELATION = relation(attr("weight", 10, "integer"), attr("day", 11))


def mappings(
    query: Flat, *columns: tuple[str, int], scans: tuple[ScanFacts, ...] = (RAW, DIM)
) -> set[Any]:
    write = WriteFacts(
        command="InsertIntoHadoopFsRelationCommand",
        root="file:/lake/out",
        table=None,
        partition_columns=tuple(name for name, _ in columns),
        static_partitions={},
        files=None,
        num_files=None,
        num_parts=None,
        query=decode(query),
        partition_ids=tuple(at for _, at in columns),
    )
    return {
        (m["field"], m["input"]["name"], m["inputField"], repr(m["steps"]))
        for m in partition_mappings(write, scans, SubsetConfig())
    }


def test_a_shifted_day_grouped_on() -> None:
    shifted = alias(
        "next", 5, call("DateAdd", attr("day", 1), literal(1, "integer"), startDate=0, days=1)
    )
    query = plan(
        "Aggregate",
        plan("Filter", RAW_RELATION, condition=call("IsNotNull", attr("amount", 0, "integer"))),
        groupingExpressions=[attr("day", 1)],
        aggregateExpressions=[
            shifted,
            alias("total", 6, call("Sum", attr("amount", 0, "integer"))),
        ],
    )
    assert mappings(query, ("next", 5)) == {
        ("next", "/lake/raw", "day", "[{'op': 'dateAdd', 'days': 1}]")
    }


def test_an_aggregate_over_days_maps_nothing() -> None:
    latest = alias("day", 5, call("Max", attr("day", 1)))
    query = plan(
        "Aggregate",
        RAW_RELATION,
        groupingExpressions=[attr("region", 2, "string")],
        aggregateExpressions=[latest],
    )
    assert mappings(query, ("day", 5)) == set()


def _join(join_type: str) -> Flat:
    on_day = call("EqualTo", attr("day", 1), attr("day", 11))
    joined = plan("Join", RAW_RELATION, DIM_RELATION,
                  joinType={"object": f"org.apache.spark.sql.catalyst.plans.{join_type}$"},
                  condition=on_day)  # fmt: skip
    return plan("Project", joined, projectList=[attr("day", 1), attr("day", 11)])


def test_an_inner_join_on_the_day_maps_both_sides_through_either_column() -> None:
    both = {("day", "/lake/raw", "day", "[]"), ("day", "/lake/dim", "day", "[]")}
    assert mappings(_join("Inner"), ("day", 1)) == both
    assert mappings(_join("Inner"), ("day", 11)) == both


def test_an_outer_join_maps_the_null_side_only_through_the_preserved_column() -> None:
    assert mappings(_join("LeftOuter"), ("day", 1)) == {
        ("day", "/lake/raw", "day", "[]"),
        ("day", "/lake/dim", "day", "[]"),
    }
    # dim's own column is null where no dim row matched: raw is not mapped through it, and
    # dim's mapping through it would be claimed by rows dim never had
    assert mappings(_join("LeftOuter"), ("day", 11)) == set()
    assert mappings(_join("FullOuter"), ("day", 1)) == set()


def test_a_window_maps_only_what_it_partitions_by() -> None:
    def window(spec: Flat) -> Flat:
        total = alias("total", 7, call("WindowExpression", attr("amount", 0, "integer")))
        return plan(
            "Window", RAW_RELATION, windowExpressions=[total], partitionSpec=[spec], orderSpec=[]
        )

    assert mappings(window(attr("day", 1)), ("day", 1), ("region", 2)) == {
        ("day", "/lake/raw", "day", "[]")
    }
    assert mappings(window(attr("region", 2, "string")), ("day", 1), ("region", 2)) == {
        ("region", "/lake/raw", "region", "[]")
    }


def test_a_union_maps_what_every_branch_maps_alike() -> None:
    def branch(day: Flat) -> Flat:
        return plan("Project", relation(attr("day", 21)), projectList=[alias("d", 22, day)])

    same = plan(
        "Union",
        plan("Project", RAW_RELATION, projectList=[attr("day", 1)]),
        branch(attr("day", 21)),
    )
    shifted_branch = call("DateAdd", attr("day", 21), literal(1, "integer"), startDate=0, days=1)
    shifted = plan(
        "Union", plan("Project", RAW_RELATION, projectList=[attr("day", 1)]), branch(shifted_branch)
    )
    other = scan("/lake/raw", ("day", 21))
    assert mappings(same, ("day", 1), scans=(RAW, other)) == {("day", "/lake/raw", "day", "[]")}
    assert mappings(shifted, ("day", 1), scans=(RAW, other)) == set()


def test_what_may_tie_rows_together_maps_nothing() -> None:
    scalar = call("GreaterThan", attr("amount", 0, "integer"), call("ScalarSubquery"))
    with_subquery = plan("Filter", RAW_RELATION, condition=scalar)
    limited = plan(
        "GlobalLimit",
        plan("LocalLimit", RAW_RELATION, limitExpr=literal(5, "integer")),
        limitExpr=literal(5, "integer"),
    )
    assert mappings(with_subquery, ("day", 1)) == set()
    assert mappings(limited, ("day", 1)) == set()


def test_a_relation_no_scan_matches_maps_nothing() -> None:
    """A relation Spark read through a reused exchange: its scan is not among the action's,
    and it may be a copy of any dataset, raw included."""
    reused = relation(attr("amount", 30, "integer"), attr("day", 31))
    joined = plan("Join", RAW_RELATION, reused, joinType={"object": "x.Inner$"}, condition=None)
    assert mappings(plan("Project", joined, projectList=[attr("day", 1)]), ("day", 1)) == set()


def test_a_dataset_read_twice_is_mapped_only_if_both_reads_reach_the_column() -> None:
    """raw's second scan (another read in the same action, not under the written query)."""
    query = plan("Project", RAW_RELATION, projectList=[attr("day", 1)])
    elsewhere = scan("/lake/raw", ("day", 40))
    assert mappings(query, ("day", 1), scans=(RAW, elsewhere)) == set()
    assert mappings(query, ("day", 1), scans=(RAW,)) == {("day", "/lake/raw", "day", "[]")}


def test_a_plan_of_an_unknown_shape_maps_nothing_and_raises_nothing() -> None:
    broken = plan(
        "Project",
        RAW_RELATION,
        projectList=[[{"class": E + "Alias", "num-children": 1, "child": 0}, *attr("day", 1)]],
    )
    assert mappings(broken, ("day", 1)) == set()


def test_a_write_s_output_carries_its_facet_and_a_failed_one_none() -> None:
    from openlineage_subset import PARTITION_MAPPING_FACET, dump, partition_mapping_issues
    from openlineage_subset.spark._writes import output_datasets_from_writes

    uuid = "0f0e0d0c-0b0a-4909-8807-060504030201"
    write = WriteFacts(
        command="InsertIntoHadoopFsRelationCommand",
        root="file:/lake/out",
        table=None,
        partition_columns=("day",),
        static_partitions={},
        files=((f"file:/lake/out/day=2024-11-02/part-00000-{uuid}.c000.parquet", 10_000),),
        num_files=1,
        num_parts=1,
        query=decode(plan("Project", RAW_RELATION, projectList=[attr("day", 1)])),
        partition_ids=(1,),
    )
    (done,) = output_datasets_from_writes([write], 5_000, SubsetConfig(), scans=(RAW,))
    facet = dump(done)["outputFacets"][PARTITION_MAPPING_FACET]
    assert partition_mapping_issues(facet) == []
    assert [(m["field"], m["input"]["name"]) for m in facet["mappings"]] == [("day", "/lake/raw")]
    (failed,) = output_datasets_from_writes(
        [write], 5_000, SubsetConfig(), scans=(RAW,), failed=True
    )
    assert PARTITION_MAPPING_FACET not in (dump(failed).get("outputFacets") or {})
    # ids that do not line up with the columns: no mapping, the output still there
    odd = dataclasses.replace(write, partition_ids=())
    (kept,) = output_datasets_from_writes([odd], 5_000, SubsetConfig(), scans=(RAW,))
    assert PARTITION_MAPPING_FACET not in dump(kept)["outputFacets"]
    assert "subset" in dump(kept)["outputFacets"]
