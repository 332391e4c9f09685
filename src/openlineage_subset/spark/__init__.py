"""PySpark adapter: subset facets from Spark's own query plans.

``input_datasets(df)`` tells which datasets a DataFrame reads and which part of each: the
partitions left after pruning, the locations read, or the row filter Spark applied.
``output_datasets(query_execution)`` tells which partitions a write created. ``enable(spark)``
turns every action into an OpenLineage run carrying both.

>>> from openlineage_subset.spark import SubsetConfig
>>> SubsetConfig().max_partitions
1000

The second part of ``__all__`` is internal to the package: what ``cli`` uses of this room
(closing captures at exit, a Spark error's text, the Java listener's availability, the Spark
Connect server of ``ol-subset connect-server``) and the probes ``benchmarks/`` measure capture
with, never promised to users.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openlineage_subset_generated.latest import InputDataset, OutputDataset

from openlineage_subset.producer import LineageSettingsWarning, TrimRules
from openlineage_subset.spark._capture import CaptureHandle, close_at_exit, enable
from openlineage_subset.spark._config import PRODUCER, SubsetConfig
from openlineage_subset.spark._errors import first_error_line, spark_errors
from openlineage_subset.spark._handles import QueryExecution
from openlineage_subset.spark._jvm import (
    SparkConnectNotSupportedError,
    query_execution_of,
    scan_facts,
    write_facts,
)
from openlineage_subset.spark._jvm._application import (
    EXECUTION_END,
    QUEUE,
    ApplicationListener,
    application_listener_available,
    forwarder_proxy,
)
from openlineage_subset.spark._jvm._probes import (
    JobLookupListener,
    RoundTripCounter,
    count_in_jvm,
    execute_plan,
    forward_jobs_on,
    jvm_process_id,
    listen_on_bus,
    listen_to_every_event,
    listen_to_other_events,
    listen_to_session,
    query_listener_count,
    start_callback_server,
)
from openlineage_subset.spark._jvm._session import drain_listener_bus
from openlineage_subset.spark._loopback import local_session_on_loopback
from openlineage_subset.spark._reads import input_datasets_from_scans
from openlineage_subset.spark._server import start_connect_server
from openlineage_subset.spark._sessions import NewSessionCapture
from openlineage_subset.spark._writes import output_datasets_from_writes

if TYPE_CHECKING:  # the spark extra: this module imports without it
    from pyspark.sql import DataFrame


def input_datasets(
    df_or_query_execution: DataFrame | QueryExecution, config: SubsetConfig | None = None
) -> list[InputDataset]:
    """The datasets a DataFrame (or an executed QueryExecution) reads, with ``subset`` facets.

    One ``InputDataset`` per distinct dataset; its ``subset`` input facet holds the condition
    chosen for what was read (see :class:`SubsetConfig`). On a DataFrame nothing runs: the
    planned scans are used. On the QueryExecution of an action that ran (as a
    QueryExecutionListener receives it), runtime decisions are used too, such as the partitions
    dynamic partition pruning kept. ``openlineage_subset.dump()`` gives the OpenLineage JSON.
    A DataFrame of a Spark Connect session raises :class:`SparkConnectNotSupportedError`: its
    plan lives in the Connect server.

    Example (with a running SparkSession ``spark``)::

        df = spark.read.parquet("s3a://lake/sales").where("business_date = '2024-10-15'")
        [dump(d) for d in input_datasets(df)]
        # [{'namespace': 's3://lake', 'name': 'sales', 'inputFacets': {'subset': {...
        #   'inputCondition': {'type': 'partition', 'partitions': [...]}}}}]
    """
    query_execution, executed = query_execution_of(df_or_query_execution, "input_datasets()")
    return input_datasets_from_scans(scan_facts(query_execution, executed=executed), config)


def output_datasets(
    query_execution: QueryExecution,
    config: SubsetConfig | None = None,
    *,
    started_ms: int | None = None,
) -> list[OutputDataset]:
    """The datasets an executed write (its JVM QueryExecution) wrote, with ``subset`` facets.

    The facet lists the partitions the write created; unpartitioned writes get none. How
    they are found, and the cost, is described in ``openlineage_subset.spark._writes``: a
    static partition spec is used as is, else one listing of the output's partition
    directories picks the files of this write (by its job UUID, checked against Spark's write
    metrics). ``started_ms``, when the action started (epoch milliseconds), narrows that
    listing to recent files; a QueryExecutionListener knows it (``enable`` passes it).
    """
    query_execution, _ = query_execution_of(query_execution, "output_datasets()")
    return output_datasets_from_writes(write_facts(query_execution), started_ms, config)


__all__ = [
    "PRODUCER",
    "CaptureHandle",
    "LineageSettingsWarning",
    "QueryExecution",
    "SparkConnectNotSupportedError",
    "SubsetConfig",
    "TrimRules",
    "enable",
    "input_datasets",
    "output_datasets",
]
# Internal to the package: for its other rooms, not user API (the module's docstring).
__all__ += [
    "EXECUTION_END",
    "QUEUE",
    "ApplicationListener",
    "NewSessionCapture",
    "application_listener_available",
    "close_at_exit",
    "first_error_line",
    "forwarder_proxy",
    "local_session_on_loopback",
    "spark_errors",
    "start_connect_server",
]
# Internal too: what benchmarks/ measure capture with (the JVM's side of it); capture never
# uses these.
__all__ += [
    "JobLookupListener",
    "RoundTripCounter",
    "count_in_jvm",
    "drain_listener_bus",
    "execute_plan",
    "forward_jobs_on",
    "jvm_process_id",
    "listen_on_bus",
    "listen_to_every_event",
    "listen_to_other_events",
    "listen_to_session",
    "query_listener_count",
    "start_callback_server",
]
