"""Automatic capture: every Spark action becomes one OpenLineage run with subset facets.

``enable(spark)`` listens to the application of ``spark`` through the JVM layer: the actions
of every session (``spark.newSession()``, sessions of other threads, Spark Connect's sessions)
are handed to the capture's handle once per action (never per task), after the action, on a
listener thread of their own (``_jvm/_application``). An installation built without a Java
compiler lacks that listener: capture then registers a ``QueryExecutionListener`` on the one
session given, and says once that other sessions go uncaptured.

Capture walks the executed plan once (``_actions``: inputs, the partitions a write created, the
dataset a DDL statement changed) and queues a START event (dated when the action started) and a
COMPLETE or FAIL event; background threads validate them, keep them in a durable outbox and
deliver them (see ``_emit``). Every run has a parent run facet pointing at one run for the
whole application, which gets its own START at ``enable`` and COMPLETE or FAIL at ``close``,
named and parented by the lineage settings (``_settings``).

Lineage never breaks the job: whatever fails inside the listener is caught, logged once per
kind with its context, and counted in ``handle.counts``; the action's result is untouched.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from openlineage_subset.delivery import (
    EXIT_BUDGET,
    CaptureCount,
    Counts,
    Emitter,
    Reason,
    Tally,
    Transport,
    new_run_id,
    open_emitter,
)
from openlineage_subset.producer import (
    CONF_PREFIX,
    JobRef,
    LineageSettingsWarning,
    bound_event,
    engine_facet,
    forget_uncaught,
    lineage_settings,
    parent_facet,
    python_error_facet,
    run_event,
    scrubbed_logger,
    timestamp,
    warn_once,
    watch_uncaught,
)
from openlineage_subset.spark._actions import ActionFacts, action_events, read_action, read_batch
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._connect import ConnectSessions
from openlineage_subset.spark._context import CaptureContext
from openlineage_subset.spark._facts import RddJobFacts, StreamBatch
from openlineage_subset.spark._handles import QueryExecution
from openlineage_subset.spark._jvm import (
    ActionListener,
    ApplicationListener,
    CatalogWatch,
    JobListener,
    application_listener_available,
    conf_with_prefix,
    drain_listener_bus,
    execution_batch,
    first_error_line,
    is_stopped,
    require_classic,
    session_key,
)
from openlineage_subset.spark._rdds import rdd_job_events
from openlineage_subset.spark._streams import STREAMING_BATCH, StreamRuns, batch_of

if TYPE_CHECKING:  # the spark extra
    from pyspark.sql import SparkSession

log = scrubbed_logger("openlineage_subset.spark")
_OPEN: dict[tuple[str, object], CaptureHandle] = {}
"""The open capture of each Spark application (by its id), or of each session (by its JVM
session) where only sessions can be listened to."""
_OPEN_LOCK = threading.Lock()
_ENABLE_LOCK = threading.RLock()
"""Held by :func:`enable` from looking for an open capture to registering its own."""


@dataclass
class CaptureHandle:
    """A running capture: ``counts`` of what happened, ``close()`` to flush and stop.

    Made by :func:`enable`, which registers its ``listener``; what follows ``parent`` is the
    capture's own state, never given to the constructor.
    """

    spark: SparkSession
    emitter: Emitter
    application: JobRef
    config: SubsetConfig
    namespace: str
    parent: JobRef | None = None
    """The run the application is a child of (from the lineage settings), with its root."""
    server_conf: Mapping[str, str] = field(default_factory=dict)
    """The application's ``spark.openlineage.*`` conf and ``spark.app.name``: what a Spark
    Connect client's session inherits without setting it."""
    failure: BaseException | None = field(default=None, init=False)
    """Why the application failed, when an uncaught exception ended the program: the
    application run then ends FAIL at ``close``."""
    closed: bool = field(default=False, init=False)
    listener: ApplicationListener | ActionListener = field(init=False)
    """What hands every action to :meth:`_capture_action`: the application's listener (every
    session), or where this installation lacks it, the session's QueryExecutionListener."""
    catalog_watch: CatalogWatch = field(default_factory=CatalogWatch, init=False)
    """Where tables lived before DROP TABLE and RENAME (see ``CatalogWatch``)."""
    _catalog_unwatchable: bool = field(default=False, init=False)
    _own_counts: Tally = field(default_factory=Tally, init=False)
    _closing: bool = field(default=False, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _logged: set[str] = field(default_factory=set, init=False)
    context: CaptureContext = field(init=False)
    """What the runs of Connect client sessions and of actions are made with (built once)."""
    connect: ConnectSessions = field(init=False)
    """The runs of Spark Connect client sessions, each the parent of its own actions."""
    streams: StreamRuns = field(init=False)
    """The runs of streaming queries, each the parent of its micro-batches' runs."""
    jobs: JobListener | None = field(default=None, init=False)
    """What hands the jobs run outside SQL executions (RDD actions) to :meth:`_capture_job`
    (none where the application's listener is missing)."""

    def __post_init__(self) -> None:
        self.context = CaptureContext(
            spark=self.spark,
            spark_version=self.spark.version,
            application=self.application,
            namespace=self.namespace,
            config=self.config,
            server_conf=MappingProxyType(dict(self.server_conf)),
            catalog_watch=self.catalog_watch,
            submit=self.submit,
            report_degraded=self.report_degraded,
            record_error=self.record_error,
        )
        self.connect = ConnectSessions(self.context)
        self.streams = StreamRuns(
            self.application, self.context.spark_version, self.config.producer
        )
        if application_listener_available():
            self.listener = ApplicationListener(
                self._capture_action,
                self._reading_failed,
                self._connect_session_ended,
                self._query_event,
            )
            self.jobs = JobListener(self._capture_job, self._reading_failed)
        else:
            self.listener = ActionListener(self._capture_action)

    @property
    def every_session(self) -> bool:
        """Whether the actions of every session of the application are captured (else only
        those of the session given to :func:`enable`)."""
        return isinstance(self.listener, ApplicationListener)

    @property
    def key(self) -> tuple[str, object]:
        """What this capture is one per: the application, or the session."""
        if self.every_session:
            return ("application", self.spark.sparkContext.applicationId)
        return ("session", session_key(self.spark))

    @property
    def counts(self) -> Counts:
        """What happened so far: ``actions`` captured, ``errors`` caught, ``datasets degraded``
        (reported whole or left out, each said once in the log), and events: ``emitted``,
        ``in outbox`` (not delivered yet), ``quarantined (<reason>)`` (``quarantined to the
        log (<reason>)`` when the quarantine file cannot be written); after ``flush()`` or
        ``close()`` these add up to the events produced. Events earlier captures left in the
        outbox count apart: ``replayed``, ``earlier in outbox`` (see ``delivery``'s ``Counts``,
        read by those names or by typed ones: ``counts.errors``)."""
        return self._own_counts.snapshot() + self.emitter.counts

    def watch_catalog(self) -> None:
        """Start watching the catalog for drops and renames, once Spark has created it.

        Until then this costs one round trip per action; a Spark whose catalog cannot be
        watched is not asked again (its drops are named after default locations).
        """
        if self.catalog_watch.watching or self._catalog_unwatchable:
            return
        try:
            self.catalog_watch.watch(self.spark)
        except Exception as error:
            self._catalog_unwatchable = True
            self.record_error("watching the catalog for dropped tables", error)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the actions run so far have their events delivered (or quarantined);
        False when ``timeout`` (default: the close budget) ran out first."""
        try:
            drain_listener_bus(self.spark)
        except Exception:  # Spark stopped: its listener bus was drained at stop
            log.debug("could not wait for Spark's listener bus", exc_info=True)
        self._wait_for_jobs(timeout)
        return self.emitter.flush(timeout)

    def close(self, timeout: float | None = None, *, error: BaseException | None = None) -> bool:
        """Stop capturing, deliver pending events for at most ``timeout`` seconds (default: the
        ``close_timeout`` of ``enable``); False when some stay in the outbox (one log line says
        how many, where, and how to send them).

        The application run ends COMPLETE, or FAIL with an ``errorMessage`` facet (the
        traceback as its stack trace) when ``error`` is given or ``failure`` is set.

        Example::

            try:
                main(spark)
            except Exception as error:
                handle.close(error=error)
                raise
        """
        with self._lock:
            if self._closing:
                return True
            self._closing = True
        try:
            drain_listener_bus(self.spark)
        except Exception:  # Spark stopped (its bus was drained at stop), or a slow bus
            log.debug("could not wait for Spark's listener bus", exc_info=True)
        try:
            self.listener.unregister(self.spark)
        except Exception:  # Spark already stopped: nothing to unregister from
            log.debug("could not unregister the listener (Spark stopped?)", exc_info=True)
        self._stop_jobs(timeout)
        # Only now: the actions that ran before close() have been delivered to the listener.
        self.closed = True
        try:
            self.connect.close()
        except Exception as problem:
            self.record_error("ending the runs of open Spark Connect sessions", problem)
        try:
            self.submit(self.streams.close(time.time_ns()))
        except Exception as problem:
            self.record_error("ending the runs of streaming queries still running", problem)
        try:
            self.catalog_watch.stop()
        except Exception:  # Spark stopped: its catalog calls no one any more
            log.debug("could not stop watching the catalog (Spark stopped?)", exc_info=True)
        forget_uncaught(self)
        with _OPEN_LOCK:
            for key in [key for key, handle in _OPEN.items() if handle is self]:
                del _OPEN[key]
        failure = error if error is not None else self.failure
        self._emit_application("COMPLETE" if failure is None else "FAIL", failure)
        return self.emitter.close(timeout)

    def submit(self, events: list[dict[str, Any]]) -> None:
        """Send events, each bounded to ``max_event_bytes`` first; a dataset that lost its
        facet is reported once, however many of the run's events left it out.

        No event over the budget is sent: should bounding fail, the event is quarantined
        (``quarantined (over max_event_bytes)``, the error counted and logged), never lost.
        """
        dropped: dict[str, str] = {}

        def keep(name: str, what: str) -> None:
            dropped.setdefault(name, what)

        bounded = []
        for event in events:
            try:
                bounded += bound_event(event, self.config.max_event_bytes, report=keep)
            except Exception as error:
                self.record_error("bounding the size of an event", error)
                self.emitter.keep(event, Reason.OVER_MAX_EVENT_BYTES, error=f"{error}")
        for name, what in dropped.items():
            self.report_degraded(name, what)
        self.emitter.submit(bounded)

    def report_degraded(self, dataset: str, what: str) -> None:
        """Count a dataset that lost its subset facet or its place, and say so once."""
        self._own_counts.add(CaptureCount.DATASETS_DEGRADED)
        warn_once(dataset, what)

    def record_error(self, context: str, error: BaseException) -> None:
        """Count an error of capture's own; log the first of each kind in one line (its
        traceback at DEBUG)."""
        self._own_counts.add(CaptureCount.ERRORS)
        kind = f"{context}: {type(error).__name__}"
        if kind not in self._logged:
            self._logged.add(kind)
            log.error(
                "lineage capture failed while %s; the job is unaffected (%s)",
                context,
                first_error_line(error),
            )
            log.debug("the traceback of that capture failure", exc_info=error)

    def _reading_failed(self, doing: str, error: BaseException) -> None:
        self.record_error(doing, error)

    def _connect_session_ended(self, user_id: str, session_id: str, at_ms: int) -> None:
        if self.closed:
            return
        try:
            self.connect.ended(user_id, session_id, at_ms)
        except Exception as error:
            self.record_error("ending the run of a Spark Connect session", error)

    def parent_of(self, query_execution: QueryExecution) -> JobRef:
        """The run an action is a child of: its Spark Connect client session's, else the
        application's."""
        if not self.every_session:
            return self.application
        try:
            return self.connect.parent_of(query_execution)
        except Exception as error:  # the action is still a run, under the application
            self.record_error("finding the Spark Connect session of an action", error)
            return self.application

    def _capture_action(
        self,
        func_name: str,
        query_execution: QueryExecution,
        duration_ns: int,
        failure: object,
        within: str = "",
    ) -> None:
        """One action, as Spark's listener hands it over (``failure``: the exception of a
        failed action, else None; ``within``: Spark's description of the stream batch it ran
        in): its events, or nothing if it read and changed no dataset. A stream's micro-batch
        (``func_name`` :data:`STREAMING_BATCH`) is always a run."""
        if self.closed:
            return
        batch = batch_of(within) if within else None
        if func_name == STREAMING_BATCH:
            self._capture_batch(query_execution, batch, duration_ns, failure)
            return
        self.watch_catalog()
        try:
            ended = time.time_ns()
            facts = read_action(
                self.context,
                func_name,
                query_execution,
                started_ns=ended - duration_ns,
                ended_ns=ended,
                failure=failure,
                in_batch=batch is not None,
            )
            events = [] if facts is None else self._action_events(facts, query_execution, batch)
            if events:
                self._own_counts.add(CaptureCount.ACTIONS)
                self.submit(events)
        except Exception as error:
            self.record_error(f"capturing the {func_name!r} action", error)

    def _action_events(
        self, facts: ActionFacts, query_execution: QueryExecution, batch: StreamBatch | None
    ) -> list[dict[str, Any]]:
        """An action's events; one run inside a stream batch is that batch's child (and the
        first sign of its query, when capture started after it: the query's START first)."""
        opened = [] if batch is None else self.streams.started(batch, facts.started_ns)
        parent = self.parent_of(query_execution) if batch is None else self.streams.batch_ref(batch)
        return opened + action_events(
            facts,
            parent=parent,
            run_id=new_run_id(),
            spark_version=self.context.spark_version,
            producer=self.config.producer,
            application=None if batch is None else self.application.name,
        )

    def _capture_batch(
        self,
        query_execution: QueryExecution,
        batch: StreamBatch | None,
        duration_ns: int,
        failure: object,
    ) -> None:
        """One micro-batch of a stream: its run, a child of its query's."""
        try:
            ended = time.time_ns()
            if batch is None:
                batch = execution_batch(query_execution)
            facts = read_batch(
                self.context,
                query_execution,
                batch.batch_id,
                started_ns=ended - duration_ns,
                ended_ns=ended,
                failure=failure,
            )
            events = self.streams.started(batch, facts.started_ns)
            events += self.streams.batch_events(batch, facts)
            self._own_counts.add(CaptureCount.ACTIONS)
            self.submit(events)
        except Exception as error:
            self.record_error("capturing a stream's micro-batch", error)

    def _query_event(
        self,
        query_id: str,
        run_id: str,
        name: str | None,
        error: tuple[str, str | None] | None,
        started: bool,
    ) -> None:
        """A streaming query started (its run's START) or terminated (COMPLETE, or FAIL with
        the exception that ended it)."""
        if self.closed:
            return
        try:
            query = StreamBatch(query_id, run_id, -1, name)
            now = time.time_ns()
            if started:
                self.submit(self.streams.started(query, now))
            else:
                self.submit(self.streams.terminated(query, now, error))
        except Exception as error_:
            self.record_error("capturing the start or end of a streaming query", error_)

    def _capture_job(self, job: RddJobFacts) -> None:
        """One Spark job run outside SQL executions (an RDD action), as the job listener hands
        it over after it ended: its events, or nothing when it is no action of its own."""
        if self.closed:
            return
        try:
            events = rdd_job_events(
                job,
                parent=self.application,
                run_id=new_run_id(),
                spark_version=self.context.spark_version,
                config=self.config,
                report=self.report_degraded,
            )
            if events:
                self._own_counts.add(CaptureCount.ACTIONS)
                self.submit(events)
        except Exception as error:
            self.record_error(f"capturing the {job.action!r} job", error)

    def register_jobs(self) -> None:
        """Start hearing of the jobs run outside SQL executions (by :func:`enable`); capture of
        SQL actions goes on without them if that fails."""
        if self.jobs is None:
            return
        try:
            self.jobs.register(self.spark)
        except Exception as error:
            self.jobs = None
            self.record_error("listening to Spark's jobs (RDD actions are not captured)", error)

    def _wait_for_jobs(self, timeout: float | None) -> None:
        """Wait until the jobs that ended so far are captured (within the close budget)."""
        if self.jobs is None:
            return
        try:
            self.jobs.wait_delivered(self._budget(timeout))
        except Exception:  # Spark stopped: its jobs were handed over before it stopped
            log.debug("could not wait for Spark's jobs", exc_info=True)

    def _stop_jobs(self, timeout: float | None) -> None:
        if self.jobs is None:
            return
        try:
            self.jobs.unregister(self.spark, self._budget(timeout))
        except Exception:  # Spark already stopped: nothing to unregister from
            log.debug("could not unregister the job listener (Spark stopped?)", exc_info=True)

    def _budget(self, timeout: float | None) -> float:
        return self.emitter.close_timeout if timeout is None else timeout

    def _emit_application(self, event_type: str, error: BaseException | None = None) -> None:
        producer = self.config.producer
        facets = {"processing_engine": engine_facet(self.context.spark_version, producer)}
        if self.parent is not None:
            facets["parent"] = parent_facet(self.parent, producer)
        if error is not None:
            facets["errorMessage"] = python_error_facet(error, producer)
        event = run_event(
            event_type,
            event_time=timestamp(time.time_ns()),
            job=self.application,
            producer=producer,
            run_facets=facets,
        )
        self.submit([event])


def enable(  # noqa: PLR0913  (keyword-only: one per documented setting, as the config keys)
    spark: SparkSession,
    *,
    namespace: str | None = None,
    app_name: str | None = None,
    parent: str | None = None,
    root_parent: str | None = None,
    output: str | os.PathLike[str] | None = None,
    quarantine: str | os.PathLike[str] | None = None,
    outbox: str | os.PathLike[str] | None = None,
    close_timeout: float | None = None,
    transport: Transport | None = None,
    config: SubsetConfig | None = None,
) -> CaptureHandle:
    """Capture every action of ``spark`` as an OpenLineage run; returns a handle to ``close()``.

    - ``namespace``: the jobs' namespace (``spark.openlineage.namespace``, else
      ``$OPENLINEAGE_NAMESPACE``, else ``default``);
    - ``app_name``: the application's job name, normalized as openlineage-spark does
      (``spark.openlineage.appName``, else the Spark app name: ``Daily Sales`` is ``daily_sales``);
    - ``parent``, ``root_parent``: the run this application is a child of, and the root of its
      hierarchy, as ``namespace/job_name/run_id`` (``spark.openlineage.parentJobNamespace``,
      ``parentJobName``, ``parentRunId`` and ``rootParent...``, else ``$OPENLINEAGE_PARENT_ID``
      and ``$OPENLINEAGE_ROOT_PARENT_ID``); invalid conf or environment values are ignored
      with a ``LineageSettingsWarning``, invalid arguments raise ``ValueError``;
    - ``output``: the JSON Lines file events go to when openlineage-python has no transport
      configured (``$OL_SUBSET_OUTPUT``, else ``openlineage-events.jsonl``); a file that cannot
      be written, or a transport configuration openlineage-python cannot use, is one
      ``LineageSettingsWarning`` and ``openlineage-events.jsonl`` instead, never an error;
    - ``quarantine``: where invalid or rejected events are kept (``$OL_SUBSET_QUARANTINE``,
      else ``<output>.quarantine.jsonl`` beside ``output``, else ``openlineage-quarantine.jsonl``);
    - ``outbox``: the folder every event is kept in until delivered (``$OL_SUBSET_OUTBOX``, else
      ``<output>.outbox``, else ``<quarantine>.outbox`` when a quarantine was given, else
      ``openlineage-outbox``); what it holds from earlier captures is sent first;
    - ``close_timeout``: seconds ``close()`` (and the exit of the program) spends delivering
      before leaving the rest in the outbox (``$OL_SUBSET_CLOSE_TIMEOUT``, else 5);
    - ``transport``: an openlineage-python transport to use instead of the configured one;
    - ``config``: how subset conditions are chosen and bounded, a :class:`SubsetConfig`
      (``config=SubsetConfig(max_partitions=100)``; its defaults when not given).

    Every session of the application is captured, whichever of them is given: the sessions
    ``spark.newSession()`` makes, those of other threads, and those a Spark Connect server
    started in this application makes for its clients; their actions are children of the one
    application run, through a run of its own for each Connect client session
    (``spark/_connect.py``). ``enable()`` on a captured application returns the open handle.

    A Spark Connect client session (``SparkSession.builder.remote(...)``) raises
    :class:`SparkConnectNotSupportedError`: its actions run in the Connect server, whose JVM
    this process cannot reach; capture runs in the server (``ol-subset connect-server``).

    Example::

        handle = enable(spark, namespace="analytics", output="events.jsonl")
        spark.read.parquet("s3a://lake/sales").where("day = '2024-10-15'").count()
        handle.close()   # also runs at interpreter exit
    """
    require_classic(spark, "enable()")
    _require_running(spark)
    # One capture per application, even when threads enable it at the same moment.
    with _ENABLE_LOCK:
        existing = capture_of(spark)
        if existing is not None:
            warnings.warn(
                f"capture is already enabled on this Spark application (application run "
                f"{existing.application.run_id}); returning that handle, whose settings stay: "
                "close() it first to enable capture with other settings",
                LineageSettingsWarning,
                stacklevel=2,
            )
            return existing
        if config is None:
            config = SubsetConfig()
        openlineage_conf = conf_with_prefix(spark, CONF_PREFIX)
        settings = lineage_settings(
            spark.sparkContext.appName or "",
            openlineage_conf,
            os.environ,
            namespace=namespace,
            app_name=app_name,
            parent=parent,
            root_parent=root_parent,
        )
        for message in settings.ignored:
            warnings.warn(message, LineageSettingsWarning, stacklevel=2)
        log.info("lineage settings: %s", settings.sources)
        emitter = open_emitter(
            transport=transport,
            output=output,
            quarantine=quarantine,
            outbox=outbox,
            close_timeout=close_timeout,
        )
        application = settings.application(new_run_id())
        handle = CaptureHandle(
            spark,
            emitter,
            application,
            config,
            settings.namespace,
            parent=settings.parent,
            server_conf={**openlineage_conf, "spark.app.name": spark.sparkContext.appName or ""},
        )
        handle._emit_application("START")
        handle.listener.register(spark)
        handle.register_jobs()
        if not handle.every_session:
            _say_only_this_session()
        handle.watch_catalog()  # now if Spark has its catalog yet, else at a later action
        watch_uncaught(handle)
        atexit.register(close_at_exit, handle)
        with _OPEN_LOCK:
            _OPEN[handle.key] = handle
        return handle


def close_at_exit(handle: CaptureHandle, *, error: BaseException | None = None) -> bool:
    """Close ``handle`` as the program ends, within what is left of the one close budget of
    the process's exit (``EXIT_BUDGET``): two captures delay the exit by one budget, not two."""
    if handle._closing:
        return True
    return handle.close(EXIT_BUDGET.remaining(handle.emitter.close_timeout), error=error)


def _require_running(spark: SparkSession) -> None:
    """Raise ``ValueError`` when ``spark`` was stopped (its SparkContext has no JVM any more)."""
    if is_stopped(spark):
        raise ValueError(
            "enable() was given a stopped SparkSession (spark.stop() ended its application): "
            "there is nothing left to capture; call enable() on a running session, e.g. the "
            "one SparkSession.builder.getOrCreate() returns after the stop"
        )


def capture_of(spark: SparkSession) -> CaptureHandle | None:
    """The open capture that sees the actions of ``spark`` (a classic session), if any."""
    keys = (("application", spark.sparkContext.applicationId), ("session", session_key(spark)))
    with _OPEN_LOCK:
        for key in keys:
            handle = _OPEN.get(key)
            if handle is not None and not handle.closed:
                return handle
    return None


def _say_only_this_session() -> None:
    warn_once(
        "(other sessions)",
        "this installation has no compiled listener for the whole application (the wheel was "
        "built without a Java compiler), so only the session given to enable() is captured: "
        "actions of spark.newSession() sessions and of Spark Connect clients are not; "
        "reinstall openlineage-subset with a JDK's javac on PATH (or JAVA_HOME set), past pip's "
        "cache: pip install --no-cache-dir --force-reinstall --no-deps openlineage-subset",
    )
