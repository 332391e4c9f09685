"""The front page's first section: what an on-call engineer came for.

The partitions whose last write failed and the latest failed runs
(:func:`~openlineage_subset.lineage.incidents`), the newest first, each with how long ago, and
each one click from its impact and from its backfill plan (the impact page's plan,
:func:`~._links.plan_anchor`). Names are escaped as everywhere in the UI (:func:`text`,
:func:`attribute`); a long name is cut in its middle, the whole of it in its ``title``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from openlineage_subset.lineage import (
    DatasetRef,
    FailedRun,
    FailedWrite,
    Incidents,
    PartitionRef,
    RunRef,
    shown_time,
)
from openlineage_subset.report import attribute, text
from openlineage_subset.service._links import (
    answer_link,
    dataset_link,
    job_link,
    plan_anchor,
    run_link,
)

MAX_LINKED = 24
"""Partitions one impact link asks for at most (the answer page's limit)."""
NAME_COLUMNS = 60
"""Columns of a dataset or job name shown in a table cell; the whole in its ``title``."""


def ago(stored: str | None, now: dt.datetime) -> str:
    """How long before ``now`` the stored time ``stored`` was, as people say it.

    >>> now = dt.datetime(2025, 3, 2, 12, 0, tzinfo=dt.timezone.utc)
    >>> [ago(t, now) for t in ("2025-03-02T11:59:40Z", "2025-03-02T11:47:59.5Z",
    ...  "2025-03-02T09:00:00.120000000Z", "2025-02-27T12:00:00Z", None)]
    ['just now', '12 min ago', '3 h ago', '3 d ago', 'not ended']
    """
    if stored is None:
        return "not ended"
    # whole seconds are enough here; Python 3.10's fromisoformat takes no 1-, 2- or 9-digit
    # fraction, as stored times have
    then = dt.datetime.strptime(stored[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc)
    seconds = (now - then).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 48 * 3600:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"


def _when(run: RunRef, now: dt.datetime) -> str:
    stored = run.ended_at or run.started_at
    return f'<span title="{attribute(shown_time(stored))}">{text(ago(stored, now))}</span>'


def _name(value: object, href: str) -> str:
    return (
        f'<a href="{attribute(href)}" title="{attribute(value)}">'
        f"{text(value, limit=NAME_COLUMNS)}</a>"
    )


def _actions(dataset: DatasetRef, partitions: Sequence[PartitionRef]) -> str:
    """Links to the impact of ``partitions`` of ``dataset`` (none: the whole) and to its
    backfill plan; more than the answer page takes: the dataset page, them selected."""
    if len(partitions) > MAX_LINKED:
        chosen = dataset_link(dataset, partitions[:MAX_LINKED])
        return f'<a href="{attribute(chosen)}">select them on the dataset page</a>'
    impact = answer_link(dataset, partitions)
    return (
        f'<a class="impact" href="{attribute(impact)}">impact</a> \u00b7 '
        f'<a class="plan" href="{attribute(impact + "#" + plan_anchor())}">backfill plan</a>'
    )


def _partition_rows(found: Incidents, now: dt.datetime) -> list[str]:
    rows = []
    for partition, dataset, run, label in found.partitions:
        if partition is None:
            where, chosen = "the whole dataset", []
        else:
            chosen = [partition]
            where = (
                f'<a href="{attribute(dataset_link(dataset, chosen))}" '
                f'title="{attribute(partition)}: selected on its dataset\'s page">'
                f"{text(partition)}</a>"
            )
        sure = "" if label == "definite" else ' <span class="note">(possibly)</span>'
        rows.append(
            f'<tr class="incident"><td>{_name(dataset, dataset_link(dataset))}</td>'
            f'<td class="partition">{where}{sure}</td>'
            f'<td class="nowrap">{_when(run, now)}</td>'
            f"<td>{job_link(run)} {text(run.status)}</td>"
            f'<td class="nowrap">{_actions(dataset, chosen)}</td></tr>'
        )
    return rows


def _count(write: FailedWrite) -> str:
    more = f" (the first {len(write.partitions)} listed)" if write.more else ""
    return f"{len(write.partitions)}{'+' if write.more else ''} partition(s){more}"


def _run_rows(runs: Sequence[FailedRun], now: dt.datetime) -> list[str]:
    rows = []
    for item in runs:
        run = item.run
        left = "".join(
            f"<li>{_name(write.dataset, dataset_link(write.dataset))}: "
            + ("the whole dataset" if write.whole else _count(write))
            + f" \u2014 {_actions(write.dataset, [ref for ref, _ in write.partitions])}</li>"
            for write in item.writes
        )
        wrote = f'<ul class="left">{left}</ul>' if left else "rewritten since by completed runs"
        rows.append(
            f'<tr class="failed-run"><td class="id">{_name(run.run_id, run_link(run.run_id))}</td>'
            f"<td>{job_link(run)}</td>"
            f'<td class="nowrap">{text(run.status)}</td>'
            f'<td class="nowrap">{_when(run, now)}</td><td>{wrote}</td></tr>'
        )
    return rows


def incidents_html(found: Incidents, now: dt.datetime) -> str:
    """The incidents section: the partitions whose last write failed, then the failed runs."""
    if not found.runs:
        return (
            '<section class="incidents"><h1>Incidents</h1>'
            '<p class="note">No failed run in the database: nothing to recompute.</p></section>'
        )
    partitions = _partition_rows(found, now)
    listing = (
        '<table class="list incidents"><thead><tr><th>dataset</th><th>partition</th>'
        "<th>failed</th><th>last written by</th><th>what to do</th></tr></thead>"
        f"<tbody>{''.join(partitions)}</tbody></table>"
        if partitions
        else '<p class="note">None: completed runs rewrote what the failed runs wrote.</p>'
    )
    shown = len(found.runs)
    return "".join(
        [
            '<section class="incidents"><h1>Incidents</h1>',
            "<h2>Partitions whose last write failed</h2>",
            '<p class="note">The newest first: a failed or aborted run may have written them, '
            "and no completed run has since. Recompute them: follow the backfill plan.</p>",
            listing,
            "<h2>Latest failed runs</h2>",
            f'<p class="note">The latest {shown} of {found.failed_total} failed or aborted '
            "run(s), with what each left as the last write.</p>",
            '<table class="list failed-runs"><thead><tr><th>run</th><th>job</th><th>state</th>'
            "<th>ended</th><th>left half written</th></tr></thead>"
            f"<tbody>{''.join(_run_rows(found.runs, now))}</tbody></table>",
            "</section>",
        ]
    )
