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
"""

from openlineage_subset._evaluate import partition_overlap
from openlineage_subset.lineage._archive import ArchiveProblems, EventArchive
from openlineage_subset.lineage._arguments import LineageQueryError, UnknownPartitionColumnError
from openlineage_subset.lineage._conditions import Unit
from openlineage_subset.lineage._history import dataset_partitions, history
from openlineage_subset.lineage._impact import impact
from openlineage_subset.lineage._ingest import IngestProblem, IngestReport, ingest
from openlineage_subset.lineage._lineage import Lineage
from openlineage_subset.lineage._model import (
    AffectedRun,
    DatasetRef,
    Dimensions,
    HistoryEntry,
    HistoryReport,
    ImpactReport,
    Label,
    PartitionRef,
    PartitionSet,
    PartitionsReport,
    PartitionState,
    ProvenanceInput,
    ProvenanceReport,
    ProvenanceStep,
    RunRef,
)
from openlineage_subset.lineage._picture_facts import (
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
from openlineage_subset.lineage._store import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    LineageDatabaseError,
    LineageStore,
)
from openlineage_subset.lineage._text import part_heading, unseen_note
from openlineage_subset.lineage._time import shown_time

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
