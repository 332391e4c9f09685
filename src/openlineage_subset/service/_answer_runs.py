"""An answer page's runs, as its template lists them: the runs of an impact answer with what
each read of the affected data, or the runs behind a provenance answer, each once. Every run,
dataset and partition is a link there (``templates/answer_runs.html``), so that an answer is
never a dead end; the graph's boxes link the same pages (:data:`~._links.LINKS`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from openlineage_subset.lineage import (
    AffectedRun,
    ImpactReport,
    PartitionSet,
    ProvenanceReport,
    ProvenanceStep,
)


@dataclasses.dataclass(frozen=True)
class ImpactRuns:
    """The runs of an impact answer, and what to recompute."""

    affected: tuple[tuple[AffectedRun, PartitionSet], ...]
    """Each affected run (in the answer's order) and what it read of the affected data."""
    backfill: tuple[PartitionSet, ...]


@dataclasses.dataclass(frozen=True)
class ProvenanceRuns:
    """The runs behind a provenance answer's target, each once, as the answer walks them back."""

    behind: tuple[ProvenanceStep, ...]


def impact_runs(report: ImpactReport) -> ImpactRuns:
    """The affected runs of ``report``, each with the part of a dataset it read (partitions
    None: the whole of it, surely), and its backfill plan."""
    affected = tuple(
        (
            item,
            PartitionSet(
                item.dataset,
                "definite" if item.partitions is None else None,
                item.partitions or (),
                (),
            ),
        )
        for item in report.runs
    )
    return ImpactRuns(affected, report.backfill)


def _steps(steps: Iterable[ProvenanceStep], seen: set[str]) -> Iterator[ProvenanceStep]:
    for step in steps:
        if step.run.run_id in seen:
            continue
        seen.add(step.run.run_id)
        yield step
        for read in step.inputs:
            yield from _steps(read.writers, seen)


def provenance_runs(report: ProvenanceReport) -> ProvenanceRuns:
    """The runs behind the target of ``report``, each once, depth first."""
    return ProvenanceRuns(tuple(_steps(report.writers, set())))
