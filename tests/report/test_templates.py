"""The report's templates: every name from an event reaches a page through the escaping rule,
a variable a template lacks fails, and indented template lines are drawn as one.

The hostile picture is built by hand, every name in it markup, quotes and characters that do not
print; the pages drawn from it are parsed back and read: what each place shows, what each
attribute holds, which element marks each escape.
"""

from __future__ import annotations

import html
import html.parser
import re
import traceback
from pathlib import Path

import jinja2
import pytest
from markupsafe import Markup

from openlineage_subset import printable
from openlineage_subset.lineage import DatasetRef
from openlineage_subset.report import (
    FILTERS,
    Grid,
    GridCell,
    Links,
    attribute,
    body,
    grid_html,
    page,
    text,
)
from openlineage_subset.report._picture import GraphEdge, GraphNode, Picture
from openlineage_subset.report._templates import ENVIRONMENT, render

TEMPLATES = Path(__file__).parents[2] / "src" / "openlineage_subset" / "report" / "templates"
HOSTILE = "<script>alert(1)</script>\"'&<img src=x onerror=alert(2)>\u202eevil\u2066\x1b\x9b\x85"
"""Markup, both quotes, bidirectional and control characters: what a name may hold."""
TRICKS = [printable(char) for char in "\u202e\u2066\x1b\x9b\x85"]
"""How each character that does not print is shown: ``\\u202e``..."""
TAGS = {
    *("html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "footer"),
    *("span", "label", "input", "div", "a", "table", "thead", "tbody", "tr", "th", "td"),
    *("svg", "defs", "marker", "path", "g", "rect", "text", "tspan"),
}
"""Every element a report page draws."""


def named(place: str) -> str:
    """The hostile name shown at ``place``: each place has its own, to be found there."""
    return f"{place}:{HOSTILE}"


def _hostile_picture() -> Picture:
    dataset = DatasetRef(named("namespace"), named("dataset"))
    nodes = (
        GraphNode(
            named("key-d"), "dataset", 0, named("box"), named("sub"), "start", (), None, dataset
        ),
        GraphNode(
            named("key-r"), "run", 1, named("job"), "x", "possible", (named("note"),), named("run")
        ),
    )
    edges = (GraphEdge(nodes[0].key, nodes[1].key, "possible"),)
    cells = {
        (named("row"), named("column")): GridCell("affected", (named("cell"),), named("choice")),
        (named("row"), "C2"): GridCell("known", ("plain",)),
    }
    table = Grid(
        dataset,
        named("down"),
        (named("across"),),
        (named("row"),),
        (named("column"), "C2"),
        cells,
        GridCell("possible", (named("whole"),)),
        (1, 0),
        2,
    )
    days = Grid(
        DatasetRef("file", "days"),
        "day",
        (named("by"),),
        ("2024-10-01", "2024-10-02"),
        (named("value"),),
        {("2024-10-01", named("value")): GridCell("read", (named("day-note"),))},
        None,
        (0, 0, 3),
        0,
    )
    return Picture("impact", named("title"), (named("summary"),), 1, nodes, edges, 0, (table, days))


class _Read(html.parser.HTMLParser):
    """Every element's tag, attributes and whole text; every escape outside a marked one."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.texts: list[str] = []
        self.unmarked: list[tuple[str, str]] = []
        self._open: list[tuple[str, str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {key: value or "" for key, value in attrs}
        self.tags.append((tag, found))
        if tag not in ("meta", "input"):  # void: never closed
            self._open.append((tag, found.get("class", ""), []))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {key: value or "" for key, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            opened, _, text = self._open.pop()
            self.texts.append("".join(text))
            if self._open:
                self._open[-1][2].extend(text)
            if opened == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self._open:
            return
        tag, classes, text = self._open[-1]
        text.append(data)
        plain = tag in ("title", "style")  # hold no markup: an escape there is bare
        if not plain and "escape" not in classes.split():
            self.unmarked += [(tag, trick) for trick in TRICKS if trick in data]


def _read(markup: str) -> _Read:
    raw = sorted({char for char in markup if not char.isprintable() and char != "\n"})
    assert not raw, f"characters that do not print, drawn raw: {raw}"
    parsed = _Read()
    parsed.feed(markup)
    parsed.close()
    tags = {tag for tag, _ in parsed.tags}
    assert tags <= TAGS, f"elements from the names: {tags - TAGS}"
    handlers = [(tag, key) for tag, attrs in parsed.tags for key in attrs if key.startswith("on")]
    assert not handlers, handlers
    assert not parsed.unmarked, f"escapes shown unmarked: {parsed.unmarked}"
    return parsed


def _attributes(parsed: _Read, name: str) -> list[str]:
    return [attrs[name] for _, attrs in parsed.tags if name in attrs]


def test_every_name_is_escaped_and_marked_in_every_template() -> None:
    picture = _hostile_picture()
    links = Links(run=lambda run: f"/run?id={run}", dataset=lambda d: f"/dataset?name={d.name}")
    drawn = page(picture, source=named("source"))
    whole = _read(drawn)
    linked = _read(body(picture, links=links))
    (ticked,) = [grid for grid in picture.grids if grid.whole is not None]
    boxes = _read(grid_html(ticked, [named("choice")], heading=False))

    def shown(place: str) -> str:
        return printable(named(place))

    texts = whole.texts
    for place in ("title", "summary", "source", "dataset", "whole", "down", "across", "by"):
        assert any(shown(place) in text for text in texts), place  # page.html, body, grid
    head = f"<title>{html.escape(shown('title'), quote=False)}</title>"
    assert head in drawn, "page.html's <title>: no markup, the escapes bare"
    assert any(text.startswith("box:<script>") for text in texts), "graph.svg: the box, cut"
    graph = {
        "aria-label": f"run graph: {shown('title')}",
        "data-key": shown("key-d"),
        "data-source": shown("key-d"),
        "data-target": shown("key-r"),
        "data-dataset": str(DatasetRef(shown("namespace"), shown("dataset"))),
    }
    for key, value in graph.items():
        assert value in _attributes(whole, key), key
    assert any(shown("note") in text for text in texts), "a box's hover: its notes"
    assert any(shown("box") in text and "\u2192" in text for text in texts), "an edge's hover"
    titles = "\n".join(_attributes(whole, "title"))
    for place in ("row", "column", "cell", "value", "day-note", "whole"):
        assert shown(place) in titles, f"grid.html: hover text of {place}"
    assert f"{shown('down')}={shown('row')}, {shown('across')}={shown('column')}" in titles
    hrefs = _attributes(linked, "href")
    assert f"/run?id={shown('run')}" in hrefs and f"/dataset?name={shown('dataset')}" in hrefs
    assert [shown("choice")] == _attributes(boxes, "value")
    assert [f"{shown('down')}={shown('row')}, {shown('across')}={shown('column')}"] == [
        label for label in _attributes(boxes, "aria-label") if label.startswith("down")
    ]
    assert [tag for tag, attrs in boxes.tags if "checked" in attrs] == ["input"]
    marked = re.findall(r'<(t?span) class="escape">([^<]*)</\1>', drawn)
    assert {tag for tag, _ in marked} == {"span", "tspan"}, "escapes marked in HTML and in SVG"
    assert {escape for _, escape in marked} == set(TRICKS)


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
