"""A :class:`~._picture.Picture` as one self-contained HTML page: inline CSS and SVG, no script.

Nothing is fetched when the page is viewed: no script, font, image or style sheet from
anywhere, and a Content-Security-Policy that forbids them, so a page mailed around at 3 a.m.
shows the same thing offline. Every name, value and note comes from events that anyone may
have written, so each is escaped where a template puts it, by the filter for the place (text or
attribute, :mod:`._templates`); the policy is a second line of defence, not the first. Hover
texts are ``title`` attributes and SVG ``<title>``s.

A control character or a bidirectional one (U+202E would show the dataset ``evil`` as ``live``
and reorder what follows it) is written as its escape (``\\u202e``), as the text answers write
it: in text, marked in a ``<span class="escape">`` (``<tspan>`` in the graph) so that it stands
out; in hover texts and attributes, which hold no markup, as the bare escape (:mod:`._markup`).

The graph is drawn by :mod:`._drawing`, the grids by :mod:`._grids`. A page
(``templates/page.html``) is its :func:`body` (``body.html``) under a head with :data:`STYLE`:
the service's pages put the same body and style inside their own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from markupsafe import Markup

from openlineage_subset import __version__
from openlineage_subset.lineage import LineageStore
from openlineage_subset.report._drawing import GRAPH_STYLE, Links, drawing
from openlineage_subset.report._grids import GRID_STYLE, drawn_grid, legend
from openlineage_subset.report._picture import Picture, report_picture
from openlineage_subset.report._templates import render

__all__ = ["STYLE", "body", "page", "report_html"]

STYLE = "\n".join([render("page.css"), GRAPH_STYLE, GRID_STYLE])
"""The CSS of the page: its text, the graph's and the grids'."""


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
    """The whole HTML page of ``picture``: its :func:`body` under a head with :data:`STYLE`
    and a Content-Security-Policy that forbids fetching anything."""
    drawn = render("page.html", style=Markup(STYLE), **_shown(picture, source, None))
    return drawn + "\n"  # a text file's last line ends too; Jinja2 drops a template's last break


def body(picture: Picture, *, source: str = "", links: Links | None = None) -> str:
    """What the page of ``picture`` shows (the elements inside its ``<body>``, one a line),
    drawn with :data:`STYLE`; ``source`` (the database) is named in the footer; ``links``:
    where a page that has run and dataset pages links each box and grid heading."""
    return render("body.html", **_shown(picture, source, links))


def _shown(picture: Picture, source: str, links: Links | None) -> dict[str, object]:
    """What ``body.html`` draws: the graph and the grids laid out, for the templates that it
    includes (``graph.html``, ``legend.html``, ``grid.html``)."""
    dataset_link = None if links is None else links.dataset
    return {
        "picture": picture,
        "drawing": drawing(picture, links),
        "states": legend(picture.query),
        "grids": [
            drawn_grid(grid, link=None if dataset_link is None else dataset_link(grid.dataset))
            for grid in picture.grids
        ],
        "version": __version__,
        "source": source,
    }
