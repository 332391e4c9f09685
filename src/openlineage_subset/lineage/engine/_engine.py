"""The engine a lineage query walks with: its parts put together for one query.

The parts are the catalog of datasets and partitions (:mod:`._partition_catalog`), the
timeline of their readers and writers (:mod:`._timeline`), the evaluation of conditions on
partitions (:mod:`._evaluation`), the partition mappings writes state (:mod:`._mappings`), the
conditions' text (:mod:`._access_text`) and the
resolving of names (:mod:`._resolving`). Each reads the database for one query and keeps what
the query asks many times; none reaches into another's state.

:class:`Engine` gives a query the parts' methods by one name each, so that a query reads as
the question it asks (``engine.writers_of``, ``engine.overlap``) rather than where it is
answered.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from openlineage_subset.lineage.engine._access_text import AccessText
from openlineage_subset.lineage.engine._evaluation import Evaluation
from openlineage_subset.lineage.engine._mappings import PartitionMappings
from openlineage_subset.lineage.engine._partition_catalog import PartitionCatalog
from openlineage_subset.lineage.engine._resolving import check_columns, resolve
from openlineage_subset.lineage.engine._timeline import Access, Timeline
from openlineage_subset.lineage.model import Unit
from openlineage_subset.lineage.store import LineageStore

__all__ = ["Access", "Engine", "region"]


class Engine:
    """One query's view of the database: its parts, and their methods by the names queries
    use (bound once: a query calls some of them millions of times)."""

    def __init__(self, store: LineageStore, *, most_accesses: int | None = None) -> None:
        """``most_accesses``: the most reads and writes of runs the query may load (None:
        any; see :attr:`Timeline.most`)."""
        self.db = store.connection
        self.catalog = catalog = PartitionCatalog(store.connection, store.reads)
        self.timeline = timeline = Timeline(store.connection, catalog, most_accesses)
        self.evaluation = evaluation = Evaluation(catalog, timeline)
        self.texts = AccessText(catalog)
        self.rendered = self.texts.rendered
        # Which dataset a name means, and whether a partition names columns it has.
        self.resolve = functools.partial(resolve, store.connection)
        self.check_columns = functools.partial(check_columns, catalog)
        # The catalog: each dataset's known partitions.
        self.partitions = catalog.of
        # The timeline: who read and wrote what, when.
        self.accesses = timeline.accesses
        self.indexed = timeline.indexed
        self.readers_after = timeline.readers_after
        self.readers_of = timeline.readers_of
        self.readers_at = timeline.readers_at
        self.touching = timeline.touching
        self.writers_of = timeline.writers_of
        self.inputs = timeline.inputs
        self.outputs = timeline.outputs
        # The evaluation: what a condition may select.
        self.seen = evaluation.seen
        self.overlap = evaluation.overlap
        self.write_overlap = evaluation.write_overlap
        self.compiled = evaluation.compiled
        self.candidates = evaluation.candidates
        self.agreeing = evaluation.agreeing
        self.listed_values = evaluation.listed_values
        self.plain_values_of = evaluation.plain_values_of
        self.written = evaluation.written
        self.read_units = evaluation.read_units
        self.selected = evaluation.selected
        # The partition mappings writes state: which written partitions a read one reaches.
        mappings = PartitionMappings(store.connection)
        self.narrowed = mappings.narrowed
        self.states_mappings = mappings.states_any


def region(
    engine: Engine, dataset_id: int, partition: Mapping[str, str | None] | None
) -> list[Unit]:
    """The units a query asks about: the known partitions inside ``partition`` (see
    :meth:`PartitionCatalog.expand`), or the whole dataset for None."""
    if partition is None:
        return [None]
    return engine.partitions(dataset_id).expand(partition)
