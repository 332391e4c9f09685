"""The report's templates: the escaping rule as Jinja2 filters, a variable a template lacks
fails, and indented template lines are drawn as one."""

from __future__ import annotations

import traceback
from pathlib import Path

import jinja2
import pytest
from markupsafe import Markup

from openlineage_subset.report import FILTERS, attribute, text
from openlineage_subset.report._templates import ENVIRONMENT, render

TEMPLATES = Path(__file__).parents[2] / "src" / "openlineage_subset" / "report" / "templates"


def test_the_filters_give_markup_the_face_gives_text() -> None:
    """The service concatenates the face's strings: they are plain ``str`` (a ``Markup``
    would escape what is added to it); the filters give ``Markup``, which autoescaping keeps."""
    assert type(text("<b>\u202e")) is str and type(attribute('"')) is str
    shown = FILTERS["text"]("<b>\u202e", tag="tspan", limit=None)
    assert shown == Markup('&lt;b&gt;<tspan class="escape">\\u202e</tspan>')
    assert FILTERS["attribute"]('a"\u202e') == Markup("a&quot;\\u202e")
    environment = jinja2.Environment(autoescape=True)
    environment.filters.update(FILTERS)
    drawn = environment.from_string('<p title="{{ n|attribute }}">{{ n|text }}</p>').render(
        n="<\x1b"
    )
    assert drawn == '<p title="&lt;\\x1b">&lt;<span class="escape">\\x1b</span></p>'


@pytest.mark.parametrize(
    "name", sorted(path.name for path in TEMPLATES.iterdir() if "{{" in path.read_text("utf-8"))
)
def test_a_template_missing_a_variable_fails(name: str) -> None:
    """``StrictUndefined``: a template given nothing raises rather than drawing blanks."""
    with pytest.raises(jinja2.UndefinedError):
        render(name)


@pytest.mark.parametrize("name", sorted(path.name for path in TEMPLATES.iterdir()))
def test_every_template_is_drawn_by_the_room(name: str) -> None:
    room = TEMPLATES.parent
    sources = [path.read_text("utf-8") for path in [*room.glob("*.py"), *TEMPLATES.iterdir()]]
    assert any(f'"{name}"' in source for source in sources), f"{name} is used nowhere"


def test_indented_lines_continue_the_line_above(tmp_path: Path) -> None:
    (tmp_path / "list.html").write_text(
        "{# A list: one line of output, then a line at the margin. #}\n"
        "<ul>\n"
        "  {% for item in items %}\n"
        "    <li>{{ item }}</li>\n"
        "\n"
        "  {% endfor %}\n"
        "</ul>\n"
        "<p>{{ words }}\n"
        "  {{ missing }}</p>\n",
        encoding="utf-8",
    )
    (tmp_path / "list.css").write_text("a {\n  color: red; }\n", encoding="utf-8")
    environment = ENVIRONMENT.overlay(loader=jinja2.FileSystemLoader(tmp_path))
    drawn = environment.get_template("list.html").render(items=["<a>", "b"], words="x", missing=1)
    assert drawn == "<ul><li>&lt;a&gt;</li><li>b</li></ul>\n<p>x1</p>"
    assert environment.get_template("list.css").render() == "a {\n  color: red; }", "not CSS"
    with pytest.raises(jinja2.UndefinedError) as raised:
        environment.get_template("list.html").render(items=[], words="x")
    (line,) = [
        frame.lineno
        for frame in traceback.extract_tb(raised.value.__traceback__)
        if frame.filename.endswith("list.html")
    ]
    assert line == 9, "an error names the template's own line"
