"""The lineage report: an impact or provenance answer (or a whole database) drawn as a run graph
and partition grids, in HTML and inline SVG.

``ol-subset lineage report --html`` writes it as one self-contained page; ``lineage serve``
shows the same drawing inside its own pages. The room reads the store only through
:mod:`openlineage_subset.lineage` (its answers and
:func:`~openlineage_subset.lineage.picture_source`), never the other way round.

- :func:`report_html`: the answer as one self-contained page (the CLI's ``--html``);
- :func:`report_picture` (:func:`impact_picture`, :func:`provenance_picture`): the answer (or
  without a dataset, the overview) as a :class:`Picture`, plain data;
- :func:`page` draws a picture as the whole page; :func:`body` as what the page's ``<body>``
  holds, drawn with :data:`STYLE`, for a page of someone else's (the service's);
- :func:`arranged`, :func:`grid_html`, :func:`legend_html` and :data:`GRID_STYLE`: any set of
  partitions as a grid (the service's dataset page);
- :func:`text`, :func:`attribute`, :func:`marked`: a name from an event, escaped for HTML,
  what does not print written as its escape (:data:`FILTERS`: the same as Jinja2 filters, which
  the report's templates put every name through); :func:`job_label`: a job's name cut to a
  width, what tells its runs apart kept.

The markup is in Jinja2 templates (``templates/``); the modules work out what they draw.
"""

from openlineage_subset.report._cells import CellState, GridCell, is_day
from openlineage_subset.report._drawing import Links
from openlineage_subset.report._grids import GRID_STYLE, grid_html, legend_html
from openlineage_subset.report._html import STYLE, body, page, report_html
from openlineage_subset.report._markup import attribute, job_label, marked, text
from openlineage_subset.report._picture import (
    MAX_CELLS,
    MAX_COLUMNS,
    MAX_DAYS,
    MAX_ROWS,
    UNCOUNTED,
    Grid,
    Picture,
    answer_picture,
    arranged,
    impact_picture,
    most_rows,
    provenance_picture,
    report_picture,
)
from openlineage_subset.report._templates import FILTERS

__all__ = [
    "GRID_STYLE",
    "STYLE",
    "CellState",
    "Grid",
    "GridCell",
    "Picture",
    "arranged",
    "attribute",
    "body",
    "grid_html",
    "impact_picture",
    "legend_html",
    "marked",
    "page",
    "provenance_picture",
    "report_html",
    "report_picture",
    "text",
]
# Internal to the package: for its other rooms (the service), not user API.
__all__ += [
    "FILTERS",
    "MAX_CELLS",
    "MAX_COLUMNS",
    "MAX_DAYS",
    "MAX_ROWS",
    "UNCOUNTED",
    "Links",
    "answer_picture",
    "is_day",
    "job_label",
    "most_rows",
]
