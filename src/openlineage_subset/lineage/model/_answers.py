"""The answers of the lineage queries: frozen dataclasses, each with ``as_json()``.

JSON keys are camelCase like OpenLineage's, times are ISO-8601 in UTC with ``Z`` (trailing zero
fractions dropped), and every list has a fixed order, so that one database gives one output.
"""

from __future__ import annotations

import dataclasses
import json
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, Literal

from openlineage_subset.lineage.model._time import shown_time
from openlineage_subset.producer import dataset_label

Label = Literal["definite", "possible"]
Dimensions = tuple[tuple[str, str | None], ...]
"""A partition's (column, value) pairs, sorted by column: a hashable key."""


def stronger(first: Label | None, second: Label | None) -> Label | None:
    """The stronger of two labels: definite beats possible beats none.

    >>> stronger("possible", "definite"), stronger(None, "possible")
    ('definite', 'possible')
    """
    if "definite" in (first, second):
        return "definite"
    return first or second


def indented_json(value: Any, *, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=ensure_ascii)``, the same text, about five
    times faster for an answer's JSON (text, integers, true/false/null, objects with text keys,
    arrays): with ``indent`` json encodes in Python, a generator per level, and a provenance
    answer of 1.5 MB took 80 ms. Anything else is left to ``json.dumps``.

    >>> indented_json({"a": [1, None, "é"], "b": {}}) == json.dumps(
    ...     {"a": [1, None, "é"], "b": {}}, indent=2)
    True
    """
    string = encode_basestring_ascii if ensure_ascii else encode_basestring
    out: list[str] = []
    append = out.append

    def walk(node: Any, pad: str) -> None:
        if isinstance(node, str):
            append(string(node))
        elif node is None or node is True or node is False:
            append("null" if node is None else "true" if node else "false")
        elif type(node) is int:
            append(int.__repr__(node))
        elif type(node) is dict and node:
            inner = pad + "  "
            between = ",\n" + inner
            append("{\n" + inner)
            for number, (key, item) in enumerate(node.items()):
                if type(key) is not str:
                    raise TypeError(key)  # json.dumps converts it, or refuses it
                if number:
                    append(between)
                append(string(key))
                append(": ")
                walk(item, inner)
            append("\n" + pad + "}")
        elif type(node) is list and node:
            inner = pad + "  "
            between = ",\n" + inner
            append("[\n" + inner)
            for number, item in enumerate(node):
                if number:
                    append(between)
                walk(item, inner)
            append("\n" + pad + "]")
        elif type(node) in (dict, list):  # empty
            append("{}" if type(node) is dict else "[]")
        else:
            raise TypeError(node)  # a float, a subclass: as json.dumps writes it

    try:
        walk(value, "")
    except (TypeError, RecursionError):
        return json.dumps(value, indent=2, ensure_ascii=ensure_ascii)
    return "".join(out)


@dataclasses.dataclass(frozen=True)
class DatasetRef:
    """A dataset by OpenLineage namespace and name.

    >>> str(DatasetRef("s3://bucket", "lake/sales")), str(DatasetRef("file", "/tmp/lake/sales"))
    ('s3://bucket/lake/sales', 'file:/tmp/lake/sales')
    """

    namespace: str
    name: str

    def __str__(self) -> str:
        return dataset_label(self.namespace, self.name)

    def as_json(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "name": self.name}


@dataclasses.dataclass(frozen=True)
class PartitionRef:
    """A partition: its values by column (``None``: the null partition), and its identifier.

    In an answer, the columns come in the order the dataset's events give them (as its
    partitions' identifiers name them), the same in every answer and output.

    >>> str(PartitionRef((("country", "PL"), ("day", "2024-10-15")), None))
    'country=PL/day=2024-10-15'
    """

    dimensions: Dimensions
    identifier: str | None = None

    def __str__(self) -> str:
        if self.identifier:
            return self.identifier
        return "/".join(
            f"{name}={'__HIVE_DEFAULT_PARTITION__' if value is None else value}"
            for name, value in self.dimensions
        )

    def as_json(self) -> dict[str, Any]:
        return {"dimensions": dict(self.dimensions), "identifier": self.identifier}


def job_text(namespace: str, name: str) -> str:
    """A job as every answer spells it: ``namespace.name``.

    >>> job_text("airflow", "daily.load")
    'airflow.daily.load'
    """
    return f"{namespace}.{name}"


@dataclasses.dataclass(frozen=True)
class RunRef:
    """A run as the database has merged it from its events."""

    run_id: str
    job_namespace: str
    job_name: str
    status: str
    started_at: str
    ended_at: str | None

    @property
    def job(self) -> str:
        return job_text(self.job_namespace, self.job_name)

    def as_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "job": {"namespace": self.job_namespace, "name": self.job_name},
            "status": self.status,
            "startedAt": shown_time(self.started_at),
            "endedAt": None if self.ended_at is None else shown_time(self.ended_at),
        }


@dataclasses.dataclass(frozen=True)
class PartitionSet:
    """Part of one dataset: the whole of it (definite or possible) and/or some partitions."""

    dataset: DatasetRef
    whole: Label | None
    definite: tuple[PartitionRef, ...]
    possible: tuple[PartitionRef, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset.as_json(),
            "whole": self.whole,
            "definite": [item.as_json() for item in self.definite],
            "possible": [item.as_json() for item in self.possible],
        }


@dataclasses.dataclass(frozen=True)
class AffectedRun:
    """A run that read affected data: which run, how sure, and through what."""

    run: RunRef
    label: Label
    hops: int
    """1 for a run that read the starting region, 2 for one that read what such a run wrote..."""
    dataset: DatasetRef
    """The affected input it read."""
    partitions: tuple[PartitionRef, ...] | None
    """The affected partitions of that input its read may cover; None: the whole dataset."""
    condition: str | None
    """Its read condition, rendered; None: it read the whole dataset."""
    upstream_run_id: str | None
    """The affected run whose output it read; None: it read the starting region."""
    mapped_by: tuple[str, ...] = ()
    """The output partition columns its writes' partition mappings narrowed what it recomputes
    by (none: all it wrote)."""

    def as_json(self) -> dict[str, Any]:
        return {
            **self.run.as_json(),
            "label": self.label,
            "hops": self.hops,
            "via": {
                "dataset": self.dataset.as_json(),
                "partitions": None
                if self.partitions is None
                else [item.as_json() for item in self.partitions],
                "condition": self.condition,
                "upstreamRunId": self.upstream_run_id,
            },
            "mappedBy": list(self.mapped_by),
        }


@dataclasses.dataclass(frozen=True)
class ImpactReport:
    """The answer of :func:`~openlineage_subset.lineage.impact`."""

    start: PartitionSet
    since: str | None
    depth: int | None
    runs: tuple[AffectedRun, ...]
    backfill: tuple[PartitionSet, ...]
    seen: bool = True
    """False when no recorded run read or wrote the starting region, nor may have: the
    database knows nothing of it (a value never written, or mistyped)."""
    notes: tuple[str, ...] = ()
    """Names of the dataset asked about that other datasets claim too (kept apart)."""
    tasks: tuple[TaskRerun, ...] = ()
    """The backfill plan by what to re-run: the orchestrator task runs (or, for runs without
    one, the runs themselves) of the affected runs, in the order of ``runs``."""
    location: str | None = None
    """The file or directory of the dataset asked about (a bad file that landed): only its
    readers that may have read it are affected."""

    def as_json(self) -> dict[str, Any]:
        return {
            "query": "impact",
            "start": self.start.as_json(),
            **({"location": self.location} if self.location is not None else {}),
            "since": None if self.since is None else shown_time(self.since),
            "depth": self.depth,
            "runs": [run.as_json() for run in self.runs],
            "backfill": [item.as_json() for item in self.backfill],
            "seen": self.seen,
            **({"notes": list(self.notes)} if self.notes else {}),
            "tasks": [task.as_json() for task in self.tasks],
        }


@dataclasses.dataclass(frozen=True)
class OrchestratorTask:
    """An orchestrator's task run (an Airflow task instance) that affected runs belong to."""

    orchestrator: str
    """``airflow``."""
    namespace: str
    """The job namespace it posts its runs in."""
    dag_id: str
    task_id: str
    logical_date: str | None
    """The DAG run's logical date (stored form); None: not known (its own run never posted)."""
    run_id: str
    """Its OpenLineage run id (the parent run id its children name)."""
    dag_run_id: str | None
    """Airflow's id of the DAG run (``scheduled__...``), when its run was posted."""

    def as_json(self) -> dict[str, Any]:
        return {
            "orchestrator": self.orchestrator,
            "namespace": self.namespace,
            "dagId": self.dag_id,
            "taskId": self.task_id,
            "logicalDate": None if self.logical_date is None else shown_time(self.logical_date),
            "runId": self.run_id,
            "dagRunId": self.dag_run_id,
        }


@dataclasses.dataclass(frozen=True)
class TaskRerun:
    """One thing to re-run: an orchestrator task run, or a run of its own job."""

    task: OrchestratorTask | None
    """None: the runs have no known orchestrator parent; re-run the job itself."""
    job_namespace: str
    job_name: str
    """The job re-run: the task's (``dag_id.task_id`` for Airflow), or the run's own."""
    label: Label
    """The strongest label of its affected runs."""
    run_ids: tuple[str, ...]
    """Its affected runs, in the order of the report's runs."""
    backfill: tuple[PartitionSet, ...]
    """What those runs wrote that the plan recomputes, per dataset."""
    command: str | None
    """The command that clears it (Airflow's ``tasks clear``); None: no such command is known
    (no orchestrator, a logical date not known, or ``overlapping`` tasks)."""
    overlapping: tuple[str, ...] = ()
    """Other tasks of its DAG that ``tasks clear -t`` would clear with it (ids containing its
    id): then no command is given."""

    def as_json(self) -> dict[str, Any]:
        return {
            "task": None if self.task is None else self.task.as_json(),
            "job": {"namespace": self.job_namespace, "name": self.job_name},
            "label": self.label,
            "runIds": list(self.run_ids),
            "backfill": [item.as_json() for item in self.backfill],
            "command": self.command,
            "overlapping": list(self.overlapping),
        }


@dataclasses.dataclass(frozen=True)
class ProvenanceInput:
    """One input read of a writer run, the partitions it may cover, and who wrote those."""

    dataset: DatasetRef
    condition: str | None
    partitions: PartitionSet
    writers: tuple[ProvenanceStep, ...]

    def as_json(self) -> dict[str, Any]:
        covered = self.partitions.as_json()
        del covered["dataset"]
        return {
            "dataset": self.dataset.as_json(),
            "condition": self.condition,
            "partitions": covered,
            "writers": [writer.as_json() for writer in self.writers],
        }


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProvenanceStep:
    """A completed run that wrote (definitely or possibly) the data asked about."""

    run: RunRef
    label: Label
    dataset: DatasetRef
    condition: str | None
    """Its write condition, rendered; None: it wrote the whole dataset."""
    inputs: tuple[ProvenanceInput, ...]
    repeated: bool = False
    """Already shown higher up: its inputs are not repeated."""
    truncated: bool = False
    """At the depth limit: its inputs are not followed."""

    def as_json(self) -> dict[str, Any]:
        return {
            **self.run.as_json(),
            "label": self.label,
            "dataset": self.dataset.as_json(),
            "condition": self.condition,
            "repeated": self.repeated,
            "truncated": self.truncated,
            "inputs": [item.as_json() for item in self.inputs],
        }


@dataclasses.dataclass(frozen=True)
class ProvenanceReport:
    """The answer of :func:`~openlineage_subset.lineage.provenance`."""

    target: PartitionSet
    depth: int | None
    writers: tuple[ProvenanceStep, ...]
    seen: bool = True
    """False when no recorded run read or wrote the part asked about, nor may have."""
    notes: tuple[str, ...] = ()
    """Names of the dataset asked about that other datasets claim too (kept apart)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "query": "provenance",
            "target": self.target.as_json(),
            "depth": self.depth,
            "writers": [writer.as_json() for writer in self.writers],
            "seen": self.seen,
            **({"notes": list(self.notes)} if self.notes else {}),
        }


@dataclasses.dataclass(frozen=True)
class HistoryEntry:
    """A run that read or wrote the dataset (the part asked about, definitely or possibly)."""

    run: RunRef
    direction: Literal["read", "write"]
    condition: str | None
    label: Label

    def as_json(self) -> dict[str, Any]:
        return {
            **self.run.as_json(),
            "direction": self.direction,
            "condition": self.condition,
            "label": self.label,
        }


@dataclasses.dataclass(frozen=True)
class HistoryReport:
    """The answer of :func:`~openlineage_subset.lineage.history`."""

    target: PartitionSet
    entries: tuple[HistoryEntry, ...]
    seen: bool = True
    """False when no recorded run read or wrote the part asked about, nor may have."""
    notes: tuple[str, ...] = ()
    """What the answer cannot tell (runs pruned before a time)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "query": "history",
            "target": self.target.as_json(),
            "entries": [entry.as_json() for entry in self.entries],
            "seen": self.seen,
            **({"notes": list(self.notes)} if self.notes else {}),
        }


@dataclasses.dataclass(frozen=True)
class PartitionState:
    """A known partition: its last writer, and how many runs read it since."""

    partition: PartitionRef
    writer: RunRef | None
    label: Label | None
    """How sure it is that ``writer`` wrote this partition; None when no writer is known."""
    reads_since: int

    def as_json(self) -> dict[str, Any]:
        return {
            **self.partition.as_json(),
            "lastWriter": None if self.writer is None else self.writer.as_json(),
            "label": self.label,
            "readsSince": self.reads_since,
        }


@dataclasses.dataclass(frozen=True)
class PartitionsReport:
    """The answer of :func:`~openlineage_subset.lineage.dataset_partitions`."""

    dataset: DatasetRef
    partitions: tuple[PartitionState, ...]
    writes: int | None = None
    """Recorded writes of the dataset, counted only when no partition of it is known."""
    whole_writes: int | None = None
    """Of :attr:`writes`, those of the whole dataset (no condition): a dbt model's, say."""

    def as_json(self) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "query": "partitions",
            "dataset": self.dataset.as_json(),
            "partitions": [item.as_json() for item in self.partitions],
        }
        if self.writes is not None:
            answer["writes"] = self.writes
            answer["wholeWrites"] = self.whole_writes
        return answer
