"""Structured Streaming: a run per streaming query started, and one per micro-batch.

Every start of a streaming query is one run (Spark's ``runId``, a UUID, is its id), a child of
the application's run; each micro-batch it runs is one run, a child of the query's, named by
the query (its name, else its id): ``<app>.stream.<query>`` and ``<app>.stream.<query>.batch``,
with the ``jobType`` facet (processing type ``STREAMING``) and the batch's identity in the
``olsubset_streamingBatch`` run facet. A batch's run id is made from its query run's and its
batch id (a name-based UUID), so that the actions a ``foreachBatch`` function runs inside a
batch, which end before the batch does, name it as their parent before its events are out.

Which execution belongs to which batch is what Spark writes in the job description of a batch's
work (``<name>\\nid = <query id>\\nrunId = <run id>\\nbatch = <batch id>``), handed over with
each execution's end (see the Java forwarder): :func:`batch_of` reads it.

Pure Python: the JVM layer reads a batch's sink (``_jvm/_streams.py``); its scans are read as
any action's.
"""

from __future__ import annotations

import collections
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from openlineage_subset_generated.custom.streaming_batch import v1_0_0 as _batch_schema
from openlineage_subset_generated.latest import JobFacet, RunFacet

from openlineage_subset.producer import (
    JobRef,
    engine_facet,
    error_facet,
    normalize_name,
    parent_facet,
    run_event,
    start_and_end,
    timestamp,
)
from openlineage_subset.spark._actions import ActionFacts
from openlineage_subset.spark._facts import StreamBatch

STREAMING_BATCH = "streamingBatch"
"""The action name the Java forwarder hands a micro-batch's own execution over with."""
STREAMING_BATCH_FACET: str = _batch_schema.FACET_KEY
"""The run facet of a micro-batch's run: ``olsubset_streamingBatch``."""
STREAMING_BATCH_SCHEMA: str = _batch_schema.FACET_DEF_URL
"""Its ``_schemaURL``: ``schemas/custom/facets/1-0-0/StreamingBatchRunFacet.json`` of this
repository, as served from it."""
JOB_TYPE_SCHEMA = (
    "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet"
)
_KEYS = ("id = ", "runId = ", "batch = ")
ENDED_KEPT = 1000
"""How many ended query runs are remembered as ended (a few bytes each)."""


def batch_of(description: str) -> StreamBatch | None:
    """The batch a job description names (see the module's docstring); None for any other.

    >>> batch_of("clicks\\nid = 6f1c\\nrunId = 0b2e\\nbatch = 7")
    StreamBatch(query_id='6f1c', run_id='0b2e', batch_id=7, name='clicks')
    >>> batch_of("\\nid = 6f1c\\nrunId = 0b2e\\nbatch = init") is None
    True
    """
    lines = description.split("\n")
    if len(lines) < 4:
        return None
    values = []
    for line, key in zip(lines[-3:], _KEYS, strict=True):
        if not line.startswith(key):
            return None
        values.append(line[len(key) :].strip())
    query_id, run_id, batch = values
    if not batch.isdigit() or not query_id or not run_id:
        return None
    name = "\n".join(lines[:-3])
    return StreamBatch(query_id, run_id, int(batch), name or None)


def batch_run_id(batch: StreamBatch) -> str:
    """The run id of a batch: the same for every execution of it, unique across runs.

    >>> batch_run_id(StreamBatch("q", "0b2e8e9c-0000-4000-8000-000000000000", 7))
    'add3a250-6bc1-5ee7-8e2b-bdb78c967e44'
    """
    try:
        namespace = uuid.UUID(batch.run_id)
    except ValueError:
        namespace = uuid.uuid5(uuid.NAMESPACE_URL, batch.run_id)
    return str(uuid.uuid5(namespace, f"batch {batch.batch_id}"))


def job_type_facet(job_type: str, producer: str) -> JobFacet:
    """The ``jobType`` job facet of a streaming query's or batch's job."""
    return JobFacet(
        producer=producer,
        schema_url=JOB_TYPE_SCHEMA,
        additional_properties={
            "processingType": "STREAMING",
            "integration": "SPARK",
            "jobType": job_type,
        },
    )


def batch_facet(batch: StreamBatch, producer: str) -> RunFacet:
    """The ``olsubset_streamingBatch`` run facet: which query, which start of it, which batch."""
    properties: dict[str, Any] = {
        "queryId": batch.query_id,
        "queryRunId": batch.run_id,
        "batchId": batch.batch_id,
    }
    if batch.name:
        properties["queryName"] = batch.name
    return RunFacet(
        producer=producer, schema_url=STREAMING_BATCH_SCHEMA, additional_properties=properties
    )


@dataclass
class StreamRuns:
    """The runs of the streaming queries of one capture: each started query's run, open until
    Spark says the query terminated (or the capture closes), and the refs of their batches.

    Holds one entry per query run open, never one per batch, and the ids of the last
    :data:`ENDED_KEPT` query runs that ended (an action heard after its query's end does not
    open it again).
    """

    application: JobRef
    spark_version: str
    producer: str
    _open: dict[str, JobRef] = field(default_factory=dict, init=False)
    _ended: collections.OrderedDict[str, None] = field(
        default_factory=collections.OrderedDict, init=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    @property
    def open_runs(self) -> int:
        """How many query runs are open: all capture holds of streams (``benchmarks/``)."""
        return len(self._open)

    def query_ref(self, batch: StreamBatch) -> JobRef:
        """The run of the query start ``batch`` belongs to."""
        name = f"{self.application.name}.stream.{normalize_name(batch.query) or 'query'}"
        return JobRef(
            self.application.namespace,
            name,
            batch.run_id,
            root=self.application.root or self.application,
        )

    def batch_ref(self, batch: StreamBatch) -> JobRef:
        """The run of ``batch``: a child of its query's run."""
        query = self.query_ref(batch)
        return JobRef(query.namespace, f"{query.name}.batch", batch_run_id(batch), root=query.root)

    def started(self, batch: StreamBatch, at_ns: int) -> list[dict[str, Any]]:
        """The START of a query's run (``batch`` with any batch id: the query, as Spark names
        it); none when it is open already."""
        with self._lock:
            if batch.run_id in self._open or batch.run_id in self._ended:
                return []
            query = self._open[batch.run_id] = self.query_ref(batch)
        return [self._query_event("START", query, at_ns)]

    def terminated(
        self, batch: StreamBatch, at_ns: int, error: tuple[str, str | None] | None
    ) -> list[dict[str, Any]]:
        """The COMPLETE (stopped, or done: ``availableNow``, ``once``) or FAIL (``error``: the
        exception that ended it) of a query's run, with its START if it was never sent."""
        events = self.started(batch, at_ns)
        with self._lock:
            opened = self._open.pop(batch.run_id, None)
            self._ended[batch.run_id] = None
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)
        if opened is None:
            return events
        kind = "COMPLETE" if error is None else "FAIL"
        return [*events, self._query_event(kind, opened, at_ns, error)]

    def close(self, at_ns: int) -> list[dict[str, Any]]:
        """ABORT for every query run still open: the capture (the application) ended while
        they ran, and Spark never said how they ended."""
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        return [self._query_event("ABORT", query, at_ns) for query in opened]

    def batch_events(self, batch: StreamBatch, facts: ActionFacts) -> list[dict[str, Any]]:
        """START and COMPLETE/FAIL of one micro-batch's run, a child of its query's run."""
        facets: dict[str, RunFacet] = {
            "parent": parent_facet(self.query_ref(batch), self.producer),
            "processing_engine": engine_facet(self.spark_version, self.producer),
            STREAMING_BATCH_FACET: batch_facet(batch, self.producer),
        }
        error = None if facts.error is None else error_facet(*facts.error, self.producer)
        return start_and_end(
            self.batch_ref(batch),
            producer=self.producer,
            run_facets=facets,
            started_ns=facts.started_ns,
            ended_ns=facts.ended_ns,
            inputs=facts.inputs,
            outputs=facts.outputs,
            error=error,
            job_facets={"jobType": job_type_facet("MICRO_BATCH", self.producer)},
        )

    def _query_event(
        self,
        kind: str,
        query: JobRef,
        at_ns: int,
        error: tuple[str, str | None] | None = None,
    ) -> dict[str, Any]:
        facets: dict[str, RunFacet] = {
            "parent": parent_facet(self.application, self.producer),
            "processing_engine": engine_facet(self.spark_version, self.producer),
        }
        if error is not None:
            facets["errorMessage"] = error_facet(*error, self.producer)
        return run_event(
            kind,
            event_time=timestamp(at_ns),
            job=query,
            producer=self.producer,
            run_facets=facets,
            job_facets={"jobType": job_type_facet("STREAMING_QUERY", self.producer)},
        )
