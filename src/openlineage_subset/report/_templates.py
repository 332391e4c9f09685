"""The report's Jinja2 environment: the templates of ``templates/`` and the filters they put
names from events through.

Autoescaping is on for ``.html`` and ``.svg``. A name from an event goes through one of
:data:`FILTERS`, the project's escaping rule (:mod:`._markup`): ``text`` (an element's content,
each escape marked; ``text(tag="tspan", limit=...)`` too), ``attribute``, ``plain`` (an SVG
``<title>``, which holds no markup) and ``marked`` (the pieces a name was cut into). A
variable a template uses and is not given raises (``StrictUndefined``), never draws nothing.
One loop is drawn without autoescaping, a grid's cells (``grid.html``): their texts come
escaped, each put together from parts escaped once (:mod:`._grids`), as thousands of cells
repeat them.

In an ``.html`` or ``.svg`` template, a line that starts indented continues the line above:
its line break and indentation are not drawn (:class:`Folded`). Markup is written one element a
line, nested by indentation, and a grid of thousands of cells is drawn without a byte of
whitespace between them. A line at the margin starts a line of the output (``page.html``,
``body.html``); a template of one fragment (``grid.html``) has all of it indented under its
opening comment, and draws one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from jinja2.ext import Extension
from markupsafe import Markup

from openlineage_subset.report._markup import Pieces, attribute, marked, plain, text

__all__ = ["ENVIRONMENT", "FILTERS", "render"]

_TAG = re.compile(r"(\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\})", re.DOTALL)
_CONTINUED = re.compile(r"\n(?:[ \t]*\n)*[ \t]+")
"""A line break, blank lines, then the indentation of the line that continues."""


class Folded(Extension):
    """Indented lines of an ``.html`` or ``.svg`` template continue the line above them.

    Only the text between tags is folded. Each fold becomes a comment holding its line breaks,
    so that an error names the template's own line.
    """

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        if name is None or not name.endswith((".html", ".svg")):
            return source
        parts = _TAG.split(source)
        parts[::2] = [_CONTINUED.sub(_hidden_breaks, between) for between in parts[::2]]
        return "".join(parts)


def _hidden_breaks(fold: re.Match[str]) -> str:
    return "{#" + "\n" * fold.group().count("\n") + "#}"


def _text(value: object, tag: str = "span", limit: int | None = None) -> Markup:
    return Markup(text(value, tag=tag, limit=limit))


def _attribute(value: object) -> Markup:
    return Markup(attribute(value))


def _plain(value: object) -> Markup:
    return Markup(plain(value))


def _marked(pieces: Pieces, tag: str = "span") -> Markup:
    return Markup(marked(pieces, tag=tag))


FILTERS: Mapping[str, Callable[..., Markup]] = {
    "text": _text,
    "attribute": _attribute,
    "plain": _plain,
    "marked": _marked,
}
"""The escaping rule as Jinja2 filters, for any environment with autoescaping (the service's
pages too): each returns markup that autoescaping leaves as it is."""

ENVIRONMENT = Environment(
    loader=PackageLoader("openlineage_subset.report", "templates"),
    autoescape=select_autoescape(["html", "svg"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    extensions=[Folded],
)
"""The report's one environment; with ``trim_blocks`` and ``lstrip_blocks``, a line holding a
block tag alone (``{% for %}``) draws nothing."""
ENVIRONMENT.filters.update(FILTERS)


def render(template: str, **values: object) -> str:
    """``template`` (a file of ``templates/``) drawn with ``values``."""
    return ENVIRONMENT.get_template(template).render(values)
