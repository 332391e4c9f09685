"""An answer page's runs and partitions as links: the runs of an impact or provenance answer
(each to its run page), the datasets they read or wrote (each to its page) and the partitions
(each to its dataset's page with it selected, :func:`~._links.dataset_link`), so that an
answer is never a dead end. The graph's boxes link the same pages (:data:`~._links.LINKS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from openlineage_subset.lineage import (
    DatasetRef,
    ImpactReport,
    PartitionRef,
    PartitionSet,
    ProvenanceReport,
    ProvenanceStep,
    RunRef,
)
from openlineage_subset.report import attribute, text
from openlineage_subset.service._links import dataset_link, job_link, run_link

MAX_LISTED = 12
"""Partitions listed as links in one cell; the rest counted (all of them are in the plan)."""
NAME_COLUMNS = 60


def _a(href: str, label: object, *, limit: int | None = None) -> str:
    shown = text(label, limit=limit)
    whole = "" if limit is None else f' title="{attribute(label)}"'
    return f'<a href="{attribute(href)}"{whole}>{shown}</a>'


def partition_links(dataset: DatasetRef, partitions: Sequence[PartitionRef]) -> str:
    """Each partition a link to its dataset's page with it selected; after
    :data:`MAX_LISTED`, how many more (the link selecting all of them, when few enough)."""
    shown = ", ".join(_a(dataset_link(dataset, [item]), item) for item in partitions[:MAX_LISTED])
    more = len(partitions) - MAX_LISTED
    if more > 0:
        shown += f" and {more} more"
    return shown


def _part(part: PartitionSet) -> str:
    """A dataset's part: the dataset linked, then its partitions (or the whole of it)."""
    pieces = [_a(dataset_link(part.dataset), part.dataset, limit=NAME_COLUMNS)]
    if part.whole is not None:
        pieces.append(f"the whole dataset ({text(part.whole)})")
    if part.definite:
        pieces.append(partition_links(part.dataset, part.definite))
    if part.possible:
        pieces.append("possibly " + partition_links(part.dataset, part.possible))
    return ": ".join(pieces[:1]) + (": " + "; ".join(pieces[1:]) if pieces[1:] else "")


def _run(run: RunRef) -> str:
    return (
        f'<td class="id">{_a(run_link(run.run_id), run.run_id)}</td>'
        f"<td>{job_link(run)}</td>"
        f'<td class="nowrap">{text(run.status)}</td>'
    )


def _table(kind: str, head: str, rows: Iterable[str]) -> str:
    body = "".join(rows)
    if not body:
        return ""
    return (
        f'<table class="list answer-runs {kind}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def impact_runs(report: ImpactReport) -> str:
    """The affected runs (hop, run, job, state, how sure, what affected it read), then what
    to recompute, every run, dataset and partition a link."""
    rows = (
        f'<tr><td class="number">{item.hops}</td>{_run(item.run)}'
        f'<td class="nowrap">{text(item.label)}</td>'
        "<td>"
        + _part(
            PartitionSet(
                item.dataset,
                "definite" if item.partitions is None else None,
                item.partitions or (),
                (),
            )
        )
        + "</td></tr>"
        for item in report.runs
    )
    runs = "<h3>Affected runs</h3>" + _table(
        "impact",
        "<th>hop</th><th>run</th><th>job</th><th>state</th><th>affected</th><th>it read</th>",
        rows,
    )
    plan = "".join(f"<li>{_part(part)}</li>" for part in report.backfill)
    return (
        runs
        + "<h3>To recompute</h3>"
        + (f'<ul class="recompute">{plan}</ul>' if plan else '<p class="note">Nothing.</p>')
    )


def _steps(steps: Iterable[ProvenanceStep], seen: set[str]) -> Iterable[str]:
    for step in steps:
        if step.run.run_id in seen:
            continue
        seen.add(step.run.run_id)
        yield (
            f'<tr>{_run(step.run)}<td class="nowrap">{text(step.label)}</td><td>'
            + _a(dataset_link(step.dataset), step.dataset, limit=NAME_COLUMNS)
            + f'</td><td class="condition">{text(step.condition or "the whole dataset")}</td>'
            "</tr>"
        )
        for read in step.inputs:
            yield from _steps(read.writers, seen)


def provenance_runs(report: ProvenanceReport) -> str:
    """The runs behind the target, each once (run, job, state, how sure, what it wrote)."""
    return "<h3>Runs behind it</h3>" + _table(
        "provenance",
        "<th>run</th><th>job</th><th>state</th><th>wrote</th><th>dataset</th><th>where</th>",
        _steps(report.writers, set()),
    )
