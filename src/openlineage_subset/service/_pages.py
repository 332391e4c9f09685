"""The web UI's pages as HTML: the dataset list, a dataset and its partitions, an answer, a run.

Every name, value and message here may come from an event anyone wrote: each is escaped where
it is put (:func:`text` in an element, :func:`attribute` in an attribute: the report's,
:mod:`openlineage_subset.report`), a control or bidirectional character shown as its
escape, marked; JSON as JSON escapes (:func:`~openlineage_subset._printable.printable_json`),
marked too; the text to copy with its escapes bare, as the command line writes them. The pages
hold no inline script or handler: the one script and the one style sheet are the package's own
(``/static/ui.js``, ``ui.css``), and an answer's graph and grids are the static report's body
(:func:`openlineage_subset.report.body`), whose style (:data:`~openlineage_subset.report.STYLE`)
the response's Content-Security-Policy allows by its hash.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import json
from collections.abc import Iterable, Mapping, Sequence

from openlineage_subset import __version__, json_escapes, printable, printable_json
from openlineage_subset.lineage import (
    DatasetFacets,
    DatasetRef,
    DatasetsReport,
    DatasetSummary,
    Dimensions,
    Facet,
    HistoryReport,
    Incidents,
    Label,
    PartitionSet,
    PartitionsReport,
    RunAccess,
    RunDetails,
    RunPartitions,
    RunRef,
    indented_json,
    shown_time,
)
from openlineage_subset.producer import NULL_PARTITION
from openlineage_subset.report import GRID_STYLE, attribute, marked, text
from openlineage_subset.service._answer_runs import partition_links
from openlineage_subset.service._incidents_page import incidents_html
from openlineage_subset.service._links import dataset_link, job_link, plan_anchor, run_link
from openlineage_subset.service._partition_grid import DrawnPartitions, dataset_grid

DATASET_STYLES = (GRID_STYLE,)
"""The inline styles of a dataset page (the answers' grid style), allowed by their hash."""

MAX_HISTORY = 40
"""Runs listed on a dataset's page: the latest."""


NAME_COLUMNS = 60
"""Columns of a job or dataset name in a table of runs; the whole of it in its ``title``."""


def _a(href: str, label: object, *, limit: int | None = None) -> str:
    """A link; with ``limit``, its text cut in its middle to that many columns, the whole text
    in its ``title``."""
    whole = "" if limit is None else f' title="{attribute(label)}"'
    return f'<a href="{attribute(href)}"{whole}>{text(label, limit=limit)}</a>'


def _time(value: str | None) -> str:
    return "" if value is None else text(shown_time(value))


def layout(title: str, body: Iterable[str], *, styles: Sequence[str] = ()) -> str:
    """A whole page: the package's style sheet and script, then ``styles`` (the report's)."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(printable(title), quote=False)}</title>",
            '<link rel="icon" href="data:,">',  # no favicon.ico to ask for
            '<link rel="stylesheet" href="/static/ui.css">',
            *(f"<style>{style}</style>" for style in styles),
            '<script src="/static/ui.js" defer></script>',
            "</head>",
            "<body>",
            '<header class="top"><a class="brand" href="/">ol-subset lineage</a>'
            '<a href="/">Datasets</a><a href="/runs">Runs</a></header>',
            "<main>",
            *body,
            f'<p class="note">ol-subset {text(__version__)}: every page reads the database when '
            "it is asked for; reload for what arrived since.</p>",
            "</main>",
            "</body>",
            "</html>",
        ]
    )


def _matches(summary: DatasetSummary, words: Sequence[str]) -> bool:
    name = str(summary.dataset).lower()
    return all(word in name for word in words)


def front_page(
    report: DatasetsReport,
    search: str,
    incidents: Incidents | None = None,
    now: dt.datetime | None = None,
) -> str:
    """The ``incidents`` first (the partitions whose last write failed, the latest failed runs,
    how long before ``now``), then every dataset, the most recently written first; ``search``
    keeps those whose name has each of its words (as the script does while one types)."""
    words = search.lower().split()
    shown = [item for item in report.datasets if _matches(item, words)]
    rows = []
    for item in shown:
        rows.append(
            f'<tr data-search="{attribute(str(item.dataset).lower())}">'
            f"<td>{_a(dataset_link(item.dataset), item.dataset)}</td>"
            f"<td>{_time(item.last_written_at) or 'never written'}</td>"
            f'<td class="number">{item.writes}</td><td class="number">{item.reads}</td>'
            f'<td class="number">{item.partitions}</td></tr>'
        )
    if not report.datasets:
        listing = '<p class="note">No dataset yet: send events to POST /api/v1/lineage.</p>'
    else:
        listing = (
            '<table class="list datasets"><thead><tr><th>dataset</th><th>last written</th>'
            "<th>writes</th><th>reads</th><th>partitions</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    first = []
    if incidents is not None:
        first.append(incidents_html(incidents, now or dt.datetime.now(dt.timezone.utc)))
    return layout(
        "Datasets: ol-subset lineage",
        [
            *first,
            '<h2 class="datasets">Datasets</h2>' if first else "<h1>Datasets</h1>",
            '<form class="search" action="/" method="get" role="search">'
            '<label>Find a dataset: <input id="dataset-search" type="search" name="q" '
            f'value="{attribute(search)}" autocomplete="off" autofocus></label> '
            '<button type="submit">Search</button></form>',
            f'<p class="note" id="dataset-count">{len(shown)} of {len(report.datasets)} '
            "dataset(s)</p>",
            listing,
        ],
    )


def runs_page(
    runs: Iterable[tuple[RunRef, Sequence[RunAccess], Sequence[RunAccess]]], total: int
) -> str:
    rows = [
        f'<tr><td class="id">{_a(run_link(run.run_id), run.run_id)}</td>'
        f"<td>{job_link(run)}</td>"
        f'<td class="nowrap">{text(run.status)}</td>'
        f'<td class="nowrap">{_time(run.started_at)}</td>'
        f'<td class="nowrap">{_time(run.ended_at)}</td>'
        f'<td class="wrote">{_wrote(outputs)}</td>'
        "</tr>"
        for run, _, outputs in runs
    ]
    return layout(
        "Runs: ol-subset lineage",
        [
            "<h1>Runs</h1>",
            f'<p class="note">The latest {len(rows)} of {total} run(s), the most recently '
            "started first.</p>",
            '<table class="list runs"><thead><tr><th>run</th><th>job</th><th>state</th>'
            "<th>started</th><th>ended</th><th>wrote</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>",
        ],
    )


def _wrote(outputs: Sequence[RunAccess]) -> str:
    """The datasets a run wrote, one a line, each a link cut to :data:`NAME_COLUMNS` (the whole
    name in its title), the condition in the title too."""
    return "<br>".join(
        f'<a href="{attribute(dataset_link(out.dataset))}" title="'
        f'{attribute(str(out.dataset) + " where " + (out.condition or "the whole dataset"))}">'
        f"{text(out.dataset, limit=NAME_COLUMNS)}</a>"
        for out in outputs
    )


def run_page(details: RunDetails, covered: Sequence[RunPartitions] = ()) -> str:
    """A run's facts, reads and writes (``covered``: the partitions each may cover, as links),
    events and facets."""
    run = details.run
    reads = {item.dataset: item for item in covered if item.direction == "read"}
    writes = {item.dataset: item for item in covered if item.direction == "write"}
    facts = [
        ("run", text(run.run_id)),
        ("job", text(run.job)),
        ("state", text(run.status)),
        ("started", _time(run.started_at)),
        ("ended", _time(run.ended_at) or "not ended"),
    ]
    events = "".join(
        f"<tr><td>{text(event.event_type)}</td><td>{_time(event.event_time)}</td>"
        f"<td>{text(event.source)}</td></tr>"
        for event in details.events
    )
    return layout(
        f"Run {run.run_id}: ol-subset lineage",
        [
            f"<h1>Run {text(run.run_id)}</h1>",
            _facts(facts),
            "<h2>Read</h2>",
            _accesses(details.inputs, reads),
            "<h2>Wrote</h2>",
            _accesses(details.outputs, writes),
            "<h2>Events</h2>",
            '<table class="list events"><thead><tr><th>type</th><th>time</th>'
            f"<th>first read from</th></tr></thead><tbody>{events}</tbody></table>",
            "<h2>Facets</h2>",
            _facet_groups(details),
        ],
    )


def _facet_items(facets: Iterable[Facet]) -> str:
    """Each facet folded: its name and the event it is from, then its JSON."""
    return "".join(
        f'<details class="facet"><summary><code>{text(facet.name)}</code> '
        f'<span class="note">from {text(facet.event.event_type)} at '
        f"{_time(facet.event.event_time)}</span></summary>"
        f"<pre>{_json_text(facet.value)}</pre></details>"
        for facet in facets
    )


def _dataset_facets(found: DatasetFacets | None) -> str:
    if found is None:
        return '<p class="note">None given by its latest runs.</p>'
    return (
        '<p class="note">As the latest run that gave any gave them, '
        f"{_a(run_link(found.run_id), found.run_id)} (the dataset's own and those of its read or "
        "write).</p>" + _facet_items(found.facets)
    )


def _json_text(value: object) -> str:
    """``value`` as indented JSON in a ``<pre>``, each character that does not print as its
    JSON escape, marked as :func:`text` marks escapes."""
    return marked(json_escapes(json.dumps(value, indent=2, ensure_ascii=False)))


def _facet_groups(details: RunDetails) -> str:
    """The run's facets, grouped (run, job, each dataset), each folded with its JSON, and the
    events whose facets the database does not hold."""
    parts = []
    for group in details.facets:
        heading = text(group.heading)
        if group.dataset is not None:
            heading += " " + _a(dataset_link(group.dataset), group.dataset)
        parts.append(f"<h3>{heading}</h3>{_facet_items(group.facets)}")
    for event, why in details.facets_not_kept:
        parts.append(
            f'<p class="note">The facets of the {text(event.event_type)} event at '
            f"{_time(event.event_time)} are not held: {text(why)}.</p>"
        )
    if not parts:
        return '<p class="note">No facets besides the subset conditions shown above.</p>'
    parts.append(
        '<p class="note">Of each facet, the one of the latest event that has it; the subset '
        "conditions are shown above as text.</p>"
    )
    return "".join(parts)


def _facts(facts: Iterable[tuple[str, str]]) -> str:
    items = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts)
    return f'<dl class="facts">{items}</dl>'


def _accesses(items: Sequence[RunAccess], covered: Mapping[DatasetRef, RunPartitions]) -> str:
    if not items:
        return '<p class="note">Nothing.</p>'
    rows = "".join(
        f"<tr><td>{_a(dataset_link(item.dataset), item.dataset)}</td>"
        f'<td class="condition">{text(item.condition or "the whole dataset")}</td>'
        f"<td>{_covered(covered.get(item.dataset))}</td></tr>"
        for item in items
    )
    return (
        '<table class="list accesses"><thead><tr><th>dataset</th><th>where</th>'
        f"<th>known partitions it may cover</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _covered(found: RunPartitions | None) -> str:
    """The partitions a read or write may cover, each a link to its dataset's page with it
    selected."""
    if found is None or found.whole:
        return "" if found is None else "the whole dataset"
    if not found.partitions:
        return '<span class="note">none known</span>'
    more = " and more" if found.more else ""
    return partition_links(found.dataset, found.partitions) + more


def _shown(value: str | None) -> str:
    return NULL_PARTITION if value is None else value


def _example(report: PartitionsReport) -> str:
    """What to type for a partition of this dataset: its newest known one, else a made-up one."""
    if not report.partitions:
        return "day=2024-10-15, country=DE"
    newest = report.partitions[-1].partition.dimensions
    return ", ".join(f"{name}={_shown(value)}" for name, value in newest)


def dataset_page(
    dataset: DatasetRef,
    summary: DatasetSummary | None,
    partitions: PartitionsReport | DrawnPartitions,
    history: HistoryReport,
    selected: Sequence[str] = (),
    *,
    facets: DatasetFacets | None = None,
    failed: Mapping[Dimensions, RunRef] | None = None,
    history_total: int | None = None,
) -> str:
    """A dataset's facts, its partitions as a grid of checkboxes in a form (``selected``: the
    ones ticked; ``failed``: the partitions a failed run may have written since their last
    completed write, see :mod:`._partition_grid`), its latest runs and ``facets``. The page needs
    :data:`DATASET_STYLES` besides the package's style sheet."""
    drawn = partitions  # the states of the partitions drawn (drawn_partitions), or all
    if not isinstance(drawn, DrawnPartitions):
        drawn = DrawnPartitions(drawn, failed or {}, None)
    facts = [("dataset", text(dataset)), ("namespace", text(dataset.namespace))]
    facts.append(("name", text(dataset.name)))
    if summary is not None:
        facts += [
            ("last written", _time(summary.last_written_at) or "never"),
            ("writes / reads", f"{summary.writes} / {summary.reads}"),
            ("partitions known", str(summary.partitions)),
        ]
    entries = list(reversed(history.entries))[:MAX_HISTORY]
    runs = "".join(
        f"<tr><td>{text(entry.direction)}</td>"
        f'<td class="id">{_a(run_link(entry.run.run_id), entry.run.run_id)}</td>'
        f"<td>{job_link(entry.run)}</td>"
        f'<td class="nowrap">{text(entry.run.status)}</td>'
        f'<td class="nowrap">{_time(entry.run.ended_at or entry.run.started_at)}</td>'
        f'<td class="condition">{text(entry.condition or "the whole dataset")}</td></tr>'
        for entry in entries
    )
    more = (history_total or len(history.entries)) - len(entries)  # history: the latest only
    return layout(
        f"{dataset}: ol-subset lineage",
        [
            f"<h1>{text(dataset)}</h1>",
            _facts(facts),
            "<h2>Partitions</h2>",
            '<p id="modes" class="modes" hidden>A click on a partition: '
            '<label><input type="radio" name="mode" value="impact" checked> shows its '
            "impact</label>"
            '<label><input type="radio" name="mode" value="provenance"> shows its '
            "provenance</label>"
            '<label><input type="radio" name="mode" value="select"> selects it (then a button '
            "below)</label></p>",
            '<form id="partitions" action="/answer" method="get">',
            f'<input type="hidden" name="namespace" value="{attribute(dataset.namespace)}">',
            f'<input type="hidden" name="name" value="{attribute(dataset.name)}">',
            _row_pages(dataset, drawn),
            dataset_grid(drawn.report, drawn.failed, set(selected), drawn.grid),
            '<p><label>Or a partition by its values: <input type="text" name="ask" size="40" '
            f'placeholder="{attribute(_example(drawn.report))}"></label> '
            '<label>since <input type="text" name="since" size="12" placeholder="2024-10-15">'
            '</label> <label>depth <input type="number" name="depth" min="1" size="4"></label></p>',
            '<p><button type="submit" name="query" value="impact">Impact of the selected '
            "(none: the whole dataset)</button> "
            '<button type="submit" name="query" value="provenance">Provenance of the selected'
            "</button></p>",
            "</form>",
            "<h2>Latest runs</h2>",
            '<table class="list history"><thead><tr><th></th><th>run</th><th>job</th>'
            f"<th>state</th><th>time</th><th>where</th></tr></thead><tbody>{runs}</tbody></table>"
            + (f'<p class="note">and {more} earlier run(s)</p>' if more > 0 else ""),
            "<h2>Facets</h2>",
            _dataset_facets(facets),
        ],
        styles=DATASET_STYLES,
    )


def _row_pages(dataset: DatasetRef, drawn: DrawnPartitions) -> str:
    """The rows the grid draws, and links to the rows before and after them (each a page
    of the same dataset with ``before``), when it draws some of them only."""
    page, grid = drawn.page, drawn.grid
    if page is None or grid is None or (page.older is None and page.newer is None):
        return ""
    links = []
    if page.older is not None:
        links.append(_a(dataset_link(dataset, before=page.older), "\u2190 older rows"))
    if page.newer is not None:
        links.append(_a(dataset_link(dataset, before=page.newer), "newer rows \u2192"))
        if page.newer:
            links.append(_a(dataset_link(dataset), "the newest"))
    drawn_rows = f"{text(page.column)} from {text(grid.rows[0])} to {text(grid.rows[-1])}"
    return f'<p class="pages">Drawn: {drawn_rows}. ' + " \u00b7 ".join(links) + "</p>"


@dataclasses.dataclass(frozen=True)
class Section:
    """One answer on the answer page: the report's graph and grids, and the text to copy."""

    heading: str
    report_body: str
    unseen: str | None
    copies: tuple[tuple[str, str], ...]
    """(label, text) pairs shown in a ``<pre>`` with a copy button each."""
    runs: str = ""
    """The answer's runs, datasets and partitions as links (HTML, :mod:`._answer_runs`)."""


def _copyable(number: str, label: str, content: str) -> str:
    identifier = f"copy-{number}"
    return (
        f"<h3>{text(label)}</h3>"
        f'<button type="button" class="copy" data-copy="{identifier}" hidden>Copy</button>'
        f'<pre class="copyable" id="{identifier}">{_plain_lines(content)}</pre>'
    )


def _plain_lines(content: str) -> str:
    """Text to copy, escaped, what does not print (left in it) written as its escape, bare:
    what is copied is the text shown."""
    if content.replace("\n", "").isprintable():  # the usual case: escaped at once
        return html.escape(content, quote=False)
    return "\n".join(html.escape(printable(line), quote=False) for line in content.split("\n"))


def answer_page(
    title: str,
    dataset: DatasetRef,
    sections: Sequence[Section],
    combined: Sequence[tuple[str, str]],
    styles: Sequence[str],
) -> str:
    body = [
        f"<h1>{text(title)}</h1>",
        f"<p>{_a(dataset_link(dataset), 'back to ' + str(dataset))}</p>",
    ]
    for number, (label, content) in enumerate(combined):
        body.append(_copyable(f"all-{number}", label, content))
    for index, section in enumerate(sections):
        body.append(f'<section class="answer" aria-label="{attribute(section.heading)}">')
        if section.unseen:
            body.append(f'<p class="unseen">{text(section.unseen)}</p>')
        body.append(f'<div class="report">\n{section.report_body}\n</div>')
        body.append(section.runs)
        body.append(f'<div id="{plan_anchor(index)}" class="plan">')
        for number, (label, content) in enumerate(section.copies):
            body.append(_copyable(f"{index}-{number}", label, content))
        body.append("</div>")
        body.append("</section>")
    return layout(title, body, styles=styles)


def plan_text(backfill: Sequence[PartitionSet], heading: str) -> str:
    """A backfill plan to copy: every dataset and every partition to recompute, one a line."""
    lines = [f"# {heading}", "# recompute:"]
    if not backfill:
        lines.append("# nothing: no affected run completed a write")
    for part in backfill:
        lines.append(str(part.dataset))
        if part.whole is not None:
            lines.append(f"  whole dataset ({part.whole})")
        lines += (f"  definite {item}" for item in part.definite)
        lines += (f"  possible {item}" for item in part.possible)
    return "\n".join(printable(line) for line in lines) + "\n"


def plan_json(backfill: Sequence[PartitionSet]) -> str:
    plan = {"backfill": [part.as_json() for part in backfill]}
    return printable_json(indented_json(plan, ensure_ascii=False)) + "\n"


def error_page(status: int, message: str, back: DatasetRef | None = None) -> str:
    link = f"<p>{_a(dataset_link(back), 'back to ' + str(back))}</p>" if back else ""
    return layout(
        f"Error {status}: ol-subset lineage",
        [
            f"<h1>Cannot answer that (HTTP {status})</h1>",
            f'<p class="error">{text(message)}</p>',
            link,
        ],
    )


def login_page(next_path: str, problem: str | None, keyed: bool) -> str:
    if not keyed:
        return layout(
            "Log in: ol-subset lineage",
            [
                "<h1>No key needed</h1>",
                '<p>This server has no API key. <a href="/">Datasets</a></p>',
            ],
        )
    shown = f'<p class="error">{text(problem)}</p>' if problem else ""
    return layout(
        "Log in: ol-subset lineage",
        [
            "<h1>Log in</h1>",
            shown,
            '<form method="post" action="/login">'
            f'<input type="hidden" name="next" value="{attribute(next_path)}">'
            '<label>API key: <input type="password" name="key" autocomplete="current-password" '
            'autofocus required></label> <button type="submit">Log in</button></form>',
            '<p class="note">The key is the server\'s --api-key. The browser keeps a token '
            "derived from it in a cookie (HttpOnly, SameSite=Strict) until it closes.</p>",
        ],
    )


def merged(parts: Iterable[PartitionSet]) -> list[PartitionSet]:
    """Several backfill plans as one: per dataset (in the order first met), the whole dataset
    at its strongest label, each partition once, definite where any plan says so."""
    order: dict[DatasetRef, list[PartitionSet]] = {}
    for part in parts:
        order.setdefault(part.dataset, []).append(part)
    plans = []
    for dataset, found in order.items():
        wholes = [part.whole for part in found if part.whole is not None]
        whole: Label | None = None
        if wholes:
            whole = "definite" if "definite" in wholes else "possible"
        definite = tuple(dict.fromkeys(item for part in found for item in part.definite))
        sure = set(definite)
        possible = tuple(
            dict.fromkeys(item for part in found for item in part.possible if item not in sure)
        )
        plans.append(PartitionSet(dataset, whole, definite, possible))
    return plans


def selected_partitions(values: Iterable[str]) -> list[Mapping[str, str | None]]:
    """The partitions of the ``p`` parameters (JSON objects); ValueError for one that is not."""
    found: list[Mapping[str, str | None]] = []
    for value in values:
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if (
            not isinstance(parsed, dict)
            or not parsed
            or not all(
                isinstance(name, str) and (item is None or isinstance(item, str))
                for name, item in parsed.items()
            )
        ):
            raise ValueError(
                f"p takes a partition as a JSON object of column to value, got {value!r}"
            )
        found.append(parsed)
    return found
