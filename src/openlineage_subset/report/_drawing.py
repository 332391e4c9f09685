"""The graph of a :class:`~._picture.Picture` as inline SVG: boxes in columns, edges around them.

Coordinates come from :func:`._layout.layout` (an edge never passes behind a box it does not
connect). Each box holds two lines in a monospace font, so that their width is known without a
browser: a name longer than the box is cut in its middle (:func:`._markup.shortened`), its full
form and the facts behind it in the box's hover text (an SVG ``<title>``).

Pan and zoom need no script: the drawing sits in a scrolling frame, and three radio buttons
before it (fit the width, the first choice; actual size; half size; a group named after the
picture's title, so two graphs on one page do not share one) switch its size by CSS alone. A
page may add a script that changes the ``viewBox``; the drawing does not depend on one (the
service's ``ui.js`` does: wheel zoom around the pointer, drag to pan, buttons; it hides the
radios).

The entry point is :func:`graph_svg` (the frame, the controls and the drawing, as HTML);
:data:`GRAPH_STYLE` is the CSS it needs, part of the report's style sheet.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable

from openlineage_subset.lineage import DatasetRef
from openlineage_subset.report._layout import Box, Layout, Route, layout, path_data
from openlineage_subset.report._markup import attribute, job_label, lines, marked, plain, text
from openlineage_subset.report._picture import GraphNode, Picture
from openlineage_subset.report._templates import render


@dataclasses.dataclass(frozen=True)
class Links:
    """Where a page of someone else's (the service's) links a run and a dataset: each box of
    the graph and each grid's heading then link there. The static page links nothing (it has
    no run or dataset page to link to)."""

    run: Callable[[str], str]
    dataset: Callable[[DatasetRef], str]

    def of(self, node: GraphNode) -> str | None:
        if node.run_id is not None:
            return self.run(node.run_id)
        return None if node.dataset is None else self.dataset(node.dataset)


NODE_WIDTH, NODE_HEIGHT = 260.0, 48.0
PADDING = 10.0
"""Space between a box's left side and its text (and at its right, at the most)."""
FONT_SIZE = 12
GLYPH_EM = 0.62
"""A monospace glyph's advance, in em: 0.6 in DejaVu Sans Mono, Liberation Mono, Menlo and
Consolas' 0.55, a little more for safety."""
LABEL_COLUMNS = int((NODE_WIDTH - 2 * PADDING) / (FONT_SIZE * GLYPH_EM))
"""Columns of a name drawn in a box; the whole name is in its hover text."""
GRAPH_STYLE = render("graph.css", font_size=FONT_SIZE)
"""The CSS of the graph and its size controls."""
_NODE_COLOURS = {
    "start": ("#fde0dd", "#d7301f", ""),
    "target": ("#dbe7f5", "#4575b4", ""),
    "dataset": ("#f4f4f4", "#888888", ""),
    "job": ("#eef3fa", "#4575b4", ""),
    "definite": ("#fde0dd", "#d7301f", ""),
    "possible": ("#fff1dc", "#e08a1e", "5 3"),
    "failed": ("#eeeeee", "#555555", "2 3"),
}


def _zoom(group: str) -> str:
    """Three radio buttons, CSS switches the drawing's size by the checked one: at first the
    whole drawing, shrunk to the frame's width when wider (nothing off to the right)."""
    choices = (
        ("fit", "fit the width", " checked"),
        ("full", "actual size", ""),
        ("half", "half", ""),
    )
    buttons = "".join(
        f'<label><input type="radio" name="{group}" class="{kind}"{checked}>{label}</label>'
        for kind, label, checked in choices
    )
    return (
        f'<p class="zoom">Size:{buttons} \u2014 scroll to pan; hover over a box or an edge '
        "for its full names</p>"
    )


def graph_layout(picture: Picture) -> Layout:
    """Where :func:`graph_svg` draws each box and edge of ``picture``."""
    return layout(
        [(node.key, node.layer) for node in picture.nodes],
        [(edge.source, edge.target) for edge in picture.edges],
        box_width=NODE_WIDTH,
        box_height=NODE_HEIGHT,
    )


def graph_svg(picture: Picture, links: Links | None = None) -> str:
    """The graph of ``picture`` as HTML: the size controls, then a scrolling frame holding an
    ``<svg class="run-graph">`` (a ``g.node`` per node, with ``data-key``; a ``path.edge`` per
    edge, with ``data-source`` and ``data-target``), then a note of the nodes not drawn. With
    ``links``, each box is a link (``<a class="node-link">``) to its run's or dataset's page.

    Example::

        html = graph_svg(impact_picture("lineage.db", "lake/sales"))
    """
    if not picture.nodes:
        return '<p class="note">No runs.</p>'
    shape = graph_layout(picture)
    width, height = round(shape.width), round(shape.height)
    labels = {node.key: node.title for node in picture.nodes}
    kinds = {edge.source + "\0" + edge.target: edge.label for edge in picture.edges}
    shapes = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="run-graph" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{attribute("run graph: " + picture.title)}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#666"/></marker></defs>',
    ]
    shapes += (
        _edge(route, kinds[route.source + "\0" + route.target], labels) for route in shape.routes
    )
    shapes += (
        _linked(_node(node, shape.boxes[node.key]), None if links is None else links.of(node))
        for node in picture.nodes
    )
    shapes.append("</svg>")
    hidden = (
        f'<p class="note">{picture.hidden_nodes} more node(s) not drawn: see the text or JSON '
        "answer for all of them.</p>"
        if picture.hidden_nodes
        else ""
    )
    group = "zoom-" + hashlib.sha256(picture.title.encode("utf-8", "replace")).hexdigest()[:8]
    return f'{_zoom(group)}<div class="graph">{"".join(shapes)}</div>{hidden}'


def _edge(route: Route, label: str, titles: dict[str, str]) -> str:
    kind = f"edge {label}" + (" backward" if route.backward else "")
    hover = f"{titles[route.source]} \u2192 {titles[route.target]}"
    return (
        f'<path class="{kind}" data-source="{attribute(route.source)}" '
        f'data-target="{attribute(route.target)}" d="{path_data(route.points)}" '
        f'marker-end="url(#arrow)"><title>{plain(hover)}</title></path>'
    )


def _node(node: GraphNode, box: Box) -> str:
    fill, stroke, dashes = _NODE_COLOURS[node.state]
    radius = 3 if node.kind == "dataset" else 14
    dash = f' stroke-dasharray="{dashes}"' if dashes else ""
    x, y = round(box.x, 1), round(box.y, 1)
    title = _drawn(node.title) if node.kind == "dataset" else _job_drawn(node.title)
    return (
        f'<g class="node {node.kind} {node.state}" data-key="{attribute(node.key)}">'
        f"<title>{lines(node.notes, plain)}</title>"
        f'<rect x="{x:g}" y="{y:g}" width="{box.width:g}" height="{box.height:g}" '
        f'rx="{radius}" fill="{fill}" stroke="{stroke}" stroke-width="1.6"{dash}/>'
        f'<text class="title" x="{x + PADDING:g}" y="{y + 20:g}">{title}</text>'
        f'<text class="subtitle" x="{x + PADDING:g}" y="{y + 38:g}" fill="#555">'
        f"{_drawn(node.subtitle)}</text>"
        "</g>"
    )


def _linked(drawn: str, href: str | None) -> str:
    if href is None:
        return drawn
    return f'<a class="node-link" href="{attribute(href)}">{drawn}</a>'


def _drawn(value: str) -> str:
    """A name drawn in a box: cut in its middle to the box's width, escapes marked."""
    return text(value, tag="tspan", limit=LABEL_COLUMNS)


def _job_drawn(value: str) -> str:
    """A job's name drawn in a box: what tells its runs apart kept (:func:`job_label`)."""
    return marked(job_label(value, LABEL_COLUMNS), tag="tspan")
