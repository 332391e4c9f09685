"""What one capture's parts are given to work with, fixed when capture is enabled.

:class:`CaptureContext` is built once by the capture's handle (``_capture``) and handed to the
parts that make runs: a Spark Connect client session's run (``_connect``) and an action's
(``_actions``). It carries the application run, the settings, and the handle's few doors back
(``submit``, ``report_degraded``, ``record_error``) as plain callables, so that these parts
never reach through the handle, and the handle imports them without their importing it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from openlineage_subset.producer import JobRef
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._jvm import CatalogWatch

if TYPE_CHECKING:  # the spark extra
    from pyspark.sql import SparkSession

_Part = TypeVar("_Part")

Submit = Callable[[list[dict[str, Any]]], None]
"""``submit(events)``: send events (each bounded to ``max_event_bytes`` first)."""
ReportDegraded = Callable[[str, str], None]
"""``report_degraded(dataset, what)``: count a dataset that lost its subset facet or its
place, and say so once."""
RecordError = Callable[[str, BaseException], None]
"""``record_error(context, error)``: count an error of capture's own, and log its kind once."""


@dataclass(frozen=True, kw_only=True)
class CaptureContext:
    """One capture's application run, settings and ways to send and to report, as a run of a
    Connect client session or of an action needs them.

    Example (``handle`` an open capture's handle)::

        context = handle.context
        context.submit([event])      # bounded, validated, delivered as every other event
    """

    spark: SparkSession
    """The session capture was enabled on: the application's JVM, for the JVM layer."""
    spark_version: str
    """Spark's version, for the ``processing_engine`` facet (read once)."""
    application: JobRef
    """The application's run: the parent of every run that has no closer one."""
    namespace: str
    """The namespace of the application's jobs (and of a Connect session's, unless its client
    set one)."""
    config: SubsetConfig
    server_conf: Mapping[str, str]
    """The application's ``spark.openlineage.*`` conf and ``spark.app.name``: what a Spark
    Connect client's session inherits without setting it."""
    catalog_watch: CatalogWatch
    """Where tables lived before DROP TABLE and RENAME (the capture's one watch)."""
    submit: Submit
    report_degraded: ReportDegraded
    record_error: RecordError

    @property
    def producer(self) -> str:
        """The ``producer`` URI of every event and facet."""
        return self.config.producer

    def guarded(self, doing: str, func_name: str, work: Callable[[], list[_Part]]) -> list[_Part]:
        """``work()``, or nothing if it fails (the error counted and logged once per kind)."""
        try:
            return work()
        except Exception as error:
            self.record_error(f"{doing} the {func_name!r} action", error)
            return []
