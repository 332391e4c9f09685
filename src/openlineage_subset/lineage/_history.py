"""History: the runs that touched a dataset or partition; and each known partition's state."""

from __future__ import annotations

import os
from collections.abc import Mapping

from openlineage_subset.lineage._arguments import checked_partition, open_store
from openlineage_subset.lineage._conditions import sort_key
from openlineage_subset.lineage._graph import Graph, region
from openlineage_subset.lineage._labels import read_label
from openlineage_subset.lineage._model import (
    HistoryEntry,
    HistoryReport,
    Label,
    PartitionRef,
    PartitionsReport,
    PartitionState,
)
from openlineage_subset.lineage._store import LineageStore


def history(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str,
    *,
    partition: Mapping[str, str | None] | None = None,
    namespace: str | None = None,
) -> HistoryReport:
    """The runs that read or wrote a dataset (or may have touched ``partition`` of it), in
    the order they started, each with its condition and how sure the overlap is. Raises as
    :func:`~openlineage_subset.lineage.impact` raises."""
    values = checked_partition(partition)
    store, close = open_store(db)
    try:
        graph = Graph(store)
        dataset_id = graph.resolve(dataset, namespace)
        graph.check_columns(dataset_id, values)
        units = region(graph, dataset_id, values)
        target = graph.partition_set(dataset_id, dict.fromkeys(units, "definite"))
        entries = []
        for direction, verb in (("input", "read"), ("output", "write")):
            for access in graph.accesses(dataset_id, direction):
                label: Label | None = "definite"
                if values is not None:
                    label, _ = read_label(graph, access, tuple((u, "definite") for u in units))
                if label is not None:
                    entries.append(HistoryEntry(access.run, verb, graph.rendered(access), label))  # type: ignore[arg-type]
    finally:
        if close:
            store.close()
    entries.sort(key=lambda e: (e.run.started_at, e.run.run_id, e.direction))
    # An entry is a read or write that may overlap the part asked about: none, nothing did.
    return HistoryReport(target, tuple(entries), bool(entries))


def dataset_partitions(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str,
    *,
    namespace: str | None = None,
) -> PartitionsReport:
    """Each known partition of a dataset: its last writer (the latest completed run whose
    write may cover it) and how many runs read it (definitely or possibly) since then."""
    store, close = open_store(db)
    try:
        graph = Graph(store)
        dataset_id = graph.resolve(dataset, namespace)
        found = graph.dataset(dataset_id)
        writes = sorted(
            (
                write
                for write in graph.accesses(dataset_id, "output")
                if write.run.status == "COMPLETE" and write.run.ended_at is not None
            ),
            key=lambda write: (write.run.ended_at or "", write.run.run_id),
            reverse=True,
        )
        states = []
        known = graph.known(dataset_id)
        for unit in sorted(known, key=lambda unit: sort_key(graph.in_order(dataset_id, unit))):
            identifier = known[unit]
            writer = next((w for w in writes if graph.overlap(w, unit) is not False), None)
            label: Label | None = None
            if writer is not None:
                label = "definite" if graph.overlap(writer, unit) else "possible"
            after = writer.run.ended_at if writer is not None else None
            readers = {
                read.run.run_id
                for read in graph.readers_after(dataset_id, after, False)
                if graph.overlap(read, unit) is not False
            }
            states.append(
                PartitionState(
                    PartitionRef(graph.in_order(dataset_id, unit), identifier),
                    None if writer is None else writer.run,
                    label,
                    len(readers),
                )
            )
    finally:
        if close:
            store.close()
    return PartitionsReport(found, tuple(states))
