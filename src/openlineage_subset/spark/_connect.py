"""Spark Connect client sessions as runs: each one the parent run of its own actions.

A Spark Connect server runs many clients' queries in one application. Capture sees them all
(``_jvm/_application``); this module gives each client session a run of its own, the parent of
that session's actions, so that sessions of different clients never share a parent:

- its job is named after what the client told the server: its session's
  ``spark.openlineage.appName``, else ``spark.app.name`` when the client set it, else the user
  and session ids (``alice_<session id>``); its namespace is the session's
  ``spark.openlineage.namespace``, else the server's;
- its parent is the run the client named with ``spark.openlineage.parentJobNamespace``,
  ``parentJobName`` and ``parentRunId`` (``spark.conf.set`` before the session's first action),
  else the server's application run;
- it STARTs (dated when the session started) with the session's first action, and ends when
  the server closes the session: COMPLETE when the client stopped it (``spark.stop()``), ABORT
  when the client left without stopping and the server closed it after its session timeout
  (the ``errorMessage`` facet says so), ABORT when the server stops with the session open.

Settings a client set that cannot be used are ignored, as in a classic application, and said
once in the server's log. A session of the server's own (not a client's) runs under the
application run, as any classic session.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from openlineage_subset.delivery import new_run_id
from openlineage_subset.producer import (
    CONF_PREFIX,
    JobRef,
    engine_facet,
    error_facet,
    lineage_settings,
    parent_facet,
    run_event,
    scrubbed_logger,
    timestamp,
)
from openlineage_subset.spark._context import CaptureContext
from openlineage_subset.spark._handles import QueryExecution
from openlineage_subset.spark._jvm import (
    ConnectSession,
    closed_session,
    connect_service,
    find_session,
    session_conf,
    session_uuid,
)

log = scrubbed_logger("openlineage_subset.spark")

EXPIRED_SHARE = 0.9
"""A session closed after at least this share of its timeout unused was closed by the server
(the client did not stop it); one the client stops is closed right after its last use."""


@dataclass(frozen=True)
class SessionRun:
    """The run of one client session."""

    job: JobRef
    parent: JobRef
    """The run the session's run is a child of: the client's, or the server application's."""
    session: ConnectSession
    server_session_id: str
    """The id of the server-side session its queries run in."""


class ConnectSessions:
    """The runs of the Connect client sessions of one capture (see the module docstring)."""

    def __init__(self, context: CaptureContext) -> None:
        self._context = context
        self._parents: dict[str, JobRef] = {}
        """The parent run of each server-side session seen (the application run for a session
        that is not a client's)."""
        self._runs: dict[tuple[str, str], SessionRun] = {}
        """The started runs, by (user id, session id)."""
        self._lock = threading.Lock()
        self._without_connect = False
        self._stopping = False

    def stopping(self) -> None:
        """The server is stopping: the sessions it closes from now on did not end by
        themselves."""
        self._stopping = True

    def parent_of(self, query_execution: QueryExecution) -> JobRef:
        """The run an action of ``query_execution``'s session is a child of."""
        if self._without_connect:  # no Connect server: no round trip per action to ask
            return self._context.application
        uuid = session_uuid(query_execution)
        with self._lock:
            known = self._parents.get(uuid)
        if known is not None:
            return known
        parent = self._context.application
        session = None
        try:
            service = connect_service(self._context.spark)
        except Exception:  # a Spark without Connect's classes (PySpark 3.5): never again
            service = None
        if service is None:
            # The plugin is a static setting of the application: no server now, none later.
            self._without_connect = True
        else:
            session = find_session(service, uuid)
        if session is not None:
            run = self._start(session, uuid, query_execution)
            parent = run.job
        with self._lock:
            return self._parents.setdefault(uuid, parent)

    def _start(
        self, session: ConnectSession, uuid: str, query_execution: QueryExecution
    ) -> SessionRun:
        context = self._context
        server = context.server_conf
        told = {
            key: value
            for key, value in session_conf(query_execution, CONF_PREFIX).items()
            if server.get(key) != value
        }
        who = "_".join(part for part in (session.user_id, session.session_id) if part)
        settings = lineage_settings(told.get("spark.app.name", who), told, {})
        for message in settings.ignored:
            log.warning("Spark Connect session %s: %s", session.session_id, message)
        namespace = settings.namespace if CONF_PREFIX + "namespace" in told else context.namespace
        parent = settings.parent
        if parent is None:
            parent = context.application
        root = parent.root if parent.root is not None else parent
        job = JobRef(namespace, settings.application_name, new_run_id(), root)
        run = SessionRun(job, parent, session, uuid)
        with self._lock:
            self._runs[(session.user_id, session.session_id)] = run
        producer = context.producer
        context.submit(
            [
                run_event(
                    "START",
                    event_time=timestamp(session.started_ms * 1_000_000),
                    job=job,
                    producer=producer,
                    run_facets={
                        "parent": parent_facet(parent, producer),
                        "processing_engine": engine_facet(context.spark_version, producer),
                    },
                )
            ]
        )
        log.info(
            "Spark Connect session %s of user %r: run %s of job %s",
            session.session_id,
            session.user_id,
            job.run_id,
            job.name,
        )
        return run

    def ended(self, user_id: str, session_id: str, event_time_ms: int) -> None:
        """The server closed a client session: its run ends (if it had one: an action)."""
        with self._lock:
            run = self._runs.pop((user_id, session_id), None)
            if run is not None:
                self._parents.pop(run.server_session_id, None)
        if run is None:
            return
        if self._stopping:
            self._end(run, "ABORT", event_time_ms, _server_stopped(run))
            return
        service = connect_service(self._context.spark)
        closed = None if service is None else closed_session(service, user_id, session_id)
        last_use = (closed or run.session).last_access_ms
        timeout = (closed or run.session).timeout_ms
        unused_ms = event_time_ms - last_use
        if unused_ms >= EXPIRED_SHARE * timeout:
            why = (
                f"the client left without stopping its Spark Connect session {session_id}: the "
                f"server closed it after {unused_ms / 1000:.0f} s unused (its session timeout "
                f"is {timeout / 1000:.0f} s)"
            )
            self._end(run, "ABORT", event_time_ms, why)
        else:
            self._end(run, "COMPLETE", event_time_ms, None)

    def close(self) -> None:
        """The server stops: the sessions still open end ABORT."""
        with self._lock:
            runs, self._runs = list(self._runs.values()), {}
        now_ms = time.time_ns() // 1_000_000
        for run in runs:
            self._end(run, "ABORT", now_ms, _server_stopped(run))

    def _end(self, run: SessionRun, event_type: str, at_ms: int, why: str | None) -> None:
        context = self._context
        producer = context.producer
        facets = {
            "parent": parent_facet(run.parent, producer),
            "processing_engine": engine_facet(context.spark_version, producer),
        }
        if why is not None:
            facets["errorMessage"] = error_facet(why, None, producer, language="PYTHON")
        ending = event_type if why is None else f"{event_type}: {why}"
        session_id, run_id = run.session.session_id, run.job.run_id
        log.info("Spark Connect session %s: run %s %s", session_id, run_id, ending)
        context.submit(
            [
                run_event(
                    event_type,
                    event_time=timestamp(at_ms * 1_000_000),
                    job=run.job,
                    producer=producer,
                    run_facets=facets,
                )
            ]
        )


def _server_stopped(run: SessionRun) -> str:
    return f"the Spark Connect server stopped while session {run.session.session_id} was open"
