"""The public API's types, checked by mypy --strict (``nox -s typecheck``), never run.

Each ``assert_type`` fails the type check when a public name loses its precise type (a return
of ``Any`` fails too: assert_type compares exactly). Each line ending in ``# type: ignore[...]``
is a call that must NOT type-check: mypy's ``warn_unused_ignores`` (part of --strict) fails the
check the day it does. ``tests/test_project.py`` checks that every name exported by
``openlineage_subset``, ``openlineage_subset.spark`` and ``openlineage_subset.lineage`` is named
here.
"""

from __future__ import annotations

import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any

import jsonschema
import referencing
from typing_extensions import assert_type

import openlineage_subset as ols
from openlineage_subset import (
    BaseEvent,
    BaseFacet,
    BaseSubsetCondition,
    BaseSubsetDatasetFacet,
    BinarySubsetCondition,
    CompareSubsetCondition,
    Comparison,
    Dataset,
    DatasetEvent,
    DatasetFacet,
    EventBase,
    EventType,
    FieldBaseCompareExpression,
    FieldRef,
    InputDataset,
    InputDatasetFacet,
    InputSubsetFacet,
    InputSubsetInputDatasetFacet,
    Job,
    JobEvent,
    JobFacet,
    JsonObject,
    JsonValue,
    LiteralCompareExpression,
    LocationSubsetCondition,
    OpenLineageEvent,
    Operator,
    OutputDataset,
    OutputDatasetFacet,
    OutputSubsetFacet,
    OutputSubsetOutputDatasetFacet,
    Partition,
    PartitionSubsetCondition,
    Run,
    RunEvent,
    RunFacet,
    SpecVersion,
    StaticDataset,
    SubsetCondition,
    SubsetDocumentError,
    SubsetFacetMap,
    UnknownSpecVersionWarning,
    ValidationIssue,
)
from openlineage_subset.delivery import Counts
from openlineage_subset.spark import (
    PRODUCER,
    CaptureHandle,
    LineageSettingsWarning,
    QueryExecution,
    SparkConnectNotSupportedError,
    SubsetConfig,
    TrimRules,
    enable,
    input_datasets,
    output_datasets,
)

if TYPE_CHECKING:  # typed by PySpark where the spark extra is installed, Any elsewhere
    from pyspark.sql import DataFrame, SparkSession

# -- builders: conditions that read like the condition -------------------------------------------

day = ols.field("day")
assert_type(day, FieldRef)
assert_type(day == "2024-10-15", CompareSubsetCondition)
assert_type(day != "2024-10-15", SubsetCondition)
assert_type(day >= "2024-10-15", CompareSubsetCondition)
assert_type(day < 3, CompareSubsetCondition)
assert_type(day.isin(["PL", "DE"]), SubsetCondition)
assert_type(day.between("2024-10-01", "2024-10-31"), SubsetCondition)
assert_type((ols.field("a") == 1) & (ols.field("b") == 2), SubsetCondition)
assert_type((ols.field("a") == 1) | (ols.field("b") == 2), SubsetCondition)
assert_type(ols.all_of([ols.field("a") == 1]), SubsetCondition)
assert_type(ols.any_of([ols.field("a") == 1]), SubsetCondition)
assert_type(ols.literal(3), LiteralCompareExpression)
assert_type(ols.location(["s3://bucket/a"]), LocationSubsetCondition)
assert_type(ols.partition({"day": "2024-10-15"}), Partition)
assert_type(ols.partitions([{"day": "2024-10-15"}]), PartitionSubsetCondition)
ols.field(3)  # type: ignore[arg-type]  # a column is named by a string
(ols.field("a") == 1) & "b = 2"  # type: ignore[operator]  # conditions combine with conditions

facet = ols.input_facet(ols.location(["s3://bucket/a"]), producer="https://example.com")
assert_type(facet, InputSubsetFacet)
assert_type(facet.input_condition, SubsetCondition)
assert_type(facet.schema_url, str)
assert_type(ols.output_facet(ols.field("a") == 1, producer="p"), OutputSubsetFacet)
ols.input_facet(ols.field("a") == 1, producer="p", note="why")
ols.input_facet(ols.field("a") == 1, "p")  # type: ignore[call-arg]  # producer: keyword-only
ols.input_facet(ols.field("a") == 1, producer="p", note={1})  # type: ignore[arg-type]  # JSON only

# -- parse, dump, validate, render, evaluate ------------------------------------------------------

assert_type(ols.parse_facet({}), InputSubsetFacet | OutputSubsetFacet)
assert_type(ols.parse_event({}), EventBase)
assert_type(ols.parse_event({}).event_time, str)
assert_type(ols.dump(facet), dict[str, JsonValue])
assert_type(ols.dump([facet]), list[JsonValue])
assert_type(ols.dump(EventType.START), JsonValue)
ols.dump(facet)["inputCondition"] + 1  # type: ignore[operator]  # a JSON value: check it first
assert_type(ols.validate({}, strict=True), list[ValidationIssue])
ols.validate({}, True)  # type: ignore[call-arg]  # strict is keyword-only
assert_type(ols.render(facet), str)
assert_type(ols.matches(facet, {"day": "2024-10-15"}), bool)
assert_type(ols.partition_overlap(facet, {"day": "2024-10-15"}), bool | None)
ols.matches(facet, {}, None, "s3://bucket/a/part-0")  # type: ignore[call-arg]  # keyword-only

issue = ValidationIssue("$.subset", "missing required property '_producer'")
assert_type(issue.path, str)
issue.path = "$"  # type: ignore[misc]  # issues are frozen
assert_type(SubsetDocumentError("bad", [issue]).issues, tuple[ValidationIssue, ...])
# One root for the package's errors and one for its warnings; the older bases are kept.
package_error: ols.OpenLineageSubsetError = SubsetDocumentError("bad", [issue])
value_error: ValueError = SubsetDocumentError("bad", [issue])
package_warning: type[ols.OpenLineageSubsetWarning] = UnknownSpecVersionWarning
not_ours: ols.OpenLineageSubsetError = KeyError("a user's")  # type: ignore[assignment]

# -- the custom facet olsubset_partitionMapping ---------------------------------------------------

mapping = {"field": "day", "input": {"namespace": "file", "name": "/lake/raw"}, "inputField": "day"}
assert_type(ols.PARTITION_MAPPING_FACET, str)
assert_type(ols.PARTITION_MAPPING_SCHEMA_URL, str)
mapped = ols.partition_mapping_facet([{**mapping, "steps": []}], producer="https://example.com")
assert_type(mapped, dict[str, JsonValue])
ols.partition_mapping_facet([mapping], "https://example.com")  # type: ignore[call-arg]  # keyword-only
assert_type(ols.partition_mapping_issues(mapped), list[str])
assert_type(ols.apply_steps("2024-10-02", [{"op": "dateAdd", "days": 1}]), str | None)
ols.apply_steps("2024-10-02", {"op": "year"})  # type: ignore[arg-type]  # a list of steps

# -- spec versions and the reference schemas ------------------------------------------------------

assert_type(ols.spec(), SpecVersion)
assert_type(ols.spec("1-0-0").models, ModuleType)
assert_type(ols.spec().facet_def_url("InputSubsetInputDatasetFacet"), str)
assert_type(ols.spec_versions(), tuple[str, ...])
ols.spec_versions().append("2-0-0")  # type: ignore[attr-defined]  # a tuple
assert_type(ols.schema_registry(), referencing.Registry[Any])
assert_type(
    ols.reference_validator("InputSubsetInputDatasetFacet"), jsonschema.Draft202012Validator
)
warnings.simplefilter("error", UnknownSpecVersionWarning)
assert_type(ols.__version__, str)

# -- the models of the newest spec version --------------------------------------------------------

where = LocationSubsetCondition(locations=["s3://bucket/a"])
assert_type(where.locations, list[str])
LocationSubsetCondition(["s3://bucket/a"])  # type: ignore[call-arg, arg-type]  # keyword-only
assert_type(
    PartitionSubsetCondition(partitions=[Partition(dimensions={})]).partitions, list[Partition]
)
compare = CompareSubsetCondition(
    left=FieldBaseCompareExpression(field="day"),
    right=LiteralCompareExpression(value="2024-10-15"),
    comparison=Comparison.EQUAL,
)
assert_type(compare.comparison, Comparison | str)
binary = BinarySubsetCondition(left=where, right=compare, operator=Operator.AND)
assert_type(binary.left, BaseSubsetCondition)
assert_type(InputSubsetInputDatasetFacet.SCHEMA_URL, str)
assert_type(OutputSubsetOutputDatasetFacet.SCHEMA_URL, str)
assert_type(SubsetFacetMap.SCHEMA_URL, str)
assert_type(BaseFacet.SCHEMA_URL, str)
for facet_class in (RunFacet, JobFacet, DatasetFacet, InputDatasetFacet, OutputDatasetFacet):
    assert_type(facet_class.SCHEMA_URL, str)
run_event = RunEvent(
    event_time="2024-10-15T10:00:00Z",
    producer="https://example.com",
    schema_url="https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    run=Run(run_id="0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11"),
    job=Job(namespace="demo", name="daily"),
    event_type=EventType.COMPLETE,
    inputs=[InputDataset(namespace="s3://lake", name="sales")],
    outputs=[OutputDataset(namespace="s3://lake", name="daily")],
)
assert_type(run_event.inputs, list[InputDataset] | None)
assert_type(run_event.run.run_id, str)
assert_type(JobEvent.SCHEMA_URL, str)
assert_type(DatasetEvent.SCHEMA_URL, str)
assert_type(BaseEvent.SCHEMA_URL, str)
assert_type(StaticDataset(namespace="s3://lake", name="sales").name, str)
assert_type(Dataset.SCHEMA_URL, str)
assert_type(isinstance(where, JsonObject), bool)
assert_type(isinstance(facet, OutputSubsetFacet), bool)


def _facet_role(facet: BaseSubsetDatasetFacet) -> str:
    """The union aliases of the schema's oneOf definitions type a value of any branch."""
    if isinstance(facet, InputSubsetInputDatasetFacet):
        return "input"
    assert_type(facet, OutputSubsetOutputDatasetFacet)
    return "output"


def _event_kind(event: OpenLineageEvent) -> str:
    if isinstance(event, RunEvent):
        return "run"
    assert_type(event, DatasetEvent | JobEvent)
    return "dataset" if isinstance(event, DatasetEvent) else "job"


# -- openlineage_subset.lineage: partition lineage from events ------------------------------------


def _lineage_types(spark: Any) -> None:
    from openlineage_subset.lineage import (
        APPLICATION_ID,
        SCHEMA_VERSION,
        AffectedRun,
        AnswerTooLarge,
        ArchiveProblems,
        DatasetPartitions,
        DatasetRef,
        Dimensions,
        EventArchive,
        HistoryEntry,
        HistoryQuery,
        HistoryReport,
        ImpactQuery,
        ImpactReport,
        IngestProblem,
        IngestReport,
        JobUse,
        Label,
        Lineage,
        LineageDatabaseError,
        LineageQueryError,
        LineageStore,
        OrchestratorTask,
        PartitionRef,
        PartitionSet,
        PartitionsQuery,
        PartitionsReport,
        PartitionState,
        PictureSource,
        ProvenanceInput,
        ProvenanceQuery,
        ProvenanceReport,
        ProvenanceStep,
        PruneReport,
        RunRef,
        RunsQuery,
        TaskRerun,
        Touched,
        Unit,
        UnknownPartitionColumnError,
        dataset_partitions,
        history,
        impact,
        ingest,
        part_heading,
        partition_overlap,
        picture_source,
        provenance,
        prune,
        shown_time,
        unseen_note,
    )
    from openlineage_subset.report import report_html

    report = ingest(["events.jsonl"], "lineage.db", jobs=2)
    assert_type(report, IngestReport)
    assert_type(report.problems, list[IngestProblem])
    assert_type(report.problems[0].line, int | None)
    ingest(["events.jsonl"], "lineage.db", 2)  # type: ignore[call-arg, arg-type]  # keyword-only

    store = LineageStore.open("lineage.db", create=True)
    assert_type(store, LineageStore)
    answer = impact(store, "lake/sales", partition={"day": "2024-10-15"}, depth=2)
    assert_type(answer, ImpactReport)
    assert_type(answer.runs, tuple[AffectedRun, ...])
    assert_type(answer.runs[0].label, Label)
    assert_type(answer.runs[0].run, RunRef)
    assert_type(answer.backfill, tuple[PartitionSet, ...])
    assert_type(answer.tasks, tuple[TaskRerun, ...])
    assert_type(answer.tasks[0].task, OrchestratorTask | None)
    assert_type(answer.tasks[0].command, str | None)
    assert_type(answer.start.dataset, DatasetRef)
    assert_type(answer.start.definite, tuple[PartitionRef, ...])
    impact("lineage.db", "lake/sales", {"day": "2024-10-15"})  # type: ignore[call-arg]  # keywords
    impact("lineage.db", "lake/sales", depth="2")  # type: ignore[arg-type]  # a number of hops

    origin = provenance("lineage.db", "lake/daily", partition={"day": "2024-10-15"})
    assert_type(origin, ProvenanceReport)
    assert_type(origin.writers, tuple[ProvenanceStep, ...])
    assert_type(origin.writers[0].inputs, tuple[ProvenanceInput, ...])
    assert_type(history("lineage.db", "lake/sales"), HistoryReport)
    assert_type(history("lineage.db", "lake/sales").entries, tuple[HistoryEntry, ...])
    assert_type(dataset_partitions("lineage.db", "lake/sales"), PartitionsReport)
    assert_type(
        dataset_partitions("lineage.db", "lake/sales").partitions, tuple[PartitionState, ...]
    )
    assert_type(report_html("lineage.db", "lake/sales", provenance=True), str)
    pruned = prune("lineage.db", "2024-01-01", vacuum=False)
    assert_type(pruned, PruneReport)
    assert_type(pruned.runs, int)
    prune("lineage.db", "2024-01-01", False)  # type: ignore[call-arg]  # vacuum is keyword-only
    with picture_source(store) as source:
        assert_type(source, PictureSource)
        known = source.partitions(answer.start.dataset)
        assert_type(known, DatasetPartitions)
        assert_type(known.known, tuple[Dimensions, ...])
        assert_type(source.reads(answer.runs[0].run), tuple[Touched, ...])
        assert_type(source.writes(answer.runs[0].run, "definite")[0].units[0][0], Unit)
        assert_type(source.job_uses(), tuple[JobUse, ...])
    assert_type(part_heading(answer.start), str)
    assert_type(unseen_note(answer.start), str)
    assert_type(shown_time(answer.runs[0].run.started_at), str)
    assert_type(partition_overlap(ols.field("day") == "x", {"day": "x"}), bool | None)
    assert_type(answer.as_json(), dict[str, Any])

    archive = EventArchive(spark, "s3://bucket/events/")
    assert_type(archive.impact("lake/sales"), ImpactReport)
    assert_type(archive.provenance("lake/sales"), ProvenanceReport)
    assert_type(archive.problems, ArchiveProblems)
    assert_type(APPLICATION_ID, int)
    assert_type(SCHEMA_VERSION, int)
    assert_type(LineageDatabaseError("not ours"), LineageDatabaseError)
    assert_type(LineageQueryError("no such dataset"), LineageQueryError)
    too_large: LineageQueryError = AnswerTooLarge("the impact of the whole of lake/sales ...")
    assert_type(too_large, LineageQueryError)
    assert_type(answer.seen, bool)
    assert_type(origin.seen, bool)
    assert_type(history("lineage.db", "lake/sales").seen, bool)
    typo = UnknownPartitionColumnError(DatasetRef("file", "/lake"), ("dayy",), ("day",))
    assert_type(typo, UnknownPartitionColumnError)
    assert_type(typo.columns, tuple[str, ...])
    assert_type(typo.closest, dict[str, str])
    assert_type(typo.dataset, DatasetRef)
    UnknownPartitionColumnError("dayy")  # type: ignore[arg-type, call-arg]  # built from facts

    with Lineage("lineage.db") as lineage:
        asked = ImpactQuery("lake/sales", partition={"day": "2024-10-15"}, depth=2)
        assert_type(lineage.impact(asked), ImpactReport)
        assert_type(lineage.impact(ImpactQuery.from_text("sales", ["day=x"])), ImpactReport)
        assert_type(lineage.provenance(ProvenanceQuery("lake/daily")), ProvenanceReport)
        assert_type(lineage.history(HistoryQuery("lake/sales")), HistoryReport)
        assert_type(lineage.partitions(PartitionsQuery("lake/sales")), PartitionsReport)
        assert_type(lineage.runs(RunsQuery(job="daily", limit=10)).total, int)
        assert_type(lineage.store, LineageStore)
        lineage.impact("lake/sales")  # type: ignore[arg-type]  # a query, not a name
    with Lineage("lineage.db", most_accesses=200_000) as bounded:  # more: AnswerTooLarge
        assert_type(bounded.most_accesses, int | None)
    Lineage("lineage.db", 200_000)  # type: ignore[call-arg]  # keyword only


# -- openlineage_subset.report: an answer drawn as HTML and SVG ----------------------------------


def _report_types() -> None:
    from openlineage_subset.lineage import DatasetRef
    from openlineage_subset.producer import NULL_PARTITION
    from openlineage_subset.report import (
        GRID_STYLE,
        STYLE,
        CellState,
        Grid,
        GridCell,
        Picture,
        arranged,
        attribute,
        body,
        grid_html,
        impact_picture,
        legend_html,
        marked,
        page,
        provenance_picture,
        report_html,
        report_picture,
        text,
    )

    assert_type(report_html("lineage.db"), str)
    picture = report_picture("lineage.db", "lake/sales", partition={"day": "2024-10-15"})
    assert_type(picture, Picture)
    assert_type(impact_picture("lineage.db", "lake/sales", since="2024-10-01"), Picture)
    assert_type(provenance_picture("lineage.db", "lake/sales", depth=2), Picture)
    assert_type(picture.grids, tuple[Grid, ...])
    assert_type(page(picture, source="lineage.db"), str)
    assert_type(body(picture), str)
    assert_type(STYLE, str)
    report_picture("lineage.db", "lake/sales", True)  # type: ignore[call-arg]  # keyword-only
    state: CellState = "affected"
    cells: dict[tuple[tuple[str, str | None], ...], GridCell] = {
        (("day", "2024-10-15"),): GridCell(state, ("written by run 1",))
    }
    grid = arranged(DatasetRef("file", "/lake/sales"), cells, ["day"])
    assert_type(grid, Grid)
    assert_type(grid_html(grid, [NULL_PARTITION], heading=False), str)
    assert_type(legend_html("impact") + GRID_STYLE, str)
    assert_type(text("name\u202e", limit=20) + attribute("name") + marked([("a", False)]), str)


# -- openlineage_subset.spark: capture from Spark's plans -----------------------------------------


def _spark_types(spark: SparkSession, df: DataFrame, query_execution: QueryExecution) -> None:
    config = SubsetConfig(max_partitions=100, redact_columns={"customer_id"})
    assert_type(config.max_partitions, int)
    assert_type(config.trim_rules, TrimRules)
    SubsetConfig(100)  # type: ignore[call-arg]  # every option is a keyword
    TrimRules(False)  # type: ignore[call-arg]  # four booleans: keywords only
    assert_type(TrimRules(dates=False).extra_patterns, tuple[str, ...])

    assert_type(input_datasets(df), list[InputDataset])
    assert_type(input_datasets(query_execution, config), list[InputDataset])
    assert_type(output_datasets(query_execution, started_ms=0), list[OutputDataset])
    output_datasets(query_execution, config, 0)  # type: ignore[call-arg]  # started_ms: keyword
    output_datasets(query_execution, started_ms="0")  # type: ignore[arg-type]  # epoch ms

    handle = enable(spark, namespace="analytics", config=config)
    assert_type(handle, CaptureHandle)
    assert_type(handle.counts, Counts)
    assert_type(handle.counts["errors"], int)
    assert_type(handle.counts.in_outbox, int)
    assert_type(handle.config, SubsetConfig)
    assert_type(handle.closed, bool)
    assert_type(handle.flush(timeout=5), bool)
    assert_type(handle.close(error=RuntimeError("no input")), bool)
    enable(spark, max_partitions=100)  # type: ignore[call-arg]  # options go in a SubsetConfig
    enable(spark, "analytics")  # type: ignore[call-arg]  # settings are keywords
    CaptureHandle(  # type: ignore[call-arg]  # capture's own state is not an argument
        spark, handle.emitter, handle.application, config, "analytics", closed=True
    )
    assert_type(PRODUCER, str)
    assert_type(SparkConnectNotSupportedError("a Connect session"), SparkConnectNotSupportedError)
    assert_type(issubclass(LineageSettingsWarning, UserWarning), bool)
