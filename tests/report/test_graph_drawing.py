"""The report's run graph, measured on the SVG it writes: no edge passes behind a box it does
not connect, no two boxes overlap, every label fits its box and tells its box apart.

The drawing is read back from the page (rectangles, path data, text) and checked with plain
geometry: each edge's cubic curves are sampled and every piece is clipped against every other
box. tests/browser does the same on the page Chromium lays out.
"""

from __future__ import annotations

import html.parser
import itertools
import random
import re
import unicodedata
from collections.abc import Iterator, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from openlineage_subset.report._html import page
from openlineage_subset.report._picture import (
    GraphEdge,
    GraphNode,
    Picture,
    impact_picture,
    overview_picture,
)
from tests.lineage.conftest import Build
from tests.lineage.events import day, pipeline_history, run, wide_pipeline

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # left, top, right, bottom
GLYPH = 0.6 * 12
"""A monospace glyph's advance at the graph's 12 px (0.6 em in DejaVu Sans Mono, Liberation
Mono, Menlo)."""


class _Svg(html.parser.HTMLParser):
    """The boxes (by ``data-key``), edge paths and box texts of the page's run graph."""

    def __init__(self) -> None:
        super().__init__()
        self.boxes: dict[str, Rect] = {}
        self.texts: dict[str, list[str]] = {}
        self.hovers: dict[str, str] = {}
        self.paths: list[str] = []
        self.font = ""
        self._node = ""
        self._text: list[str] | None = None
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {key: value or "" for key, value in attrs}
        classes = found.get("class", "").split()
        if tag == "g" and "node" in classes:
            self._node = found["data-key"]
            self.texts[self._node] = []
        elif tag == "rect" and self._node:
            x, y = float(found["x"]), float(found["y"])
            self.boxes[self._node] = (x, y, x + float(found["width"]), y + float(found["height"]))
        elif tag in ("text", "title") and self._node:
            self._text = []
        elif tag == "path" and "edge" in classes:
            self.paths.append(found["d"])
        self._style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "text" and self._text is not None:
            self.texts[self._node].append("".join(self._text))
            self._text = None
        elif tag == "title" and self._text is not None:
            self.hovers[self._node] = "".join(self._text)
            self._text = None
        elif tag == "g":
            self._node = ""

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)
        if self._style:
            self.font += data


def _drawn(picture: Picture) -> _Svg:
    parsed = _Svg()
    parsed.feed(page(picture))
    return parsed


def _curves(d: str) -> Iterator[Point]:
    """Points along a path of ``M x y`` then cubic ``C`` steps, 24 per step."""
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", d)]
    assert d.startswith("M") and (len(numbers) - 2) % 6 == 0, d
    start = (numbers[0], numbers[1])
    yield start
    for at in range(2, len(numbers), 6):
        a, b, c = (numbers[at : at + 2], numbers[at + 2 : at + 4], numbers[at + 4 : at + 6])
        for step in range(1, 25):
            t = step / 24
            u = 1 - t
            yield (
                u**3 * start[0] + 3 * u * u * t * a[0] + 3 * u * t * t * b[0] + t**3 * c[0],
                u**3 * start[1] + 3 * u * u * t * a[1] + 3 * u * t * t * b[1] + t**3 * c[1],
            )
        start = (c[0], c[1])


def _touches(rect: Rect, point: Point, slack: float = 1.0) -> bool:
    left, top, right, bottom = rect
    x, y = point
    return left - slack <= x <= right + slack and top - slack <= y <= bottom + slack


def _crosses(rect: Rect, a: Point, b: Point, inset: float = 1.0) -> bool:
    """Whether the segment ``a``-``b`` enters ``rect`` shrunk by ``inset`` (Liang-Barsky)."""
    left, top, right, bottom = rect[0] + inset, rect[1] + inset, rect[2] - inset, rect[3] - inset
    dx, dy = b[0] - a[0], b[1] - a[1]
    low, high = 0.0, 1.0
    for p, q in ((-dx, a[0] - left), (dx, right - a[0]), (-dy, a[1] - top), (dy, bottom - a[1])):
        if p == 0:
            if q < 0:
                return False
            continue
        r = q / p
        if p < 0:
            low = max(low, r)
        else:
            high = min(high, r)
        if low > high:
            return False
    return True


def _foreign_crossings(drawn: _Svg) -> list[tuple[str, str]]:
    """(edge path, box key) for every box an edge passes through that is not one of its ends
    (the boxes its first and last points lie on)."""
    found = []
    for d in drawn.paths:
        points = list(_curves(d))
        ends = {
            key
            for key, rect in drawn.boxes.items()
            if _touches(rect, points[0]) or _touches(rect, points[-1])
        }
        xs, ys = [x for x, _ in points], [y for _, y in points]
        near = {
            key: rect
            for key, rect in drawn.boxes.items()
            if rect[0] <= max(xs)
            and min(xs) <= rect[2]
            and rect[1] <= max(ys)
            and min(ys) <= rect[3]
        }
        for key, rect in near.items():
            if key not in ends and any(_crosses(rect, a, b) for a, b in itertools.pairwise(points)):
                found.append((d, key))
    return found


def _overlaps(drawn: _Svg) -> list[tuple[str, str]]:
    boxes = sorted(drawn.boxes.items())
    return [
        (one, other)
        for number, (one, a) in enumerate(boxes)
        for other, b in boxes[number + 1 :]
        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
    ]


def _columns(value: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in value)


def _misfits(drawn: _Svg) -> list[str]:
    """Box texts wider than their box (the text starts 10 px in) at a monospace glyph's
    advance; the graph's text must be set in a monospace font for that to be the width."""
    assert re.search(r"svg\.run-graph text \{[^}]*monospace", drawn.font), "a monospace font"
    return [
        line
        for key, texts in drawn.texts.items()
        for line in texts
        if 10 + _columns(line) * GLYPH > drawn.boxes[key][2] - drawn.boxes[key][0]
    ]


def _assert_clean(picture: Picture) -> _Svg:
    drawn = _drawn(picture)
    assert len(drawn.boxes) == len(picture.nodes)
    assert len(drawn.paths) == len({(e.source, e.target) for e in picture.edges})
    assert _foreign_crossings(drawn) == []
    assert _overlaps(drawn) == []
    assert _misfits(drawn) == []
    return drawn


def _picture(
    layers: Sequence[int], edges: Sequence[tuple[int, int]], names: Sequence[str] = ()
) -> Picture:
    nodes = tuple(
        GraphNode(
            f"n{number}",
            "job" if number % 2 else "dataset",
            layer,
            names[number] if number < len(names) else f"node {number}",
            f"/data/lake/{number}",
            "job" if number % 2 else "dataset",
            (),
        )
        for number, layer in enumerate(layers)
    )
    drawn = tuple(GraphEdge(f"n{a}", f"n{b}", "definite") for a, b in dict.fromkeys(edges))
    return Picture("overview", "graph", (), 0, nodes, drawn, 0, ())


def test_an_edge_that_skips_layers_goes_around_the_boxes_between() -> None:
    # The page: a CREATE job writes lake/sales, which also comes from a longer chain;
    # drawn straight, the edge ran behind the chain's boxes.
    create, raw, clean, mid, sales = 0, 1, 2, 3, 4
    picture = _picture(
        [0, 1, 2, 3, 4],
        [(create, raw), (raw, clean), (clean, mid), (mid, sales), (create, sales)],
    )
    _assert_clean(picture)


def test_edges_backwards_and_within_a_column_go_around_too() -> None:
    picture = _picture(
        [0, 1, 2, 3, 1, 2, 2],
        [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 5), (2, 1), (3, 3)],
    )
    _assert_clean(picture)


def test_fifty_jobs_and_two_hundred_datasets() -> None:
    chosen = random.Random(22)
    layers = {f"d{n}": 0 for n in range(40)}
    edges: list[tuple[str, str]] = []
    for job in range(50):
        layer = 1 + 2 * (job % 5)
        earlier = [name for name, at in layers.items() if at < layer]
        for name in chosen.sample(earlier, chosen.randint(1, 4)):
            edges.append((name, f"j{job}"))
        layers[f"j{job}"] = layer
        for _ in range(4 if job < 10 else 3 if job < 49 else 3 + 200 - 40 - 4 * 10 - 3 * 40):
            written = f"d{sum(key.startswith('d') for key in layers)}"
            layers[written] = layer + chosen.choice([1, 1, 3, 5])  # some skip layers
            edges.append((f"j{job}", written))
    keys = sorted(layers)
    assert sum(key.startswith("d") for key in keys) == 200
    number = {key: index for index, key in enumerate(keys)}
    picture = _picture(
        [layers[key] for key in keys],
        [(number[a], number[b]) for a, b in edges],
        [f"daily_sales_demo.write.tmp_output_{key}" for key in keys],
    )
    drawn = _assert_clean(picture)
    labels = [texts[0] for texts in drawn.texts.values()]
    assert len(set(labels)) == len(labels), "every long name drawn tells its box apart"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=2, max_size=14).flatmap(
        lambda layers: st.tuples(
            st.just(layers),
            st.lists(
                st.tuples(st.integers(0, len(layers) - 1), st.integers(0, len(layers) - 1)),
                max_size=24,
            ),
        )
    ),
    st.lists(st.text(max_size=60), max_size=14),
)
def test_any_layered_graph_is_drawn_clean(
    shape: tuple[list[int], list[tuple[int, int]]], names: list[str]
) -> None:
    """Edges back to earlier columns and within one too; names of any characters (wide ones,
    controls shown as escapes)."""
    layers, edges = shape
    _assert_clean(_picture(layers, edges, names))


def test_long_names_are_cut_and_runs_told_apart(lineage_db: Build) -> None:
    """A job name keeps its start, its action and its target's end (the prefix is cut)."""
    prefix = "daily_sales_demo.write.tmp_output_"
    events = [
        *run(1, 0, 1, job=prefix + "create_sales", writes=[("raw", None), ("sales", None)]),
        *run(2, 2, 3, job=prefix + "clean", reads=[("raw", None)], writes=[("clean", None)]),
        *run(3, 4, 5, job=prefix + "sum", reads=[("clean", None)], writes=[("sales", None)]),
    ]
    for number in range(4, 7):
        reads = [("raw", None)]
        events += run(number, 10 * number, 10 * number + 1, job=prefix + "clean", reads=reads)
    db = lineage_db(events)
    overview = overview_picture(db)
    drawn = _assert_clean(overview)
    titles = {node.key: node.title for node in overview.nodes if node.kind == "job"}
    shown = {key: drawn.texts[key][0] for key in titles}
    assert len(set(shown.values())) == 3, shown
    for key, title in titles.items():
        assert shown[key].startswith(prefix[:8]) and shown[key].endswith(title[-5:])
        assert title in drawn.hovers[key], "the full name is on hover"

    impacted = impact_picture(db, "raw")
    drawn = _assert_clean(impacted)
    runs = [node.key for node in impacted.nodes if node.title == prefix + "clean"]
    assert len(runs) == 4
    assert len({"\n".join(drawn.texts[key]) for key in runs}) == 4, "runs of one job differ"


def test_the_pipeline_overview_is_drawn_clean(lineage_db: Build) -> None:
    # compact rewrites clean: an edge drawn back to an earlier column.
    _assert_clean(overview_picture(lineage_db(pipeline_history())))
    events = [
        event
        for number in range(1, 9)
        for event in run(
            number,
            number,
            number + 0.5,
            job=f"stage{number % 3}",
            reads=[(f"t{number - 1}", day("2024-10-01"))],
            writes=[(f"t{number}", day("2024-10-01")), ("sink", None)],
        )
    ]
    _assert_clean(overview_picture(lineage_db(events)))


def test_a_real_overview_of_fifty_jobs_and_two_hundred_datasets(lineage_db: Build) -> None:
    picture = overview_picture(lineage_db(wide_pipeline()))
    assert sum(node.kind == "job" for node in picture.nodes) == 50
    assert sum(node.kind == "dataset" for node in picture.nodes) == 200
    _assert_clean(picture)
