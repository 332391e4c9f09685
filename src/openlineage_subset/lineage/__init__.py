"""Partition lineage: which runs read and wrote which partitions, from OpenLineage events.

Events (from ``ol-subset run``, ``enable()`` or any OpenLineage producer) are ingested into one
SQLite file; the queries then evaluate read conditions against written partitions in three
values (yes, no, unknown), and count unknown as *possibly* affected, never as unaffected.
A partition column the dataset never had raises :class:`UnknownPartitionColumnError`; a part
no recorded run read or wrote is answered with ``seen`` False, not as a confident "nothing".

- :func:`ingest`: JSON Lines files into the database, idempotently;
- :class:`Lineage`: the database opened once for many questions, each a frozen query
  (:class:`ImpactQuery`, :class:`ProvenanceQuery`, :class:`HistoryQuery`,
  :class:`PartitionsQuery`, :class:`RunsQuery`); the functions below ask one each;
- :func:`impact`: the runs affected by a dataset or partition, and the partitions to recompute;
- :func:`provenance`: the runs (and their inputs) a partition's data came from;
- :func:`history`: the runs that read or wrote a dataset or partition, in time order;
- :func:`dataset_partitions`: each known partition, its last writer and its readers since;
- :func:`picture_source`: what the report (:mod:`openlineage_subset.report`) draws besides an
  answer: who read and wrote which partitions, each dataset's known partitions;
- :class:`EventArchive`: impact and provenance over an archive too large for one file, with
  Spark (the ``spark`` extra).

docs/lineage.md states the rules and the JSON output.

The second part of ``__all__`` is internal to the package: what ``report``, ``service`` and
``cli`` use of this room (the store's writer, the ingest protocol's shapes, the catalog and a
run's details, the answers' text), never promised to users.
"""

from openlineage_subset import partition_overlap
from openlineage_subset.lineage._archive import ArchiveProblems, EventArchive
from openlineage_subset.lineage._arguments import (
    LineageQueryError,
    UnknownPartitionColumnError,
    count_from_text,
    partition_from_text,
)
from openlineage_subset.lineage._catalog import (
    DatasetsReport,
    DatasetSummary,
    RunAccess,
    RunsReport,
    datasets,
    runs,
)
from openlineage_subset.lineage._checked import (
    AlreadyStored,
    CheckedEvent,
    Fate,
    Invalid,
    Item,
    Line,
    Skipped,
    Stored,
    Unreadable,
)
from openlineage_subset.lineage._conditions import (
    Unit,
    column_order,
    in_column_order,
    location_paths,
)
from openlineage_subset.lineage._details import (
    DatasetFacets,
    Facet,
    RunDetails,
    dataset_facets,
    run_details,
)
from openlineage_subset.lineage._drawn import PagePartitions, PartitionAxis, latest_history
from openlineage_subset.lineage._events import check_chunk, listed_partitions
from openlineage_subset.lineage._facets import MAX_KEPT_BYTES, facets_of, kept_facets
from openlineage_subset.lineage._history import dataset_partitions, failed_writes, history
from openlineage_subset.lineage._impact import impact
from openlineage_subset.lineage._incidents import FailedRun, FailedWrite, Incidents, incidents
from openlineage_subset.lineage._ingest import IngestProblem, IngestReport, alias_note, ingest
from openlineage_subset.lineage._lineage import Lineage
from openlineage_subset.lineage._model import (
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
)
from openlineage_subset.lineage._picture_facts import (
    DatasetColumns,
    DatasetPartitions,
    JobUse,
    PictureSource,
    Touched,
    picture_source,
)
from openlineage_subset.lineage._provenance import provenance
from openlineage_subset.lineage._queries import (
    HistoryQuery,
    ImpactQuery,
    PartitionsQuery,
    ProvenanceQuery,
    RunsQuery,
)
from openlineage_subset.lineage._run_partitions import RunPartitions, run_partitions
from openlineage_subset.lineage._settings import (
    PARTITION_DIRECTORIES_CHOICES,
    groups_directories,
    partition_directories,
    set_partition_directories,
)
from openlineage_subset.lineage._store import (
    APPLICATION_ID,
    LOCK_WAIT,
    SCHEMA_VERSION,
    LineageDatabaseError,
    LineageStore,
)
from openlineage_subset.lineage._task_runs import clear_command, task_heading
from openlineage_subset.lineage._text import (
    history_text,
    impact_text,
    no_partitions_note,
    part_heading,
    partitions_text,
    provenance_text,
    unseen_note,
)
from openlineage_subset.lineage._time import shown_time
from openlineage_subset.lineage._writer import Writer, relax_sync

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "AffectedRun",
    "ArchiveProblems",
    "DatasetPartitions",
    "DatasetRef",
    "Dimensions",
    "EventArchive",
    "HistoryEntry",
    "HistoryQuery",
    "HistoryReport",
    "ImpactQuery",
    "ImpactReport",
    "IngestProblem",
    "IngestReport",
    "JobUse",
    "Label",
    "Lineage",
    "LineageDatabaseError",
    "LineageQueryError",
    "LineageStore",
    "OrchestratorTask",
    "PartitionRef",
    "PartitionSet",
    "PartitionState",
    "PartitionsQuery",
    "PartitionsReport",
    "PictureSource",
    "ProvenanceInput",
    "ProvenanceQuery",
    "ProvenanceReport",
    "ProvenanceStep",
    "RunRef",
    "RunsQuery",
    "TaskRerun",
    "Touched",
    "Unit",
    "UnknownPartitionColumnError",
    "dataset_partitions",
    "history",
    "impact",
    "ingest",
    "part_heading",
    "partition_overlap",
    "picture_source",
    "provenance",
    "shown_time",
    "unseen_note",
]
# Internal to the package: for its other rooms, not user API (the module's docstring).
__all__ += [
    "LOCK_WAIT",
    "MAX_KEPT_BYTES",
    "PARTITION_DIRECTORIES_CHOICES",
    "AlreadyStored",
    "CheckedEvent",
    "DatasetColumns",
    "DatasetFacets",
    "DatasetSummary",
    "DatasetsReport",
    "Facet",
    "FailedRun",
    "FailedWrite",
    "Fate",
    "Incidents",
    "Invalid",
    "Item",
    "Line",
    "PagePartitions",
    "PartitionAxis",
    "RunAccess",
    "RunDetails",
    "RunPartitions",
    "RunsReport",
    "Skipped",
    "Stored",
    "Unreadable",
    "Writer",
    "alias_note",
    "check_chunk",
    "clear_command",
    "column_order",
    "count_from_text",
    "dataset_facets",
    "datasets",
    "facets_of",
    "failed_writes",
    "groups_directories",
    "history_text",
    "impact_text",
    "in_column_order",
    "incidents",
    "indented_json",
    "kept_facets",
    "latest_history",
    "listed_partitions",
    "location_paths",
    "no_partitions_note",
    "partition_directories",
    "partition_from_text",
    "partitions_text",
    "provenance_text",
    "relax_sync",
    "run_details",
    "run_partitions",
    "runs",
    "set_partition_directories",
    "task_heading",
]
