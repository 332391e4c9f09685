"""The UI's templates fail loudly: a variable a page does not give, or a string shown without
the escaping rule, is an error when the page is made, never a page with a blank or a raw name;
and the environment's filters write exactly what the report's rule writes."""

from __future__ import annotations

from importlib import resources

import pytest

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")

from jinja2 import UndefinedError

from openlineage_subset.lineage import DatasetRef
from openlineage_subset.report import attribute, job_label, marked, text
from openlineage_subset.service import _templates

NAMES = ["sales", "<b>\u202e\"'&", DatasetRef("s3://b", "lake/\u2066x"), "d" * 90]


def test_every_template_is_read() -> None:
    folder = resources.files("openlineage_subset.service") / "templates"
    names = sorted(item.name for item in folder.iterdir() if item.name.endswith(".html"))
    assert "layout.html" in names and "macros.html" in names
    for name in names:
        _templates.ENVIRONMENT.get_template(name)


def test_a_variable_the_page_is_not_given_fails() -> None:
    given = {"status": 404, "styles": [], "back": None}
    assert "no such run" in _templates.render("error.html", message="no such run", **given)
    with pytest.raises(UndefinedError, match="'message' is undefined"):
        _templates.render("error.html", **given)


def test_a_string_shown_without_the_escaping_rule_fails() -> None:
    shown = _templates.ENVIRONMENT.from_string("<p>{{ name }}</p>")
    with pytest.raises(TypeError, match="without the escaping rule"):
        shown.render(name="<b>\u202e")
    assert shown.render(name=3) == "<p>3</p>", "numbers need no rule"
    ruled = '<p title="{{ name|attribute }}">{{ name|text }}</p>'
    assert _templates.ENVIRONMENT.from_string(ruled).render(name="<b>\u202e") == (
        '<p title="&lt;b&gt;\\u202e">&lt;b&gt;<span class="escape">\\u202e</span></p>'
    )


@pytest.mark.parametrize("name", NAMES, ids=range(len(NAMES)))
def test_the_filters_write_what_the_reports_rule_writes(name: object) -> None:
    filters = _templates.ENVIRONMENT.filters
    assert filters["text"](name) == text(name)
    assert filters["text"](name, limit=20) == text(name, limit=20)
    assert filters["text"](name, limit=20) == text(name, limit=20), "cut once, then remembered"
    assert filters["attribute"](name) == attribute(name)
    assert filters["job_label"](str(name), 20) == marked(job_label(str(name), 20))
