"""Ingest: OpenLineage events from JSON Lines files (or the service's POSTs) checked and stored,
a chunk at a time, with worker processes on a large input.

- ``_ingest``: ``ingest()`` and its report: inputs read a chunk at a time;
- ``_shapes``: what the reader, the checker and the writer hand each other (frozen records,
  pickled to the workers), and each event's ``EventOutcome``;
- ``_checker``: one line checked and reduced to what the store keeps;
- ``_workers``: checking chunks in worker processes;
- ``_writer``: a checked chunk stored, a few statements an event;
- ``_merges``: names joined to datasets, two datasets merged when an event says they are one;
- ``_directories``, ``_trimmers``: partitions from paths, and the table root a name trims to.

Other sub-rooms import these names from here; modules of the room import each other.
"""

from openlineage_subset.lineage.ingestion._checker import (
    check_chunk,
    parse,
    problem,
    surrogate_problem,
)
from openlineage_subset.lineage.ingestion._ingest import (
    IngestProblem,
    IngestReport,
    alias_note,
    ingest,
)
from openlineage_subset.lineage.ingestion._shapes import (
    AlreadyStored,
    CheckedEvent,
    EventOutcome,
    Invalid,
    Item,
    Line,
    Skipped,
    Stored,
    Unreadable,
)
from openlineage_subset.lineage.ingestion._writer import Writer, relax_sync

__all__ = [
    "AlreadyStored",
    "CheckedEvent",
    "EventOutcome",
    "IngestProblem",
    "IngestReport",
    "Invalid",
    "Item",
    "Line",
    "Skipped",
    "Stored",
    "Unreadable",
    "Writer",
    "alias_note",
    "check_chunk",
    "ingest",
    "parse",
    "problem",
    "relax_sync",
    "surrogate_problem",
]
