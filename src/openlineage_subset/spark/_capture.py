"""Automatic capture: every Spark action becomes one OpenLineage run with subset facets.

``enable(spark)`` registers a ``QueryExecutionListener`` implemented in Python through the py4j
callback server: Spark calls it once per action (never per task), after the action, on its
listener thread. The listener reads the executed plan (inputs, and the partitions a write
created) and queues a START event (dated when the action started) and a COMPLETE or FAIL
event; a background thread validates and delivers them (see ``_emit``). Every run has a parent
run facet pointing at one run for the whole application, which gets its own START at
``enable`` and COMPLETE at ``close``.

Lineage never breaks the job: whatever fails inside the listener is caught, logged once per
kind with its context, and counted in ``handle.counts``; the action's result is untouched.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from openlineage_subset._convert import dump
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._emit import DEFAULT_QUARANTINE, Emitter, Transport, resolve_transport
from openlineage_subset.spark._events import (
    JobRef,
    engine_facet,
    error_facet,
    job_name,
    parent_facet,
    run_event,
    timestamp,
)
from openlineage_subset.spark._jvm import java_class, scan_facts
from openlineage_subset.spark._reads import input_datasets_from_scans
from openlineage_subset.spark._writes import output_datasets_from_writes, write_facts

log = logging.getLogger("openlineage_subset.spark")


def _new_run_id() -> str:
    from openlineage.client.uuid import generate_new_uuid  # noqa: PLC0415  (the spark extra)

    return str(generate_new_uuid())


@dataclass
class CaptureHandle:
    """A running capture: ``counts`` of what happened, ``close()`` to flush and stop."""

    spark: Any
    emitter: Emitter
    application: JobRef
    config: SubsetConfig
    namespace: str
    listener: Any = None
    java_listener: Any = None
    """The JVM proxy of ``listener``: py4j makes a new proxy each time a Python object crosses,
    so unregistering needs the very proxy that was registered."""
    _own_counts: Counter[str] = field(default_factory=Counter)
    closed: bool = False
    _closing: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _logged: set[str] = field(default_factory=set)

    @property
    def counts(self) -> Counter[str]:
        """What happened so far: ``actions`` captured, ``errors`` caught, events ``emitted`` and
        ``quarantined (<reason>)``."""
        return self._own_counts + self.emitter.counts

    def flush(self) -> None:
        """Wait until the actions run so far have their events delivered (or quarantined)."""
        try:
            self.spark._jsc.sc().listenerBus().waitUntilEmpty()
        except Exception:  # Spark stopped: its listener bus was drained at stop
            log.debug("could not wait for Spark's listener bus", exc_info=True)
        self.emitter.flush()

    def close(self, timeout: float | None = 60.0) -> bool:
        """Stop capturing, deliver every pending event; False if ``timeout`` ran out first."""
        with self._lock:
            if self._closing:
                return True
            self._closing = True
        try:
            self.spark._jsc.sc().listenerBus().waitUntilEmpty()
        except Exception:  # Spark stopped (its bus was drained at stop), or a slow bus
            log.debug("could not wait for Spark's listener bus", exc_info=True)
        try:
            self.spark._jsparkSession.listenerManager().unregister(self.java_listener)
        except Exception:  # Spark already stopped: nothing to unregister from
            log.debug("could not unregister the listener (Spark stopped?)", exc_info=True)
        # Only now: the actions that ran before close() have been delivered to the listener.
        self.closed = True
        self._emit_application("COMPLETE")
        return self.emitter.close(timeout)

    def record_error(self, context: str, error: BaseException) -> None:
        """Count an error; log the first of each kind with its traceback."""
        self._own_counts["errors"] += 1
        kind = f"{context}: {type(error).__name__}"
        if kind not in self._logged:
            self._logged.add(kind)
            log.error(
                "lineage capture failed while %s; the job is unaffected", context, exc_info=error
            )

    def _emit_application(self, event_type: str) -> None:
        event = run_event(
            event_type,
            event_time=timestamp(time.time_ns()),
            job=self.application,
            producer=self.config.producer,
            run_facets={
                "processing_engine": engine_facet(self.spark.version, self.config.producer)
            },
        )
        self.emitter.submit([event])


class _Listener:
    """The Python side of ``org.apache.spark.sql.util.QueryExecutionListener``."""

    def __init__(self, handle: CaptureHandle) -> None:
        self.handle = handle

    def onSuccess(self, func_name: str, query_execution: Any, duration_ns: int) -> None:
        self._capture(func_name, query_execution, int(duration_ns), None)

    def onFailure(self, func_name: str, query_execution: Any, exception: Any) -> None:
        self._capture(func_name, query_execution, 0, exception)

    def _capture(
        self, func_name: str, query_execution: Any, duration_ns: int, failure: Any
    ) -> None:
        handle = self.handle
        if handle.closed:
            return
        try:
            ended = time.time_ns()
            events = action_events(
                handle,
                str(func_name),
                query_execution,
                started_ns=ended - duration_ns,
                ended_ns=ended,
                failure=failure,
            )
            if events:
                handle._own_counts["actions"] += 1
                handle.emitter.submit(events)
        except Exception as error:
            handle.record_error(f"capturing the {func_name!r} action", error)

    class Java:
        implements: ClassVar[list[str]] = ["org.apache.spark.sql.util.QueryExecutionListener"]


def action_events(
    handle: CaptureHandle,
    func_name: str,
    query_execution: Any,
    *,
    started_ns: int,
    ended_ns: int,
    failure: Any,
) -> list[dict[str, Any]]:
    """START and COMPLETE/FAIL of one action; none when it read and wrote no dataset."""
    config = handle.config
    inputs = [
        dump(d)
        for d in input_datasets_from_scans(scan_facts(query_execution, executed=True), config)
    ]
    # What a failed write left behind is not what it meant to write: no listing, no facet.
    writes = write_facts(query_execution, list_files=failure is None)
    outputs = [
        dump(d) for d in output_datasets_from_writes(writes, started_ns // 1_000_000, config)
    ]
    if failure is not None:
        for output in outputs:
            output.pop("outputFacets", None)
    if not inputs and not outputs:
        return []
    job = JobRef(
        handle.namespace,
        job_name(handle.application.name, func_name, outputs or inputs),
        _new_run_id(),
    )
    facets = {
        "parent": parent_facet(handle.application, config.producer),
        "processing_engine": engine_facet(handle.spark.version, config.producer),
    }
    start = run_event(
        "START",
        event_time=timestamp(started_ns),
        job=job,
        producer=config.producer,
        run_facets=facets,
        inputs=inputs,
        outputs=[{k: v for k, v in o.items() if k != "outputFacets"} for o in outputs],
    )
    end_facets = dict(facets)
    if failure is not None:
        end_facets["errorMessage"] = error_facet(*_describe(failure), config.producer)
    end = run_event(
        "FAIL" if failure is not None else "COMPLETE",
        event_time=timestamp(ended_ns),
        job=job,
        producer=config.producer,
        run_facets=end_facets,
        inputs=inputs,
        outputs=outputs,
    )
    return [start, end]


def _describe(exception: Any) -> tuple[str, str | None]:
    try:
        message = str(exception.toString())
        trace = str(
            java_class("org.apache.commons.lang3.exception.ExceptionUtils").getStackTrace(exception)
        )
    except Exception:  # a Python exception, or the JVM gone: its text is enough
        return str(exception), None
    return message, trace


def enable(
    spark: Any,
    *,
    namespace: str | None = None,
    output: str | os.PathLike[str] | None = None,
    quarantine: str | os.PathLike[str] | None = None,
    transport: Transport | None = None,
    config: SubsetConfig | None = None,
    **subset_options: Any,
) -> CaptureHandle:
    """Capture every action of ``spark`` as an OpenLineage run; returns a handle to ``close()``.

    - ``namespace``: the jobs' namespace (``$OPENLINEAGE_NAMESPACE``, else ``default``);
    - ``output``: the JSON Lines file events go to when openlineage-python has no transport
      configured (``$OL_SUBSET_OUTPUT``, else ``openlineage-events.jsonl``);
    - ``quarantine``: where invalid or undelivered events are kept (``$OL_SUBSET_QUARANTINE``,
      else ``<output>.quarantine.jsonl`` beside ``output``, else ``openlineage-quarantine.jsonl``);
    - ``transport``: an openlineage-python transport to use instead of the configured one;
    - ``config`` or keyword options of :class:`SubsetConfig` (``max_partitions=...``).

    Example::

        handle = enable(spark, namespace="analytics", output="events.jsonl")
        spark.read.parquet("s3a://lake/sales").where("day = '2024-10-15'").count()
        handle.close()   # also runs at interpreter exit
    """
    if config is None:
        config = SubsetConfig(**subset_options)
    elif subset_options:
        config = replace(config, **subset_options)
    from pyspark import java_gateway  # noqa: PLC0415  (the spark extra)

    # Typed loosely on purpose: pyspark types the function in some versions, not others.
    start_callback_server: Any = java_gateway.ensure_callback_server_started
    start_callback_server(spark.sparkContext._gateway)
    if quarantine is None:
        quarantine = os.environ.get("OL_SUBSET_QUARANTINE") or (
            f"{output}.quarantine.jsonl" if output else DEFAULT_QUARANTINE
        )
    emitter = Emitter(transport if transport is not None else resolve_transport(output), quarantine)
    job_namespace = namespace or os.environ.get("OPENLINEAGE_NAMESPACE") or "default"
    application = JobRef(job_namespace, spark.sparkContext.appName, _new_run_id())
    handle = CaptureHandle(spark, emitter, application, config, job_namespace)
    handle._emit_application("START")
    handle.listener = _Listener(handle)
    manager = spark._jsparkSession.listenerManager()
    manager.register(handle.listener)
    registered = manager.listListeners()  # in registration order: ours is the last
    handle.java_listener = registered[len(registered) - 1]
    atexit.register(handle.close)
    return handle
