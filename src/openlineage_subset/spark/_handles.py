"""The Spark objects the adapter's signatures name that PySpark has no Python type for."""

from __future__ import annotations

from typing import Protocol


class QueryExecution(Protocol):
    """Spark's ``QueryExecution`` of one query (``org.apache.spark.sql.execution``), as Python
    holds it: a handle on the JVM object, whose methods only the JVM layer calls.

    A marker for signatures and readers, not a check: the handle has no Python type to check
    against, so the calls that take one check at run time and raise ``TypeError`` for anything
    else. A Python ``QueryExecutionListener`` receives one per action, after it ran.

    Example (inside such a listener)::

        def onSuccess(self, func_name: str, query_execution: QueryExecution, duration_ns: int):
            print(output_datasets(query_execution))
    """
