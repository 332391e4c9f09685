"""The known partitions each read and write of one run may cover, for the run's page: each
partition there links to its dataset's page (the run's conditions stay shown as text too).

At most :data:`MAX_LISTED` partitions an access are read from the database: a run that read a
year of days by three hundred countries lists its first ones and says there are more.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from openlineage_subset.lineage.engine import Engine
from openlineage_subset.lineage.model import DatasetRef, PartitionRef, RunRef, Side, Unit
from openlineage_subset.lineage.store import Database, opened

MAX_LISTED = 12
"""Partitions listed an access at most."""


@dataclasses.dataclass(frozen=True)
class RunPartitions:
    """What one read or write of a run may cover: the whole dataset, or known partitions."""

    dataset: DatasetRef
    direction: Literal["read", "write"]
    whole: bool
    partitions: tuple[PartitionRef, ...]
    """The first :data:`MAX_LISTED` known partitions it may cover, in the dataset's order."""
    more: bool
    """It may cover more than those listed."""


def run_partitions(db: Database, run_id: str) -> tuple[RunPartitions, ...]:
    """For each read, then each write, of the run ``run_id``: the partitions it may cover
    (empty when the database holds no such run)."""
    with opened(db) as store:
        row = store.connection.execute(
            "SELECT run_id, job_namespace, job_name, status, started_at, ended_at FROM runs "
            "WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            return ()
        run = RunRef(*row)
        engine = Engine(store)
        found = []
        for side, accesses in (
            (Side.INPUT, engine.inputs(run)),
            (Side.OUTPUT, engine.outputs(run)),
        ):
            direction: Literal["read", "write"] = "read" if side is Side.INPUT else "write"
            for access in accesses:
                dataset = engine.partitions(access.dataset_id).dataset()
                if access.text is None:
                    found.append(RunPartitions(dataset, direction, True, (), False))
                    continue
                units: list[Unit] = []
                more = False
                for unit, _ in engine.selected(access, by_dates=True):
                    if len(units) == MAX_LISTED:
                        more = True
                        break
                    units.append(unit)
                refs = engine.partitions(access.dataset_id).partition_refs(units)
                found.append(RunPartitions(dataset, direction, False, refs, more))
        return tuple(found)
