"""The public API's types, checked by mypy (``nox -s typecheck``), never run.

Each ``assert_type`` fails the type check when a public function loses its precise type (a
return of ``Any`` fails too: assert_type compares exactly).
"""

from __future__ import annotations

from typing_extensions import assert_type

import openlineage_subset as ols
from openlineage_subset import (
    CompareSubsetCondition,
    EventBase,
    InputDataset,
    InputSubsetFacet,
    LiteralCompareExpression,
    LocationSubsetCondition,
    OutputDataset,
    OutputSubsetFacet,
    Partition,
    PartitionSubsetCondition,
    SubsetCondition,
    ValidationIssue,
)
from openlineage_subset.lineage import ImpactReport, impact
from openlineage_subset.spark import input_datasets, output_datasets

assert_type(ols.field("day") == "2024-10-15", CompareSubsetCondition)
assert_type(ols.field("day") >= "2024-10-15", CompareSubsetCondition)
assert_type(ols.field("country").isin(["PL", "DE"]), SubsetCondition)
assert_type((ols.field("a") == 1) & (ols.field("b") == 2), SubsetCondition)
assert_type(ols.all_of([ols.field("a") == 1]), SubsetCondition)
assert_type(ols.literal(3), LiteralCompareExpression)
assert_type(ols.location(["s3://bucket/a"]), LocationSubsetCondition)
assert_type(ols.partition({"day": "2024-10-15"}), Partition)
assert_type(ols.partitions([{"day": "2024-10-15"}]), PartitionSubsetCondition)

facet = ols.input_facet(ols.location(["s3://bucket/a"]), producer="https://example.com")
assert_type(facet, InputSubsetFacet)
assert_type(facet.input_condition, SubsetCondition)
assert_type(facet.schema_url, str)
assert_type(ols.output_facet(ols.field("a") == 1, producer="p"), OutputSubsetFacet)
assert_type(ols.parse_facet({}), InputSubsetFacet | OutputSubsetFacet)
assert_type(ols.parse_event({}), EventBase)
assert_type(ols.parse_event({}).event_time, str)
assert_type(ols.validate({}, strict=True), list[ValidationIssue])
ols.validate({}, True)  # type: ignore[call-arg]  # strict is keyword-only

assert_type(input_datasets(object()), list[InputDataset])
assert_type(output_datasets(object()), list[OutputDataset])
assert_type(impact("lineage.db", "lake/sales"), ImpactReport)
