"""The graph walk every lineage query shares, composed of its parts: the catalog of datasets
and partitions (``_partitions``), the timeline of their readers and writers (``_timeline``),
the evaluation of conditions on partitions (``_evaluation``) and the conditions' text
(``_text``). Each part reads the database for one query and keeps what the query asks many
times; none reaches into another's state.

:class:`Graph` gives a query the parts' methods by one name each, so that a query reads as the
question it asks (``graph.writers_of``, ``graph.overlap``) rather than where it is answered.
"""

from __future__ import annotations

from collections.abc import Mapping

from openlineage_subset.lineage._conditions import Unit
from openlineage_subset.lineage._evaluation import Evaluation
from openlineage_subset.lineage._names import check_columns, resolve
from openlineage_subset.lineage._partitions import PartitionCatalog
from openlineage_subset.lineage._store import LineageStore
from openlineage_subset.lineage._text import AccessText
from openlineage_subset.lineage._timeline import Access, Timeline

__all__ = ["Access", "Graph", "region", "write_overlap"]


class Graph:
    """One query's view of the database: its parts, and their methods by the names queries
    use (bound once: a query calls some of them millions of times)."""

    def __init__(self, store: LineageStore) -> None:
        self.db = store.connection
        self.catalog = catalog = PartitionCatalog(store.connection, store.reads)
        self.timeline = timeline = Timeline(store.connection, catalog)
        self.evaluation = evaluation = Evaluation(catalog, timeline)
        self.texts = AccessText(catalog)
        self.rendered = self.texts.rendered
        # The catalog: datasets and their known partitions.
        self.dataset = catalog.dataset
        self.column_order = catalog.column_order
        self.in_order = catalog.in_order
        self.known = catalog.known
        self.whole_units = catalog.whole_units
        self.plain_shape = catalog.plain_shape
        self.shapes = catalog.shapes
        self.kinds = catalog.kinds
        self.identifier = catalog.identifier
        self.look_up = catalog.look_up
        self.partition_path = catalog.partition_path
        self.expand = catalog.expand
        self.partition_refs = catalog.partition_refs
        self.partition_set = catalog.partition_set
        # The timeline: who read and wrote what, when.
        self.accesses = timeline.accesses
        self.readers_after = timeline.readers_after
        self.readers_of = timeline.readers_of
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

    def resolve(self, name: str, namespace: str | None) -> int:
        """The id of the dataset called ``name``, or whose name ends with ``/name``."""
        return resolve(self.db, name, namespace)

    def check_columns(self, dataset_id: int, partition: Mapping[str, str | None] | None) -> None:
        """Raise :class:`UnknownPartitionColumnError` when ``partition`` names a column the
        dataset never had (see ``_names.check_columns``)."""
        check_columns(self.catalog, dataset_id, partition)


def region(graph: Graph, dataset_id: int, partition: Mapping[str, str | None] | None) -> list[Unit]:
    """The units a query asks about: the known partitions inside ``partition`` (see
    :meth:`PartitionCatalog.expand`), or the whole dataset for None."""
    if partition is None:
        return [None]
    return graph.expand(dataset_id, partition)


def write_overlap(graph: Graph, write: Access, unit: Unit) -> bool | None:
    """May ``write`` have written ``unit`` (see :meth:`Evaluation.write_overlap`)."""
    return graph.write_overlap(write, unit)
