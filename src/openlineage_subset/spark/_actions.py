"""One SQL action's run: what the action read and changed, then the events that say so.

Two steps, with a frozen :class:`ActionFacts` handed from the first to the second:

- :func:`read_action` reads the action's query once, through the JVM layer: its inputs (the
  scans of its executed plan, with their subsets), the outputs its writes created, and the
  datasets a statement changed otherwise. Each of the three is read apart: one failing is
  counted and logged, and the run keeps the others. A failed action whose plan was never made
  (its analysis or planning failed) read and wrote nothing: it has no inputs and no outputs,
  and its job is named by the datasets its query names. Where whether the plan was made is
  unknown, those datasets are its inputs, without subsets (it may have read any of them).
- :func:`action_events` builds its START (dated when the action started) and COMPLETE or FAIL
  from those facts and the run it is a child of: pure Python, no JVM.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from openlineage_subset import dump
from openlineage_subset.producer import (
    JobRef,
    engine_facet,
    error_facet,
    job_name,
    parent_facet,
    run_event,
    timestamp,
)
from openlineage_subset.spark._changes import ChangedDatasets, datasets_of_changes
from openlineage_subset.spark._context import CaptureContext
from openlineage_subset.spark._handles import QueryExecution
from openlineage_subset.spark._jvm import (
    ANALYSIS_FAILED,
    CHANGE_ROOTS,
    V2_WRITE_ROOTS,
    PlanFacts,
    change_facts,
    executed_plan_made,
    java_error_text,
    named_relations,
    plan_facts,
    sink_facts,
    v2_write_facts,
    write_facts,
)
from openlineage_subset.spark._reads import (
    batch_file_scan,
    input_datasets_from_scans,
    stream_source_datasets,
)
from openlineage_subset.spark._writes import output_datasets_from_writes, sink_output_datasets

STATEMENT_ROOTS = CHANGE_ROOTS | V2_WRITE_ROOTS
"""Plan roots of the statements that change a dataset other than by a file write."""


@dataclass(frozen=True, kw_only=True)
class ActionFacts:
    """What one action read and changed, and when: everything its events say but the run
    they belong to.

    Example (an action that failed after reading ``/lake/sales``)::

        ActionFacts(action="count", inputs=({"namespace": "file", "name": "/lake/sales"},),
                    outputs=(), started_ns=t0, ended_ns=t1, error=("Job aborted", None))
    """

    action: str
    """What Spark called the action (``count``, ``save``...), or what the statement did
    (``create_table``...) when one changed a dataset."""
    inputs: tuple[dict[str, Any], ...]
    """The datasets read, as OpenLineage JSON (with their subset facets)."""
    outputs: tuple[dict[str, Any], ...]
    """The datasets written or changed, as OpenLineage JSON (with their output facets)."""
    started_ns: int
    ended_ns: int
    named: tuple[dict[str, Any], ...] = ()
    """The datasets the query of an action that failed before it ran names (``namespace``,
    ``name``): read by nothing, so not inputs; they name its job."""
    error: tuple[str, str | None] | None = None
    """The message and stack trace of a failed action's exception, as the JVM prints them
    (None when it succeeded). They may quote a location with its credentials: they go out only
    through :func:`~openlineage_subset.producer._events.error_facet`, which scrubs both."""


def read_action(
    context: CaptureContext,
    func_name: str,
    query_execution: QueryExecution,
    *,
    started_ns: int,
    ended_ns: int,
    failure: object,
    in_batch: bool = False,
) -> ActionFacts | None:
    """What the action of ``query_execution`` read and changed (``failure``: the exception of a
    failed action, else None); None when it succeeded and read and changed no dataset (a failed
    action is always a run: its failure is what its user looks for). ``in_batch``: it ran in a
    stream's micro-batch, whose DataFrame it read as the files of that batch."""
    error = None if failure is None else java_error_text(failure)
    made = None if failure is None else _plan_made(context, func_name, query_execution)
    if failure is not None and made is not True:
        named = tuple(_named_inputs(context, func_name, query_execution))
        return ActionFacts(
            action=func_name,
            # never run: no reader of what it names (unknown: it may have read any of them)
            inputs=() if made is False else named,
            outputs=(),
            named=named,
            started_ns=started_ns,
            ended_ns=ended_ns,
            error=error,
        )
    started_ms = started_ns // 1_000_000
    plan = _walked(context, func_name, query_execution)
    if plan is not None and in_batch:
        plan = replace(plan, scans=tuple(batch_file_scan(scan) for scan in plan.scans))
    inputs = _inputs(context, func_name, plan)
    outputs = _outputs(
        context, func_name, query_execution, plan, started_ms=started_ms, failed=failure is not None
    )
    action = func_name
    if failure is None and (plan is None or plan.root_class in STATEMENT_ROOTS):
        for change in _changes(context, func_name, query_execution, plan, started_ms):
            inputs += change.inputs
            outputs += change.outputs
            action = change.action or action
    if not inputs and not outputs and failure is None:
        return None
    return ActionFacts(
        action=action,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        started_ns=started_ns,
        ended_ns=ended_ns,
        error=error,
    )


def read_batch(
    context: CaptureContext,
    query_execution: QueryExecution,
    batch_id: int,
    *,
    started_ns: int,
    ended_ns: int,
    failure: object,
) -> ActionFacts:
    """What one micro-batch of a stream read (the scans of its executed plan: a file source's
    batch is a scan of exactly the files it took) and wrote (its sink: a file sink's record of
    the batch names the files it committed). A sink that is no dataset of its own
    (``foreachBatch``, whose actions are runs of their own, memory, console) is no output;
    one whose datasets are not known to capture (Kafka...) is said once."""
    error = None if failure is None else java_error_text(failure)
    name = "a stream's micro-batch"
    plan = None
    if failure is None or _plan_made(context, name, query_execution):
        plan = _walked(context, name, query_execution)
    inputs = _inputs(context, name, plan)
    if plan is not None and plan.streams:
        inputs += context.guarded(
            "reading the streaming sources of",
            name,
            lambda: [
                dump(d)
                for d in stream_source_datasets(
                    plan.streams, context.config, context.report_degraded
                )
            ],
        )
    sinks = context.guarded(
        "reading the sink of", name, lambda: [sink_facts(query_execution, batch_id)]
    )
    outputs: list[dict[str, Any]] = []
    if sinks:
        sink = sinks[0]
        if sink.path is not None and sink.files is None and failure is None:
            context.report_degraded(sink.path, f"written whole: {sink.problem}")
        elif sink.path is None and sink.kind not in _NO_OUTPUT_SINKS:
            context.report_degraded(
                f"(a stream's {sink.kind})",
                "its batches' output is not named: capture knows no dataset of it",
            )
        outputs = context.guarded(
            "reading the outputs of",
            name,
            lambda: [
                dump(d)
                for d in sink_output_datasets(sink, context.config, failed=failure is not None)
            ],
        )
    return ActionFacts(
        action=name,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        started_ns=started_ns,
        ended_ns=ended_ns,
        error=error,
    )


_NO_OUTPUT_SINKS = frozenset({"ForeachBatchSink"})
"""Sinks whose batches write nothing themselves: ``foreachBatch``'s actions are runs of their
own, children of the batch."""


def _walked(
    context: CaptureContext, func_name: str, query_execution: QueryExecution
) -> PlanFacts | None:
    """One walk of the executed plan: its scans and write commands (None: it failed, which is
    counted and logged)."""
    walked = context.guarded(
        "reading the plan of", func_name, lambda: [plan_facts(query_execution, executed=True)]
    )
    return walked[0] if walked else None


def _inputs(
    context: CaptureContext, func_name: str, plan: PlanFacts | None
) -> list[dict[str, Any]]:
    """The datasets the scans of the action's executed plan read, with their subsets."""
    return context.guarded(
        "reading the inputs of",
        func_name,
        lambda: [
            dump(d)
            for d in input_datasets_from_scans(
                plan.scans if plan else (), context.config, report=context.report_degraded
            )
        ],
    )


def _outputs(
    context: CaptureContext,
    func_name: str,
    query_execution: QueryExecution,
    plan: PlanFacts | None,
    *,
    started_ms: int,
    failed: bool,
) -> list[dict[str, Any]]:
    """The datasets the action's write commands wrote (or, ``failed``, may have changed)."""
    # What a failed write left behind is not what it meant to write: no listing; its outputs
    # say what it may have changed (see output_datasets_from_writes).
    return context.guarded(
        "reading the outputs of",
        func_name,
        lambda: [
            dump(d)
            for d in output_datasets_from_writes(
                write_facts(
                    query_execution,
                    list_files=not failed,
                    commands=plan.writes if plan else None,
                ),
                started_ms,
                context.config,
                failed=failed,
                scans=plan.scans if plan else (),
            )
        ],
    )


def _changes(
    context: CaptureContext,
    func_name: str,
    query_execution: QueryExecution,
    plan: PlanFacts | None,
    started_ms: int,
) -> list[ChangedDatasets]:
    """The datasets a statement (DDL, ``LOAD DATA``, a DataSource V2 write) changed."""
    root = None if plan is None else (plan.root, plan.root_class)
    v2_root = plan is None or plan.root_class in V2_WRITE_ROOTS
    return context.guarded(
        "reading the statement of",
        func_name,
        lambda: [
            datasets_of_changes(
                [
                    *change_facts(
                        query_execution,
                        context.catalog_watch,
                        started_ms=started_ms,
                        root=root,
                    ),
                    *(v2_write_facts(query_execution) if v2_root else ()),
                ],
                context.config,
                report=context.report_degraded,
            )
        ],
    )


def _named_inputs(
    context: CaptureContext, func_name: str, query_execution: QueryExecution
) -> list[dict[str, Any]]:
    """The datasets a failed action's query names, read without making any of it again."""
    return context.guarded(
        "reading the query of",
        func_name,
        lambda: [
            # Named, not read: no subset facet says what part of it was read.
            {key: value for key, value in dump(dataset).items() if key != "inputFacets"}
            for dataset in input_datasets_from_scans(
                named_relations(query_execution), context.config, report=context.report_degraded
            )
        ],
    )


def _plan_made(
    context: CaptureContext, func_name: str, query_execution: QueryExecution
) -> bool | None:
    """Whether a failed action's executed plan was made, so that reading it makes nothing
    again (see ``_jvm/_failures``): not when its analysis failed; None: unknown (this Spark
    keeps it elsewhere, or asking failed, which is counted and logged)."""
    if func_name == ANALYSIS_FAILED:
        return False
    made = context.guarded(
        "checking the plan of", func_name, lambda: [executed_plan_made(query_execution)]
    )
    return made[0] if made else None


def action_events(
    facts: ActionFacts,
    *,
    parent: JobRef,
    run_id: str,
    spark_version: str,
    producer: str,
    application: str | None = None,
) -> list[dict[str, Any]]:
    """START and COMPLETE/FAIL of one action's run ``run_id``, a child of ``parent``, with its
    datasets (the START's outputs without their output facets: nothing was written yet). Its
    job is named after ``application`` (by default the parent's name).

    >>> facts = ActionFacts(action="count", inputs=({"namespace": "file", "name": "/s"},),
    ...                     outputs=(), started_ns=0, ended_ns=10**9)
    >>> start, end = action_events(facts, parent=JobRef("lake", "daily", "r-0"), run_id="r-1",
    ...                            spark_version="4.0.0", producer="p")
    >>> start["job"]["name"], end["eventType"], end["eventTime"]
    ('daily.count.s', 'COMPLETE', '1970-01-01T00:00:01.000Z')
    """
    outputs = facts.outputs
    job = JobRef(
        parent.namespace,
        job_name(application or parent.name, facts.action, outputs or facts.inputs or facts.named),
        run_id,
    )
    facets = {
        "parent": parent_facet(parent, producer),
        "processing_engine": engine_facet(spark_version, producer),
    }
    start = run_event(
        "START",
        event_time=timestamp(facts.started_ns),
        job=job,
        producer=producer,
        run_facets=facets,
        inputs=facts.inputs,
        outputs=[{k: v for k, v in o.items() if k != "outputFacets"} for o in outputs],
    )
    end_facets = dict(facets)
    if facts.error is not None:
        end_facets["errorMessage"] = error_facet(*facts.error, producer)
    end = run_event(
        "FAIL" if facts.error is not None else "COMPLETE",
        event_time=timestamp(facts.ended_ns),
        job=job,
        producer=producer,
        run_facets=end_facets,
        inputs=facts.inputs,
        outputs=outputs,
    )
    return [start, end]
