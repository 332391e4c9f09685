"""The web UI's pages: the data each shows, made into HTML by its template (``templates/``).

Every name, value and message here may come from an event anyone wrote: the templates show
each through the escaping rule's filters (:mod:`._templates`). The text to copy is made here
as the command line writes it, its escapes bare. The pages hold no inline script or handler:
the one script and the one style sheet are the package's own (``/static/ui.js``, ``ui.css``),
and an answer's graph and grids are the static report's body
(:func:`openlineage_subset.report.body`), whose style (:data:`~openlineage_subset.report.STYLE`)
the response's Content-Security-Policy allows by its hash.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import shlex
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import urlencode

from markupsafe import Markup

from openlineage_subset import printable, printable_json, read_json
from openlineage_subset.lineage import (
    DatasetFacets,
    DatasetRef,
    DatasetsReport,
    DatasetSummary,
    Dimensions,
    HistoryReport,
    ImpactReport,
    Incidents,
    Label,
    PartitionSet,
    PartitionsReport,
    ProvenanceReport,
    RunDetails,
    RunPartitions,
    RunRef,
    RunsReport,
    indented_json,
    no_partitions_note,
)
from openlineage_subset.producer import NULL_PARTITION
from openlineage_subset.report import GRID_STYLE, legend_html
from openlineage_subset.service._answer_runs import ImpactRuns, ProvenanceRuns, Summary
from openlineage_subset.service._partition_grid import DrawnPartitions, dataset_grid
from openlineage_subset.service._templates import render

DATASET_STYLES = (GRID_STYLE,)
"""The inline styles of a dataset page (the answers' grid style), allowed by their hash."""

MAX_HISTORY = 40
"""Runs listed on a dataset's page: the latest."""


@dataclasses.dataclass(frozen=True)
class Page:
    """A page of the UI as a handler answers it."""

    html: str
    status: int = 200
    styles: Sequence[str] = ()
    """The inline styles it holds: the response's Content-Security-Policy allows them."""


def _page(template: str, *, status: int = 200, styles: Sequence[str] = (), **data: object) -> Page:
    """The page ``template`` made of ``data`` and its ``status``; ``styles``: the report's, put
    in its head."""
    inline = [Markup(style) for style in styles]
    return Page(render(template, status=status, styles=inline, **data), status, styles)


def _matches(summary: DatasetSummary, words: Sequence[str]) -> bool:
    name = str(summary.dataset).lower()
    return all(word in name for word in words)


def front_page(report: DatasetsReport, search: str, incidents: Incidents) -> Page:
    """The ``incidents`` first (the partitions whose last write failed, the latest failed runs,
    how long ago), then every dataset, the most recently written first; ``search`` keeps those
    whose name has each of its words (as the script does while one types)."""
    words = search.lower().split()
    return _page(
        "front.html",
        incidents=incidents,
        now=dt.datetime.now(dt.timezone.utc),
        search=search,
        shown=[item for item in report.datasets if _matches(item, words)],
        total=len(report.datasets),
    )


def runs_page(runs: RunsReport) -> Page:
    """The latest ``runs``, with the datasets each wrote."""
    return _page("runs.html", runs=runs)


def run_page(details: RunDetails, covered: Sequence[RunPartitions] = ()) -> Page:
    """A run's facts, reads and writes (``covered``: the partitions each may cover, as links),
    events and facets."""
    return _page(
        "run.html",
        run=details.run,
        details=details,
        reads={item.dataset: item for item in covered if item.direction == "read"},
        writes={item.dataset: item for item in covered if item.direction == "write"},
    )


def _shown(value: str | None) -> str:
    return NULL_PARTITION if value is None else value


def _example(report: PartitionsReport) -> str:
    """What to type for a partition of this dataset: its newest known one, else the form alone
    (no column of another dataset's)."""
    if not report.partitions:
        return "column=value, column=value"
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
) -> Page:
    """A dataset's facts, its partitions as a grid of checkboxes in a form (``selected``: the
    ones ticked; ``failed``: the partitions a failed run may have written since their last
    completed write, see :mod:`._partition_grid`), its latest runs and ``facets``."""
    drawn = partitions  # the states of the partitions drawn (drawn_partitions), or all
    if not isinstance(drawn, DrawnPartitions):
        drawn = DrawnPartitions(drawn, failed or {}, None)
    grid = dataset_grid(drawn.report, drawn.failed, set(selected), drawn.grid)
    page = drawn.page
    if page is not None and page.older is None and page.newer is None:
        page = None  # all its rows are drawn: no link to others
    latest = list(reversed(history.entries))[:MAX_HISTORY]
    return _page(
        "dataset.html",
        styles=DATASET_STYLES,
        dataset=dataset,
        summary=summary,
        page=page,
        rows=() if drawn.grid is None else drawn.grid.rows,
        legend=Markup(legend_html("partitions")),
        grid=grid,
        empty=None if grid is not None else no_partitions_note(drawn.report),
        example=_example(drawn.report),
        history=latest,
        earlier=(history_total or len(history.entries)) - len(latest),
        facets=facets,
    )


@dataclasses.dataclass(frozen=True)
class Section:
    """One answer on the answer page: the report's graph and grids, and the text to copy."""

    heading: str
    report_body: Markup
    unseen: str | None
    copies: tuple[tuple[str, str], ...]
    """(label, text) pairs shown in a ``<pre>`` with a copy button each."""
    runs: ImpactRuns | ProvenanceRuns
    summary: Summary | None = None
    """An answer too large to draw (:data:`~._answer_runs.ANSWER_RUNS`): what it holds, the
    runs ``runs`` lists of it and the links to the others; None: drawn whole."""


def answer_page(
    query: str,
    dataset: DatasetRef,
    sections: Sequence[Section],
    combined: Sequence[tuple[str, str]],
    styles: Sequence[str],
) -> Page:
    """The ``query`` (impact or provenance) of ``dataset``: a section per partition asked, and
    the ``combined`` texts to copy of all of them first."""
    title = ("Impact" if query == "impact" else "Provenance") + f": {dataset}"
    return _page(
        "answer.html",
        styles=styles,
        title=title,
        query=query,
        dataset=dataset,
        sections=sections,
        combined=combined,
    )


def _counted(part: PartitionSet) -> str:
    """A part of a dataset by how many partitions it holds."""
    if part.whole is not None and not part.definite and not part.possible:
        return f"{part.dataset} (the whole dataset, {part.whole})"
    counted = [f"the whole dataset ({part.whole})"] if part.whole is not None else []
    counted += [f"{len(part.definite):,} definite"] if part.definite else []
    counted += [f"{len(part.possible):,} possible"] if part.possible else []
    return f"{part.dataset}: {', '.join(counted)} partition(s)"


def impact_counts(report: ImpactReport) -> tuple[str, ...]:
    """What an impact answer holds, counted: its runs, what to recompute, the tasks."""
    definite = sum(item.label == "definite" for item in report.runs)
    plan = "; ".join(_counted(part) for part in report.backfill)
    return (
        f"{len(report.runs):,} runs affected: {definite:,} definite, "
        f"{len(report.runs) - definite:,} possible; failed runs are listed but write nothing",
        "To recompute: " + (plan or "nothing (no affected run completed a write)"),
        f"{len(report.tasks):,} task run(s) or jobs to re-run",
    )


def provenance_counts(report: ProvenanceReport, runs: int) -> tuple[str, ...]:
    """What a provenance answer holds, counted: the runs behind it, its latest writers."""
    return (
        f"{runs:,} runs behind it, of which {len(report.writers):,} wrote what was asked "
        "about last; listed the latest ended first",
        "Asked about: " + _counted(report.target),
    )


def whole_answer(
    kind: str,
    dataset: DatasetRef,
    partition: Mapping[str, str | None] | None,
    params: Mapping[str, str],
    db: str,
    *,
    whole: bool,
) -> str:
    """Where the whole of an answer too large for a page is, as text to copy: the JSON API's
    request (a page at a time) and the command that prints it all."""
    pairs = [("dataset", dataset.name), ("namespace", dataset.namespace)]
    pairs += [("partition", f"{name}={_shown(value)}") for name, value in (partition or {}).items()]
    options = [*(("--partition", value) for _, value in pairs[2:])]
    for name in ("since", "depth"):
        if params.get(name):
            pairs.append((name, params[name]))
            options.append((f"--{name}", params[name]))
    words = ["ol-subset", "lineage", kind, dataset.name, "--namespace", dataset.namespace]
    words += [word for option in options for word in option]
    words += ["--db", db, "--format", "json"]
    asked = "the whole dataset" if whole else "this partition"
    lines = [
        f"# the whole {kind} of {asked}, as JSON, a page at a time (each page's 'next' as "
        "&cursor= for the following one):",
        f"GET /api/v1/{kind}?{urlencode(pairs)}",
        "# or all of it at once, on the command line:",
        " ".join(shlex.quote(word) for word in words),
    ]
    return "\n".join(printable(line) for line in lines) + "\n"


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


def error_page(status: int, message: str, back: DatasetRef | None = None) -> Page:
    """What was wrong (``back``: the dataset whose page to link), answered with ``status``."""
    return _page("error.html", status=status, message=message, back=back)


def login_page(next_path: str, problem: str | None, keyed: bool) -> Page:
    """The form that takes the API key (``problem``: why the last one was refused, answered
    401), or that this server has none (``keyed`` False)."""
    return _page(
        "login.html",
        status=200 if problem is None else 401,
        next_path=next_path,
        problem=problem,
        keyed=keyed,
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
            # the strict reader: a column given twice is refused, not read as its last value
            parsed = read_json(value)
        except ValueError as error:
            raise ValueError(
                f"p takes a partition as a JSON object of column to value, got {value!r}: {error}"
            ) from None
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
