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

The entry point is :func:`graph_svg` (the frame, the controls and the drawing, as HTML, drawn
by ``templates/graph.html`` and ``graph.svg`` from what it works out here); :data:`GRAPH_STYLE`
is the CSS it needs, part of the report's style sheet.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable

from openlineage_subset.lineage import DatasetRef
from openlineage_subset.report._layout import Box, Layout, layout, path_data
from openlineage_subset.report._markup import Pieces, job_label, shortened
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
"""Fill, stroke and dashes of a box, by its node's state."""


@dataclasses.dataclass(frozen=True)
class _DrawnEdge:
    """An edge as ``graph.svg`` draws it."""

    classes: str
    source: str
    target: str
    path: str
    """SVG path data (:func:`._layout.path_data`)."""
    hover: str


@dataclasses.dataclass(frozen=True)
class _DrawnNode:
    """A node as ``graph.svg`` draws it: its box (numbers written as SVG takes them), its
    colours, the pieces of its two lines, and where it links (None: nowhere)."""

    node: GraphNode
    href: str | None
    x: str
    y: str
    width: str
    height: str
    radius: int
    fill: str
    stroke: str
    dashes: str
    text_x: str
    title_y: str
    subtitle_y: str
    title: Pieces
    subtitle: Pieces


@dataclasses.dataclass(frozen=True)
class Drawing:
    """A picture's graph as ``graph.html`` and ``graph.svg`` draw it."""

    group: str
    """The name of its size buttons' group."""
    width: int
    height: int
    edges: list[_DrawnEdge]
    boxes: list[_DrawnNode]


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
    return render("graph.html", picture=picture, drawing=drawing(picture, links))


def drawing(picture: Picture, links: Links | None = None) -> Drawing | None:
    """What ``graph.html`` draws of ``picture``'s graph (None: no nodes); ``links``: see
    :func:`graph_svg`."""
    if not picture.nodes:
        return None
    shape = graph_layout(picture)
    titles = {node.key: node.title for node in picture.nodes}
    kinds = {(edge.source, edge.target): edge.label for edge in picture.edges}
    edges = [
        _DrawnEdge(
            f"edge {kinds[(route.source, route.target)]}" + (" backward" if route.backward else ""),
            route.source,
            route.target,
            path_data(route.points),
            f"{titles[route.source]} \u2192 {titles[route.target]}",
        )
        for route in shape.routes
    ]
    boxes = [
        _drawn(node, shape.boxes[node.key], None if links is None else links.of(node))
        for node in picture.nodes
    ]
    # Named after the picture: two graphs on one page do not share their size buttons.
    group = "zoom-" + hashlib.sha256(picture.title.encode("utf-8", "replace")).hexdigest()[:8]
    return Drawing(group, round(shape.width), round(shape.height), edges, boxes)


def _drawn(node: GraphNode, box: Box, href: str | None) -> _DrawnNode:
    fill, stroke, dashes = _NODE_COLOURS[node.state]
    x, y = round(box.x, 1), round(box.y, 1)
    return _DrawnNode(
        node,
        href,
        f"{x:g}",
        f"{y:g}",
        f"{box.width:g}",
        f"{box.height:g}",
        3 if node.kind == "dataset" else 14,
        fill,
        stroke,
        dashes,
        f"{x + PADDING:g}",
        f"{y + 20:g}",
        f"{y + 38:g}",
        # A job's name keeps what tells its runs apart (:func:`job_label`); other names are
        # cut in their middle.
        (
            shortened(node.title, LABEL_COLUMNS)
            if node.kind == "dataset"
            else job_label(node.title, LABEL_COLUMNS)
        ),
        shortened(node.subtitle, LABEL_COLUMNS),
    )
