"""The lineage room's vocabulary, without a database: the answers as frozen records, conditions
read as data, times, sides and the errors of a question.

- ``_answers``: the answers of the queries (``ImpactReport``, ``ProvenanceReport``, ...) and
  their JSON;
- ``_conditions``: what a condition's JSON says without the database (units, listings, dates);
- ``_condition_json``: conditions and partitions spelled once, the partitions a condition lists;
- ``_condition_text``: conditions as the answers show them;
- ``_bounds``: the date ranges a read's condition keeps;
- ``_time``, ``_sides``, ``_errors``: stored times, the side of a run a dataset is on, and
  ``LineageQueryError``.

Other sub-rooms import these names from here; modules of the room import each other.
"""

from openlineage_subset.lineage.model._answers import (
    AffectedRun,
    DatasetRef,
    Dimensions,
    HistoryEntry,
    HistoryReport,
    ImpactReport,
    Label,
    OrchestratorTask,
    PartitionRef,
    PartitionSet,
    PartitionsReport,
    PartitionState,
    ProvenanceInput,
    ProvenanceReport,
    ProvenanceStep,
    RunRef,
    TaskRerun,
    indented_json,
    job_text,
    stronger,
)
from openlineage_subset.lineage.model._bounds import (
    date_bounds,
    range_key,
    range_probes,
    read_bounds,
)
from openlineage_subset.lineage.model._condition_json import (
    any_of_json,
    canonical,
    dimensions_columns_kinds,
    dimensions_text,
    listed_partitions,
)
from openlineage_subset.lineage.model._condition_text import AccessConditions, ConditionText
from openlineage_subset.lineage.model._conditions import (
    UNDECIDED,
    ConditionNode,
    Unit,
    Values,
    all_text,
    canonical_unit,
    column_order,
    compares_as_text,
    compile_condition,
    date_spans,
    dimensions_of,
    equality_key,
    excludes_location,
    in_column_order,
    listed_places,
    lists_no_partition,
    location_paths,
    named_columns,
    only_partitions,
    places_around,
    plain_values,
    quick_overlap,
    sort_key,
    value_kind,
)
from openlineage_subset.lineage.model._errors import (
    AnswerTooLarge,
    LineageQueryError,
    UnknownPartitionColumnError,
)
from openlineage_subset.lineage.model._sides import Side
from openlineage_subset.lineage.model._time import normal_time, shown_time

__all__ = [
    "UNDECIDED",
    "AccessConditions",
    "AffectedRun",
    "AnswerTooLarge",
    "ConditionNode",
    "ConditionText",
    "DatasetRef",
    "Dimensions",
    "HistoryEntry",
    "HistoryReport",
    "ImpactReport",
    "Label",
    "LineageQueryError",
    "OrchestratorTask",
    "PartitionRef",
    "PartitionSet",
    "PartitionState",
    "PartitionsReport",
    "ProvenanceInput",
    "ProvenanceReport",
    "ProvenanceStep",
    "RunRef",
    "Side",
    "TaskRerun",
    "Unit",
    "UnknownPartitionColumnError",
    "Values",
    "all_text",
    "any_of_json",
    "canonical",
    "canonical_unit",
    "column_order",
    "compares_as_text",
    "compile_condition",
    "date_bounds",
    "date_spans",
    "dimensions_columns_kinds",
    "dimensions_of",
    "dimensions_text",
    "equality_key",
    "excludes_location",
    "in_column_order",
    "indented_json",
    "job_text",
    "listed_partitions",
    "listed_places",
    "lists_no_partition",
    "location_paths",
    "named_columns",
    "normal_time",
    "only_partitions",
    "places_around",
    "plain_values",
    "quick_overlap",
    "range_key",
    "range_probes",
    "read_bounds",
    "shown_time",
    "sort_key",
    "stronger",
    "value_kind",
]
