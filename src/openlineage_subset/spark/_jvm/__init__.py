"""The JVM layer: everything the adapter reads from Spark's JVM through py4j, in a few bulk
calls per scan. Only this package names py4j or the JVM handles PySpark keeps.

A plan is walked node by node (its class and children), filter expressions cross as one
``toJSON()`` string each, and the partitions a scan selected cross as one string (the file
index's pruned ``PartitionPath`` list), whatever their number. The calls made per plan are
bounded by its size, never by the number of partitions or files. The rest of the adapter is
pure Python and works on the facts (``spark/_facts.py``) this package returns.

Which module holds what:

- ``_bridge``: reaching the JVM (classes and members looked up once per JVM), reading values
  back in bulk (``strings_of``, ``string_of``, ``string_map``, ``decoded``), resolving paths
  (``qualified_path``), and ``JvmCallback``, the base of the objects the JVM calls back;
- ``_plans``: the walk of a physical plan (``plan_facts``, ``scan_facts``, ``scan_key``), with
  the scans of cached plans remembered;
- ``_scans``: reading one scan (file, DataSource V2 file and Hive table scans), the filters
  above it and the partition directories it kept;
- ``_jdbc``: a JDBC read's or write's database and table, and the filters the database
  applied;
- ``_writes``: what one executed write command wrote (``write_facts``);
- ``_streams``: a stream's micro-batch: its sink, and the files a file sink committed in it
  (``sink_facts``), from the sink's own record of the batch;
- ``_catalog``: the watch on the external catalog (``CatalogWatch``) and catalog tables;
- ``_statements``: what a DDL, ``LOAD DATA`` or DataSource V2 write statement changed
  (``change_facts``, one reader per command, and ``v2_write_facts``);
- ``_application``: ``ApplicationListener``, which hands the actions of every session of the
  application to capture, through the package's one Java class (``java/``, compiled into
  ``classes/`` by the build: it forwards the end of each SQL execution and drops every other
  listener event in the JVM);
- ``_jobs``: ``JobListener``, which hands the jobs run outside SQL executions (RDD actions)
  to capture, through a second instance of the Java class on a queue of its own;
- ``_rdds``: what such a job read and wrote, from its RDD graph (``job_facts``), and what the
  RDD under a DataFrame read (``rdd_reads``, for a plan's RDD scans);
- ``_connect``: Spark Connect as the server's JVM knows it: which client session a query ran
  in, its settings and end, the server's port, and stopping it;
- ``_session``: a session's identity and conf, Spark Connect detection, the listener bus, and
  ``ActionListener``, one session's ``QueryExecutionListener`` (where the Java class is
  missing);
- ``_errors``: the errors a failing Spark raises, and their text;
- ``_failures``: a failed action's query, read without making any of it again (whether its
  executed plan was made; the datasets its parsed plan names);
- ``_probes``: what the benchmarks reach in the JVM to measure capture (round trips, jobs run
  in the JVM alone, listeners that only count); capture never uses it.
"""

from __future__ import annotations

from openlineage_subset.producer import scrubbed_logger
from openlineage_subset.spark._jvm._application import (
    ApplicationListener,
    application_listener_available,
)
from openlineage_subset.spark._jvm._catalog import CatalogWatch
from openlineage_subset.spark._jvm._connect import (
    PLUGIN,
    ConnectSession,
    closed_session,
    connect_server_port,
    connect_service,
    find_session,
    session_conf,
    session_uuid,
    stop_connect_server,
)
from openlineage_subset.spark._jvm._errors import first_error_line, java_error_text, spark_errors
from openlineage_subset.spark._jvm._failures import (
    ANALYSIS_FAILED,
    executed_plan_made,
    named_relations,
)
from openlineage_subset.spark._jvm._jobs import JobListener
from openlineage_subset.spark._jvm._plans import PlanFacts, plan_facts, scan_facts
from openlineage_subset.spark._jvm._session import (
    ActionListener,
    OnAction,
    SparkConnectNotSupportedError,
    conf_with_prefix,
    drain_listener_bus,
    is_spark_connect,
    is_stopped,
    query_execution_of,
    require_classic,
    session_key,
)
from openlineage_subset.spark._jvm._statements import (
    CHANGE_ROOTS,
    CLOCK_SLACK_MS,
    V2_WRITE_ROOTS,
    change_facts,
    v2_write_facts,
)
from openlineage_subset.spark._jvm._streams import execution_batch, sink_facts
from openlineage_subset.spark._jvm._writes import write_facts

log = scrubbed_logger("openlineage_subset.spark")

__all__ = [
    "ANALYSIS_FAILED",
    "CHANGE_ROOTS",
    "CLOCK_SLACK_MS",
    "PLUGIN",
    "V2_WRITE_ROOTS",
    "ActionListener",
    "ApplicationListener",
    "CatalogWatch",
    "ConnectSession",
    "JobListener",
    "OnAction",
    "PlanFacts",
    "SparkConnectNotSupportedError",
    "application_listener_available",
    "change_facts",
    "closed_session",
    "conf_with_prefix",
    "connect_server_port",
    "connect_service",
    "drain_listener_bus",
    "executed_plan_made",
    "execution_batch",
    "find_session",
    "first_error_line",
    "is_spark_connect",
    "is_stopped",
    "java_error_text",
    "named_relations",
    "plan_facts",
    "query_execution_of",
    "require_classic",
    "scan_facts",
    "session_conf",
    "session_key",
    "session_uuid",
    "sink_facts",
    "spark_errors",
    "stop_connect_server",
    "v2_write_facts",
    "write_facts",
]
"""What the rest of the adapter uses; the modules above hold the rest, for the layer itself."""
