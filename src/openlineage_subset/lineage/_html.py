"""A :class:`~._picture.Picture` as one self-contained HTML page: inline CSS and SVG, no script.

Nothing is fetched when the page is viewed: no script, font, image or style sheet from
anywhere, and a Content-Security-Policy that forbids them, so a page mailed around at 3 a.m.
shows the same thing offline. Every name, value and note comes from events that anyone may
have written, so each is escaped where it is put (text or attribute); the policy is a second
line of defence, not the first. Hover texts are ``title`` attributes and SVG ``<title>``s.

A control character or a bidirectional one (U+202E would show the dataset ``evil`` as ``live``
and reorder what follows it) is written as its escape (``\\u202e``), as the text answers write
it: in text, marked in a ``<span class="escape">`` (``<tspan>`` in the graph) so that it stands
out; in hover texts and attributes, which hold no markup, as the bare escape.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterable, Mapping

from openlineage_subset import __version__
from openlineage_subset._printable import escapes, printable
from openlineage_subset.lineage._picture import (
    CellState,
    GraphNode,
    Grid,
    Picture,
    report_picture,
)
from openlineage_subset.lineage._store import LineageStore

_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_LAYER_WIDTH, _NODE_WIDTH, _NODE_HEIGHT, _ROW_HEIGHT, _MARGIN = 250, 210, 46, 60, 20
_NODE_TEXT = 29
"""Characters of a name drawn in a node; the whole name is in its hover text."""
LEGEND: dict[str, dict[CellState, str]] = {
    "impact": {
        "affected": "affected",
        "possible": "possibly affected",
        "read": "read by an affected run",
        "known": "known, not affected",
    },
    "provenance": {
        "written": "asked about: written by its latest writers",
        "read": "read by a run behind it",
        "possible": "possibly written or read",
        "known": "known, not in this answer",
    },
    "overview": {
        "written": "last written by a completed run",
        "possible": "possibly: its last write's condition depends on other columns",
        "known": "no completed write known (read only, or failed writes)",
    },
}
_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1b1b1b; background: #fff; }
h1 { font-size: 20px; margin: 0 0 8px; overflow-wrap: anywhere; }
h2 { font-size: 16px; margin: 28px 0 8px; }
h3 { font-size: 14px; margin: 20px 0 6px; overflow-wrap: anywhere; }
p.summary { margin: 2px 0; }
.legend span { display: inline-block; margin-right: 16px; }
.swatch { display: inline-block; width: 14px; height: 14px; vertical-align: -2px;
  margin-right: 4px; border: 1px solid #888; }
.affected { background: #d7301f; }
.possible { background: #fdae61; }
.written { background: #4575b4; }
.read { background: #abd9e9; }
.known { background: #eeeeee; }
.none { background: repeating-linear-gradient(45deg, #fff, #fff 3px, #f4f4f4 3px, #f4f4f4 6px); }
.graph { overflow-x: auto; border: 1px solid #ddd; }
svg text { font: 12px system-ui, sans-serif; }
svg .title { font-weight: 600; }
table.grid { border-collapse: collapse; margin-bottom: 8px; }
table.grid td { width: 16px; height: 16px; border: 1px solid #fff; padding: 0; }
table.grid th { font-weight: normal; font-size: 11px; padding: 0 6px 0 0; text-align: right;
  white-space: nowrap; }
table.grid thead th { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left;
  padding: 4px 0; }
table.grid tr.gap td { width: auto; font-size: 11px; color: #666; text-align: left; }
.note { color: #555; font-size: 12px; }
footer { margin-top: 32px; color: #777; font-size: 12px; }
.escape { font-family: ui-monospace, monospace; color: #a50f15; background: #fde0dd;
  border-radius: 2px; }
svg tspan.escape { font-family: ui-monospace, monospace; fill: #a50f15; }
"""
_NODE_COLOURS = {
    "start": ("#fde0dd", "#d7301f", ""),
    "target": ("#dbe7f5", "#4575b4", ""),
    "dataset": ("#f4f4f4", "#888888", ""),
    "job": ("#eef3fa", "#4575b4", ""),
    "definite": ("#fde0dd", "#d7301f", ""),
    "possible": ("#fff1dc", "#e08a1e", "5 3"),
    "failed": ("#eeeeee", "#555555", "2 3"),
}


def _text(value: object, *, tag: str = "span", limit: int | None = None) -> str:
    """``value`` as the text of an element: escaped, each control or bidirectional character
    shown as its escape in a ``<tag class="escape">``; cut to ``limit`` characters as shown
    (the escapes counted as written, never cut inside one) with an ellipsis."""
    pieces = escapes(str(value))
    if limit is not None and sum(len(piece) for piece, _ in pieces) > limit:
        room, kept = limit - 1, []
        for piece, escaped in pieces:
            if room <= 0 or (escaped and len(piece) > room):
                break
            kept.append((piece[:room], escaped))
            room -= len(kept[-1][0])
        pieces = [*kept, ("\u2026", False)]
    return "".join(
        f'<{tag} class="escape">{html.escape(piece, quote=False)}</{tag}>'
        if escaped
        else html.escape(piece, quote=False)
        for piece, escaped in pieces
    )


def _plain(value: object) -> str:
    """``value`` as the text of an element that holds no markup (``<title>``): escaped, each
    control or bidirectional character as its bare escape."""
    return html.escape(printable(str(value)), quote=False)


def _attribute(value: object) -> str:
    return html.escape(printable(str(value)), quote=True)


def _lines(lines: Iterable[str], escape: Callable[[object], str]) -> str:
    """Hover text of several lines: each escaped alone, so a line break in a name is shown as
    ``\\n`` and only the lines themselves are broken."""
    return "\n".join(escape(line) for line in lines)


def report_html(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str | None = None,
    *,
    provenance: bool = False,
    partition: Mapping[str, str | None] | None = None,
    since: str | None = None,
    depth: int | None = None,
    namespace: str | None = None,
) -> str:
    """The impact (or ``provenance``) answer as one self-contained HTML page: the run graph and
    a grid of partitions per dataset. Arguments as for :func:`~openlineage_subset.lineage.impact`;
    without a dataset, an overview: jobs and datasets, each partition's last writer.

    Example::

        page = report_html("lineage.db", "lake/sales", partition={"day": "2024-10-15"})
        pathlib.Path("impact.html").write_text(page, encoding="utf-8")
    """
    picture = report_picture(
        db,
        dataset,
        provenance=provenance,
        partition=partition,
        since=since,
        depth=depth,
        namespace=namespace,
    )
    return page(picture, source="" if isinstance(db, LineageStore) else os.fspath(db))


def page(picture: Picture, *, source: str = "") -> str:
    """The whole HTML page of ``picture``; ``source`` (the database) is named in the footer."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_plain(picture.title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{_text(picture.title)}</h1>",
        *(f'<p class="summary">{_text(line)}</p>' for line in picture.summary),
        "<h2>Jobs</h2>" if picture.query == "overview" else "<h2>Runs</h2>",
        _graph(picture),
        "<h2>Partitions</h2>",
        _legend(picture.query),
        *(_grid(grid) for grid in picture.grids),
        f"<footer>ol-subset {_text(__version__)} lineage report"
        + (f" from {_text(source)}" if source else "")
        + ". Hover over a cell or a run for its runs and conditions.</footer>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _legend(query: str) -> str:
    items = (
        f'<span><span class="swatch {state}"></span>{_text(label)}</span>'
        for state, label in LEGEND[query].items()
    )
    return f'<p class="legend">{"".join(items)}</p>'


def _graph(picture: Picture) -> str:
    if not picture.nodes:
        return '<p class="note">No runs.</p>'
    places: dict[str, tuple[int, int]] = {}
    per_layer: dict[int, int] = {}
    for node in picture.nodes:
        row = per_layer.get(node.layer, 0)
        per_layer[node.layer] = row + 1
        places[node.key] = (
            _MARGIN + node.layer * _LAYER_WIDTH,
            _MARGIN + row * _ROW_HEIGHT,
        )
    width = _MARGIN * 2 + max(per_layer) * _LAYER_WIDTH + _NODE_WIDTH
    height = _MARGIN * 2 + max(per_layer.values()) * _ROW_HEIGHT
    shapes = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="run-graph" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{_attribute("run graph: " + picture.title)}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#666"/></marker></defs>',
    ]
    for edge in picture.edges:
        x1, y1 = places[edge.source]
        x2, y2 = places[edge.target]
        x1, y1, y2 = x1 + _NODE_WIDTH, y1 + _NODE_HEIGHT // 2, y2 + _NODE_HEIGHT // 2
        dashes = ' stroke-dasharray="6 4"' if edge.label == "possible" else ""
        shapes.append(
            f'<path class="edge {edge.label}" d="M {x1} {y1} C {x1 + 40} {y1}, {x2 - 40} {y2}, '
            f'{x2} {y2}" fill="none" stroke="#666" stroke-width="1.4"{dashes} '
            'marker-end="url(#arrow)"/>'
        )
    shapes += (_node(node, *places[node.key]) for node in picture.nodes)
    shapes.append("</svg>")
    hidden = (
        f'<p class="note">{picture.hidden_nodes} more node(s) not drawn: see the text or JSON '
        "answer for all of them.</p>"
        if picture.hidden_nodes
        else ""
    )
    return f'<div class="graph">{"".join(shapes)}</div>{hidden}'


def _node(node: GraphNode, x: int, y: int) -> str:
    fill, stroke, dashes = _NODE_COLOURS[node.state]
    radius = 3 if node.kind == "dataset" else 14
    dash = f' stroke-dasharray="{dashes}"' if dashes else ""
    return (
        f'<g class="node {node.kind} {node.state}" data-key="{_attribute(node.key)}">'
        f"<title>{_lines(node.notes, _plain)}</title>"
        f'<rect x="{x}" y="{y}" width="{_NODE_WIDTH}" height="{_NODE_HEIGHT}" rx="{radius}" '
        f'fill="{fill}" stroke="{stroke}" stroke-width="1.6"{dash}/>'
        f'<text class="title" x="{x + 10}" y="{y + 19}">{_drawn(node.title)}</text>'
        f'<text x="{x + 10}" y="{y + 36}" fill="#555">{_drawn(node.subtitle)}</text>'
        "</g>"
    )


def _drawn(value: str) -> str:
    """A name drawn in a graph node: at most ``_NODE_TEXT`` characters, escapes marked."""
    return _text(value, tag="tspan", limit=_NODE_TEXT)


def _grid(grid: Grid) -> str:
    heading = f"<h3>{_text(grid.dataset)}</h3>"
    whole = ""
    if grid.whole is not None:
        whole = (
            f'<p title="{_lines(grid.whole.notes, _attribute)}">'
            f'<span class="swatch {grid.whole.state}"></span>the whole dataset: '
            f"{_text(grid.whole.state)} ({_text('; '.join(grid.whole.notes[:3]))})</p>"
        )
    if grid.down is None:
        if not whole:
            whole = '<p class="note">No partition columns, and nothing of it in the answer.</p>'
        return heading + whole
    across = "/".join(grid.across) or ""
    header = "".join(f'<th scope="col">{_text(column)}</th>' for column in grid.columns)
    rows = []
    for number, row in enumerate(grid.rows):
        if grid.row_gaps[number]:
            rows.append(_gap(grid.row_gaps[number], len(grid.columns)))
        cells = "".join(_cell(grid, row, column) for column in grid.columns)
        rows.append(f'<tr><th scope="row">{_text(row)}</th>{cells}</tr>')
    if grid.row_gaps[-1]:
        rows.append(_gap(grid.row_gaps[-1], len(grid.columns)))
    more = (
        f'<p class="note">{grid.hidden_columns} column(s) not drawn.</p>'
        if grid.hidden_columns
        else ""
    )
    corner = f"{grid.down} \u2193" + (f" / {across} \u2192" if across else "")
    return (
        f'{heading}{whole}<table class="grid" data-dataset="{_attribute(grid.dataset)}">'
        f'<thead><tr><th scope="col">{_text(corner)}</th>{header}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{more}"
    )


def _gap(count: int, columns: int) -> str:
    return f'<tr class="gap"><td colspan="{columns + 1}">\u2026 {count} row(s) not drawn</td></tr>'


def _cell(grid: Grid, row: str, column: str) -> str:
    cell = grid.cells.get((row, column))
    where = f"{grid.down}={row}" + (f", {'/'.join(grid.across)}={column}" if column else "")
    if cell is None:
        return f'<td class="none" title="{_attribute(where + ": no such partition")}"></td>'
    notes: Iterable[str] = (where, *cell.notes)
    return f'<td class="{cell.state}" title="{_lines(notes, _attribute)}"></td>'
