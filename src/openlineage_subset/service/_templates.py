"""The web UI's one Jinja2 environment: the templates of ``templates/``, the escaping rule as
their filters.

Autoescaping is on and a variable a template names but is not given fails
(``StrictUndefined``). Names, values and messages come from events anyone may have written, and
the one escaping rule of the package (the report's: :func:`~openlineage_subset.report.text`)
applies to each: so a template shows a string only through one of the filters below, and a
string put in a page without one fails when the page is made, as a missing variable does (the
autoescape alone would leave a bidirectional character raw).

- ``text`` (``limit``: cut in its middle to that many columns): in an element, escaped, what
  does not print as its escape marked;
- ``attribute``: in an attribute (in double quotes), its escapes bare;
- ``job_label`` (``limit``): a job's name in an element, cut to that many columns keeping its
  action and target, marked as ``text`` marks;
- ``plain``: in an element that holds no markup (``<title>``), its escapes bare;
  ``copied``: text to copy (in a ``<pre>``), line by line as ``plain``: what is copied is the
  text shown;
- ``json_text``: a value as indented JSON, what does not print as its JSON escape, marked;
- ``time``: a stored time as people read it (``None``: nothing), ``ago``: how long before the
  time given it was (each then shown with ``text`` or ``attribute``).

The output of the report's face (its body, grids and styles) comes in as
:class:`~markupsafe.Markup`, already safe; the links are the globals of :mod:`._links`.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import json

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from openlineage_subset import __version__, json_escapes, printable
from openlineage_subset.lineage import shown_time
from openlineage_subset.report import attribute, job_label, marked, text
from openlineage_subset.service._answer_runs import ANSWER_RUNS
from openlineage_subset.service._links import answer_link, dataset_link, plan_anchor, run_link

NAME_COLUMNS = 60
"""Columns of a dataset or job name in a table cell; the whole of it in its ``title``."""
MAX_LISTED = 12
"""Partitions listed as links in one cell; the rest counted (all of them are in the plan)."""
MAX_LINKED = 24
"""Partitions one impact link asks for at most (the answer page's limit)."""


def _only_filtered(value: object) -> object:
    """``value`` as it is; a string no filter of the escaping rule made is refused."""
    if value.__class__ is str and value:
        raise TypeError(
            f"a string put in a page without the escaping rule: {value[:60]!r}; "
            "write {{ value|text }} in an element, {{ value|attribute }} in an attribute"
        )
    return value


def _safe(markup: str) -> Markup:
    """``markup``, which the escaping rule made, as the templates' safe string: made as
    :class:`Markup` makes one of a ``str``, without its look for ``__html__`` (a page of
    runs puts thousands)."""
    return str.__new__(Markup, markup)


def _text(value: object, limit: int | None = None) -> Markup:
    if limit is not None:
        return _cut(value, limit)
    return _safe(text(value))


@functools.lru_cache(maxsize=1024)
def _cut(value: object, limit: int) -> Markup:
    # A name cut is measured character by character, and the same names come back row after
    # row (a job's runs, the datasets they wrote): cut once. What is kept is short.
    return _safe(text(value, limit=limit))


@functools.lru_cache(maxsize=1024)
def _job_label(name: str, limit: int) -> Markup:
    return _safe(marked(job_label(name, limit)))


def _attribute(value: object) -> Markup:
    return _safe(attribute(value))


def _plain(value: object) -> Markup:
    return _safe(html.escape(printable(str(value)), quote=False))


def _copied(content: str) -> Markup:
    if content.replace("\n", "").isprintable():  # the usual case: escaped at once
        return _safe(html.escape(content, quote=False))
    lines = content.split("\n")
    return _safe("\n".join(html.escape(printable(line), quote=False) for line in lines))


def _json_text(value: object) -> Markup:
    return _safe(marked(json_escapes(json.dumps(value, indent=2, ensure_ascii=False))))


def _time(stored: str | None) -> str:
    return "" if stored is None else shown_time(stored)


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


ENVIRONMENT = Environment(
    loader=PackageLoader(__package__, "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    finalize=_only_filtered,
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,  # the templates are the package's: read once
)
ENVIRONMENT.filters.update(
    text=_text,
    attribute=_attribute,
    job_label=_job_label,
    plain=_plain,
    copied=_copied,
    json_text=_json_text,
    time=_time,
    ago=ago,
)
ENVIRONMENT.globals.update(
    version=__version__,
    dataset_link=dataset_link,
    run_link=run_link,
    answer_link=answer_link,
    plan_anchor=plan_anchor,
    NAME_COLUMNS=NAME_COLUMNS,
    MAX_LISTED=MAX_LISTED,
    MAX_LINKED=MAX_LINKED,
    ANSWER_RUNS=ANSWER_RUNS,
)


def render(template: str, **context: object) -> str:
    """The page (or part) ``template`` of ``templates/`` made with ``context``."""
    return ENVIRONMENT.get_template(template).render(context)
