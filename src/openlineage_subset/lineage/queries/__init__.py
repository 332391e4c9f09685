"""The questions a lineage database answers, each a function over the engine: impact,
provenance, history, partitions, the listings, incidents and the tasks to re-run, and the
answers as text.

- ``_questions``: one frozen dataclass per question (``ImpactQuery``, ...), checked once;
- ``_arguments``: the checks of a question's values (partition, ``since``, counts);
- ``_impact``, ``_provenance``, ``_history``, ``_incidents``, ``_listings`` (the datasets and
  runs a database holds), ``_task_runs`` (the orchestrator tasks to clear);
- ``_archive``: impact and provenance over an event archive, with Spark;
- ``_answer_text``: the answers as text a person reads.

Other sub-rooms import these names from here; modules of the room import each other.
"""

from openlineage_subset.lineage.queries._answer_text import (
    history_text,
    impact_text,
    no_partitions_note,
    part_heading,
    partitions_text,
    provenance_text,
    unseen_note,
)
from openlineage_subset.lineage.queries._archive import ArchiveProblems, EventArchive
from openlineage_subset.lineage.queries._arguments import count_from_text, partition_from_text
from openlineage_subset.lineage.queries._history import (
    dataset_partitions,
    failed_answer,
    failed_writes,
    history,
    history_answer,
    partitions_answer,
    states_report,
)
from openlineage_subset.lineage.queries._impact import impact, impact_answer
from openlineage_subset.lineage.queries._incidents import (
    FailedRun,
    FailedWrite,
    Incidents,
    incidents,
)
from openlineage_subset.lineage.queries._listings import (
    DatasetsReport,
    DatasetSummary,
    RunAccess,
    RunFamily,
    RunsReport,
    WholeQuestion,
    check_whole,
    datasets,
    datasets_answer,
    runs,
    runs_answer,
)
from openlineage_subset.lineage.queries._provenance import provenance, provenance_answer
from openlineage_subset.lineage.queries._questions import (
    HistoryQuery,
    ImpactQuery,
    PartitionsQuery,
    ProvenanceQuery,
    RunsQuery,
)
from openlineage_subset.lineage.queries._task_runs import (
    AIRFLOW_VERSION_NOTE,
    clear_command,
    task_heading,
)

__all__ = [
    "AIRFLOW_VERSION_NOTE",
    "ArchiveProblems",
    "DatasetSummary",
    "DatasetsReport",
    "EventArchive",
    "FailedRun",
    "FailedWrite",
    "HistoryQuery",
    "ImpactQuery",
    "Incidents",
    "PartitionsQuery",
    "ProvenanceQuery",
    "RunAccess",
    "RunFamily",
    "RunsQuery",
    "RunsReport",
    "WholeQuestion",
    "check_whole",
    "clear_command",
    "count_from_text",
    "dataset_partitions",
    "datasets",
    "datasets_answer",
    "failed_answer",
    "failed_writes",
    "history",
    "history_answer",
    "history_text",
    "impact",
    "impact_answer",
    "impact_text",
    "incidents",
    "no_partitions_note",
    "part_heading",
    "partition_from_text",
    "partitions_answer",
    "partitions_text",
    "provenance",
    "provenance_answer",
    "provenance_text",
    "runs",
    "runs_answer",
    "states_report",
    "task_heading",
    "unseen_note",
]
