"""An answer page's runs, as its template lists them: the runs of an impact answer with what
each read of the affected data, or the runs behind a provenance answer, each once. Every run,
dataset and partition is a link there (``templates/answer_runs.html``), so that an answer is
never a dead end; the graph's boxes link the same pages (:data:`~._links.LINKS`).

An answer of more than :data:`ANSWER_RUNS` runs (the impact of a whole dataset, three years of
a pipeline downstream) is not drawn: its page says how many runs and partitions it holds
(:class:`Summary`), lists a page of its runs in the answer's order, and links the pages before
and after, a narrower question, and where the whole answer is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence

from openlineage_subset.lineage import (
    AffectedRun,
    ImpactReport,
    PartitionSet,
    ProvenanceReport,
    ProvenanceStep,
)

ANSWER_RUNS = 100
"""Runs an answer page draws at most (its graph, its grids, the runs listed, the text to
copy): an answer of more is summarised, :data:`ANSWER_RUNS` of its runs listed at a time."""


@dataclasses.dataclass(frozen=True)
class Summary:
    """An answer too large to draw, as its page tells it: how many runs and partitions it
    holds, which of its runs the page lists, and the links to the others."""

    counts: tuple[str, ...]
    """What the whole answer holds, a sentence each."""
    total: int
    """Runs in the whole answer."""
    first: int
    """The place (from 0) in the answer's order of the first run listed."""
    listed: int
    previous: str | None
    """The page of the runs before (None: these are the first)."""
    next: str | None
    """The page of the runs after (None: these are the last)."""
    narrower: str
    """Where to ask a narrower question: the dataset's page, to select partitions on."""
    whole: str
    """Where the whole answer is: the JSON API's request and the command, as text to copy."""

    @property
    def more(self) -> int:
        """Runs after those listed."""
        return self.total - self.first - self.listed


def start_from_text(text: str | None, total: int) -> int:
    """The place of the first run an answer page lists (its ``start`` parameter; None: 0),
    within the answer's ``total`` runs; ValueError for another.

    >>> start_from_text(None, 5), start_from_text("100", 250)
    (0, 100)
    >>> start_from_text("300", 250)
    Traceback (most recent call last):
    ...
    ValueError: start is the place of the first run listed, from 0 to 249 (this answer has \
250 runs), got '300'
    """
    if text is None:
        return 0
    if text.isascii() and text.isdigit() and len(text) <= 10 and int(text) < max(total, 1):
        return int(text)
    raise ValueError(
        f"start is the place of the first run listed, from 0 to {max(total - 1, 0)} (this "
        f"answer has {total} runs), got {text!r}"
    )


def listed(runs: Sequence[object], first: int) -> range:
    """Which of ``runs`` a page listing from ``first`` shows: :data:`ANSWER_RUNS` at most."""
    return range(first, min(first + ANSWER_RUNS, len(runs)))


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


def impact_runs(report: ImpactReport, shown: range | None = None) -> ImpactRuns:
    """The affected runs of ``report`` (``shown``: those at these places only), each with the
    part of a dataset it read (partitions None: the whole of it, surely), and its backfill
    plan."""
    runs = report.runs if shown is None else report.runs[shown.start : shown.stop]
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
        for item in runs
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


def _behind_key(step: ProvenanceStep) -> tuple[str, str]:
    return step.run.ended_at or "", step.run.run_id


def runs_behind(report: ProvenanceReport) -> tuple[ProvenanceStep, ...]:
    """Each run behind the target of ``report`` once, as the answer followed it back (its step
    with its inputs, not one ``repeated``), the latest ended first: the order of the answer's
    writers, for every run behind them, which depends on the runs alone (never on the order
    their events arrived)."""
    found: dict[str, ProvenanceStep] = {}
    todo = list(report.writers)
    while todo:
        step = todo.pop()
        known = found.get(step.run.run_id)
        if known is None or (known.repeated and not step.repeated):
            found[step.run.run_id] = step
        todo.extend(writer for read in step.inputs for writer in read.writers)
    return tuple(sorted(found.values(), key=_behind_key, reverse=True))
