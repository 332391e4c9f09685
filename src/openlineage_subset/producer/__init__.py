"""The producer room: what any OpenLineage producer needs besides the SDK, nothing of Spark.

- ``_events``: run events and their run facets (parent, processing engine, error), job names;
- ``_naming``: dataset names and namespaces as the OpenLineage naming spec gives them;
- ``_jdbc`` and ``_sql_tables``: a JDBC table's name, and the tables a SQL query reads;
- ``_secrets``: credentials scrubbed from every text that leaves the process;
- ``_budget`` and ``_condense``: one byte budget per event, lists condensed soundly to fit it;
- ``_settings``: the job namespace, application name and parent run, from arguments,
  ``spark.openlineage.*`` conf and the environment (``LineageSettingsWarning``);
- ``_degrade``: a dataset that lost its precision, said once;
- ``_excepthook``: an uncaught exception marks the open captures failed;
- ``_hosts``: whether a host is this machine's loopback.

Arrows point down: ``spark``, ``delivery``, ``lineage``, ``report``, ``service`` and ``cli`` use
this room, through the names below; it uses only the SDK. The whole face is internal to the
package (for the package's other rooms, not user API), except :class:`LineageSettingsWarning` and
:class:`TrimRules`, which users get from :mod:`openlineage_subset.spark`.
"""

from openlineage_subset.producer._budget import MIN_EVENT_BYTES, bound_event
from openlineage_subset.producer._condense import (
    condense,
    condense_locations,
    condense_partitions,
    json_size,
)
from openlineage_subset.producer._degrade import Report, warn_once
from openlineage_subset.producer._events import (
    EVENT_TYPES,
    FAILED_EVENT_TYPES,
    TERMINAL_EVENT_TYPES,
    JobRef,
    engine_facet,
    error_facet,
    job_name,
    normalize_name,
    parent_facet,
    python_error_facet,
    run_event,
    start_and_end,
    timestamp,
)
from openlineage_subset.producer._excepthook import forget as forget_uncaught
from openlineage_subset.producer._excepthook import watch as watch_uncaught
from openlineage_subset.producer._hosts import is_loopback
from openlineage_subset.producer._jdbc import jdbc_dataset
from openlineage_subset.producer._naming import (
    DEFAULT_TRIM_RULES,
    NULL_PARTITION,
    TrimRules,
    clean_location,
    dataset_identity,
    dataset_label,
    glob_root,
    partition_dimensions,
    partition_path,
    split_dataset_root,
    unescape_path_name,
)
from openlineage_subset.producer._secrets import (
    MARKER,
    is_secret_name,
    scrub_logs_under,
    scrub_text,
    scrubbed_logger,
    user_info_end,
)
from openlineage_subset.producer._settings import (
    CONF_PREFIX,
    LineageSettingsWarning,
    lineage_settings,
)
from openlineage_subset.producer._sql_tables import tables_of_dbtable, tables_of_query

__all__ = [
    "CONF_PREFIX",
    "DEFAULT_TRIM_RULES",
    "EVENT_TYPES",
    "FAILED_EVENT_TYPES",
    "MARKER",
    "MIN_EVENT_BYTES",
    "NULL_PARTITION",
    "TERMINAL_EVENT_TYPES",
    "JobRef",
    "LineageSettingsWarning",
    "Report",
    "TrimRules",
    "bound_event",
    "clean_location",
    "condense",
    "condense_locations",
    "condense_partitions",
    "dataset_identity",
    "dataset_label",
    "engine_facet",
    "error_facet",
    "forget_uncaught",
    "glob_root",
    "is_loopback",
    "is_secret_name",
    "jdbc_dataset",
    "job_name",
    "json_size",
    "lineage_settings",
    "normalize_name",
    "parent_facet",
    "partition_dimensions",
    "partition_path",
    "python_error_facet",
    "run_event",
    "scrub_logs_under",
    "scrub_text",
    "scrubbed_logger",
    "split_dataset_root",
    "start_and_end",
    "tables_of_dbtable",
    "tables_of_query",
    "timestamp",
    "unescape_path_name",
    "user_info_end",
    "warn_once",
    "watch_uncaught",
]
