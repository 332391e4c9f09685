"""Partition mappings: which of the partitions a run wrote a partition it read can reach.

A producer that can prove it (ours: from the Spark plan, see ``spark/_mappings.py``) says so in
an ``olsubset_partitionMapping`` output facet: every row written into an output partition whose
``field`` is v came only from rows of ``input`` whose ``inputField`` u gives v after ``steps``.
Impact then follows a read partition only to the written partitions it maps to, instead of
everything the run wrote.

The facets are read from what the store keeps of each event's facets (``events.facets``), when
a run is reached, once per query; the datasets they name are looked up as the store names them
(another name of a dataset means that dataset). A facet that breaks its schema, names a
dataset the store does not know, or was not kept (too large) narrows nothing: the answer is
the sound superset, as without it. Any producer's facet is read the same way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openlineage_subset import (
    PARTITION_MAPPING_FACET,
    SubsetDocumentError,
    apply_steps,
    partition_mapping_issues,
)
from openlineage_subset.lineage.model import Unit
from openlineage_subset.lineage.store import also_named, facets_of


@dataclass(frozen=True)
class PartitionMapping:
    """One mapping of a write: output column ``field`` is ``steps`` of ``input_field``."""

    field: str
    input_field: str
    steps: tuple[tuple[tuple[str, Any], ...], ...]
    """The steps, each as its sorted items (hashable: a mapping stated twice is kept once)."""

    def reaches(self, read: Mapping[str, str | None], written: Mapping[str, str | None]) -> bool:
        """Whether rows of the read partition may be in the written one, by this mapping (True
        where it cannot tell: a column either partition lacks, a value the steps do not take)."""
        value = read.get(self.input_field)
        target = written.get(self.field)
        if value is None or target is None:
            return True
        try:
            mapped = apply_steps(value, [dict(step) for step in self.steps])
        except SubsetDocumentError:
            return True
        return mapped is None or same_value(mapped, target)


def same_value(mapped: str, written: str) -> bool:
    """Whether a mapped value and a partition value are one value: the same text, or the same
    integer however written (Spark writes ``5`` of a partition read as ``05``)."""
    if mapped == written:
        return True
    return _integer(mapped) is not None and _integer(mapped) == _integer(written)


def _integer(text: str) -> int | None:
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isdigit() or not digits.isascii():
        return None
    return int(text)


class PartitionMappings:
    """The mappings of the runs a query reaches, read once per run."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._by_run: dict[str, dict[tuple[int, int], tuple[PartitionMapping, ...]]] = {}
        self._ids: dict[tuple[str, str], int | None] = {}

    def of(self, run_id: str, output_id: int, input_id: int) -> tuple[PartitionMapping, ...]:
        """The mappings the run's write of ``output_id`` states of its read of ``input_id``."""
        found = self._by_run.get(run_id)
        if found is None:
            found = self._by_run[run_id] = self._read(run_id)
        return found.get((output_id, input_id), ())

    def states_any(self, run_id: str) -> bool:
        """Whether the run's events state any mapping."""
        found = self._by_run.get(run_id)
        if found is None:
            found = self._by_run[run_id] = self._read(run_id)
        return bool(found)

    def narrowed(
        self,
        run_id: str,
        output_id: int,
        input_id: int,
        read: Sequence[Unit],
        written: Sequence[tuple[Unit, Any]],
    ) -> tuple[list[tuple[Unit, Any]], tuple[str, ...]]:
        """The written parts that a read of the partitions ``read`` can reach, and the output
        columns that narrowed them (none: ``written`` as it is)."""
        if len(written) < 2 or not read or None in read:
            return list(written), ()
        mappings = self.of(run_id, output_id, input_id)
        if not mappings:
            return list(written), ()
        reads = [dict(unit) for unit in read if unit is not None]
        kept = [
            (unit, label)
            for unit, label in written
            if unit is None
            or any(all(m.reaches(one, dict(unit)) for m in mappings) for one in reads)
        ]
        if len(kept) == len(written):
            return kept, ()
        return kept, tuple(sorted({m.field for m in mappings}))

    def _read(self, run_id: str) -> dict[tuple[int, int], tuple[PartitionMapping, ...]]:
        found: dict[tuple[int, int], set[PartitionMapping]] = {}
        for (body,) in self.db.execute("SELECT facets FROM events WHERE run_id = ?", (run_id,)):
            document = facets_of(body) or {}
            for output in document.get("outputs") or ():
                facet = (output.get("outputFacets") or {}).get(PARTITION_MAPPING_FACET)
                if facet is None or partition_mapping_issues(facet):
                    continue  # a claim that breaks its schema narrows nothing
                output_id = self._id(output.get("namespace"), output.get("name"))
                if output_id is None:
                    continue
                for mapping in facet["mappings"]:
                    source = mapping["input"]
                    input_id = self._id(source["namespace"], source["name"])
                    if input_id is not None:
                        found.setdefault((output_id, input_id), set()).add(
                            PartitionMapping(
                                mapping["field"],
                                mapping["inputField"],
                                tuple(tuple(sorted(step.items())) for step in mapping["steps"]),
                            )
                        )
        return {key: tuple(sorted(value, key=repr)) for key, value in found.items()}

    def _id(self, namespace: object, name: object) -> int | None:
        """The dataset a name means in the store: itself, or the one dataset it is another
        name of; None otherwise."""
        if not isinstance(namespace, str) or not isinstance(name, str):
            return None
        key = (namespace, name)
        if key not in self._ids:
            row = self.db.execute(
                "SELECT dataset_id FROM datasets WHERE namespace = ? AND name = ?", key
            ).fetchone()
            if row is not None:
                self._ids[key] = int(row[0])
            else:
                others = {found[0] for found in also_named(self.db, name, namespace)}
                self._ids[key] = others.pop() if len(others) == 1 else None
        return self._ids[key]
