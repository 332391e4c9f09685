"""Capture for every SparkSession a program creates, without changing the program.

``ol-subset run`` wraps ``SparkSession.builder.getOrCreate`` for the script's duration: each new
session gets :func:`~openlineage_subset.spark.enable`. A Spark Connect session has no JVM in
this process to capture from: the caller is told once per session, and the session runs on
uncaptured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openlineage_subset.spark._capture import CaptureHandle, enable
from openlineage_subset.spark._jvm import is_spark_connect, session_key


class NewSessionCapture:
    """Enable capture on every SparkSession built from now until :meth:`stop`.

    ``on_connect`` is called once for each Spark Connect session built (it is not captured).

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

        self._handles: dict[int, CaptureHandle] = {}
        self._connect_sessions: set[int] = set()
        builder: Any = SparkSession.Builder  # typed loosely: its method is replaced
        self._builder = builder
        original = self._original = builder.getOrCreate

        def get_or_create(builder: Any) -> Any:
            session = original(builder)
            if is_spark_connect(session):  # no JVM here to capture from: say so, run uncaptured
                if id(session) not in self._connect_sessions:
                    self._connect_sessions.add(id(session))
                    on_connect()
                return session
            key = session_key(session)
            if key not in self._handles:
                self._handles[key] = enable(session, output=output, namespace=namespace)
            return session

        builder.getOrCreate = get_or_create

    def stop(self) -> list[CaptureHandle]:
        """Stop wrapping the builder; the captures it opened, in the order they were opened
        (still open: the caller closes them)."""
        self._builder.getOrCreate = self._original
        return list(self._handles.values())
