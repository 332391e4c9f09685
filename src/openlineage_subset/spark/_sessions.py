"""Capture for every Spark application a program starts, without changing the program.

``ol-subset run`` wraps the classic ``SparkSession`` constructor and
``SparkSession.builder.getOrCreate`` for the script's duration: the first session of an
application the script makes or gets (``builder.getOrCreate()``, ``SparkSession(sc)``, PySpark
starting a local Spark Connect server for ``builder.remote("local")``) gets
:func:`~openlineage_subset.spark.enable`, which captures every session of that application
from then on. A Spark Connect session whose server runs
elsewhere has no JVM in this process to capture from: the caller is told once per session,
and the session runs on uncaptured. A session that starts a Spark of this machine binds its
driver, block manager and web UI to loopback (:mod:`._loopback`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from openlineage_subset.spark._capture import CaptureHandle, capture_of, enable
from openlineage_subset.spark._jvm import is_spark_connect
from openlineage_subset.spark._loopback import local_session_on_loopback


class NewSessionCapture:
    """Enable capture on every Spark application started from now until :meth:`stop`.

    ``on_connect`` is called once for each Spark Connect session built whose server is not in
    this process (it is not captured here).

    Example::

        sessions = NewSessionCapture(output="events.jsonl", namespace=None,
                                     on_connect=lambda: None)
        try:
            run_the_program()
        finally:
            for handle in sessions.stop():
                handle.close()
    """

    def __init__(
        self, *, output: str | None, namespace: str | None, on_connect: Callable[[], None]
    ) -> None:
        from pyspark.sql import SparkSession  # noqa: PLC0415  (the spark extra)

        self._handles: list[CaptureHandle] = []
        self._seen: set[int] = set()
        """The Spark Connect sessions said to be uncaptured."""
        # Typed loosely: their methods are replaced for the script's duration.
        classic: Any = SparkSession
        builder_class: Any = SparkSession.Builder
        self._classic, self._builder = classic, builder_class
        original_init = self._original_init = classic.__init__
        original_get = self._original_get = builder_class.getOrCreate

        def captured(session: Any) -> None:
            if is_spark_connect(session):
                if not self._serves_connect() and id(session) not in self._seen:
                    self._seen.add(id(session))  # no JVM here to capture from: say so
                    on_connect()
            elif capture_of(session) is None:
                handle = enable(session, output=output, namespace=namespace)
                if handle not in self._handles:  # another thread's enable() came first
                    self._handles.append(handle)

        def init(session: Any, *args: Any, **kwargs: Any) -> None:
            original_init(session, *args, **kwargs)
            captured(session)

        def get_or_create(builder: Any) -> Any:
            with local_session_on_loopback(builder):  # a Spark of this machine: on loopback
                session = original_get(builder)  # an existing session is not made anew
            captured(session)
            return session

        classic.__init__ = init
        builder_class.getOrCreate = get_or_create

    def _serves_connect(self) -> bool:
        """Whether the Spark Connect server of this process's clients runs here, captured:
        PySpark started it in this process (``builder.remote("local...")`` sets
        ``SPARK_LOCAL_REMOTE``), and starting it made a classic session, which got capture."""
        return os.environ.get("SPARK_LOCAL_REMOTE") == "1" and any(
            not handle.closed for handle in self._handles
        )

    def stop(self) -> list[CaptureHandle]:
        """Stop wrapping; the captures opened, in the order they were opened (still open: the
        caller closes them)."""
        self._classic.__init__ = self._original_init
        self._builder.getOrCreate = self._original_get
        return list(self._handles)
