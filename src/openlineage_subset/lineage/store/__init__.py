"""The lineage database: one SQLite file, its layout and upgrades, its settings, and what the
store keeps besides reads and writes (a dataset's other names, a run's parents, facets).

- ``_database``: ``LineageStore`` (opening, refusing a foreign file, locks, the write
  transaction) and ``opened``, which every query uses;
- ``_layout``: the tables as one SQL script and the layout's version; ``_upgrades``: older
  layouts brought to it;
- ``_settings``: the store's settings, kept in the file;
- ``_dataset_names``: one dataset, many names (``Alias``; which dataset a name means);
- ``_run_parents``: each run's parent, root and orchestrator task;
- ``_facets``: the facets kept of each event, compressed, for the pages;
- ``_ranges``: the rows of the index of reads by their ranges of dates;
- ``_prune``: retention, the runs before a time removed (``prune``), and the note answers give.

Other sub-rooms import these names from here; modules of the room import each other.
"""

from openlineage_subset.lineage.store._database import (
    LOCK_WAIT,
    Database,
    LineageDatabaseError,
    LineageStore,
    ReadCounts,
    is_busy,
    locked_message,
    open_store,
    opened,
)
from openlineage_subset.lineage.store._dataset_names import (
    TABLE,
    Alias,
    also_named,
    kept_apart_notes,
    names_of,
    other_names,
)
from openlineage_subset.lineage.store._facets import (
    MAX_KEPT_BYTES,
    NOT_KEPT,
    facets_of,
    kept_facets,
)
from openlineage_subset.lineage.store._layout import (
    ADD_COUNTS,
    APPLICATION_ID,
    LATEST_ACCESSES,
    SCHEMA_VERSION,
)
from openlineage_subset.lineage.store._prune import (
    PRUNED_BEFORE,
    PruneReport,
    prune,
    pruned_before,
    pruned_note,
)
from openlineage_subset.lineage.store._ranges import (
    DELETE_RANGE,
    INSERT_RANGE,
    range_row,
    stored_range_rows,
)
from openlineage_subset.lineage.store._run_parents import (
    AIRFLOW,
    PARENT_COLUMNS,
    UPSERT_PARENTS,
    RunParents,
    merged_parents,
    parents_row,
    run_parents,
)
from openlineage_subset.lineage.store._settings import (
    OTHER_NAMES,
    OTHER_NAMES_CHOICES,
    PARTITION_DIRECTORIES,
    PARTITION_DIRECTORIES_CHOICES,
    SETTINGS,
    groups_directories,
    joins_other_names,
    partition_directories,
    set_partition_directories,
    set_setting,
    setting,
)

__all__ = [
    "ADD_COUNTS",
    "AIRFLOW",
    "APPLICATION_ID",
    "DELETE_RANGE",
    "INSERT_RANGE",
    "LATEST_ACCESSES",
    "LOCK_WAIT",
    "MAX_KEPT_BYTES",
    "NOT_KEPT",
    "OTHER_NAMES",
    "OTHER_NAMES_CHOICES",
    "PARENT_COLUMNS",
    "PARTITION_DIRECTORIES",
    "PARTITION_DIRECTORIES_CHOICES",
    "PRUNED_BEFORE",
    "SCHEMA_VERSION",
    "SETTINGS",
    "TABLE",
    "UPSERT_PARENTS",
    "Alias",
    "Database",
    "LineageDatabaseError",
    "LineageStore",
    "PruneReport",
    "ReadCounts",
    "RunParents",
    "also_named",
    "facets_of",
    "groups_directories",
    "is_busy",
    "joins_other_names",
    "kept_apart_notes",
    "kept_facets",
    "locked_message",
    "merged_parents",
    "names_of",
    "open_store",
    "opened",
    "other_names",
    "parents_row",
    "partition_directories",
    "prune",
    "pruned_before",
    "pruned_note",
    "range_row",
    "run_parents",
    "set_partition_directories",
    "set_setting",
    "setting",
    "stored_range_rows",
]
