"""A run's box keeps what tells it from the other runs: the action and the end of its target
(an insert into ``daily_agg`` and a count of it read differently), the start of the job name
cut first; with :class:`Links` (the service's pages), each box links its run or dataset page.

Expected labels are read from the job names the events give, not from the label function."""

from __future__ import annotations

import html
import re
import urllib.parse

from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset.report import Links, impact_picture
from openlineage_subset.report._drawing import LABEL_COLUMNS, graph_svg
from openlineage_subset.report._markup import ELLIPSIS, columns, job_label
from tests.browser.helpers import COUNT, DAILY_LONG, INSERT, ONCALL_DATES, RAW_LONG, oncall_events
from tests.lineage.events import LAKE
from tests.report.conftest import Build

NODE = re.compile(
    r'(?:<a class="node-link" href="([^"]*)">)?<g class="node (\w+) [^"]*" data-key="([^"]*)">'
    r'.*?<text class="title"[^>]*>(.*?)</text>.*?</g>(</a>)?',
    re.S,
)


def _label(name: str) -> str:
    return "".join(piece for piece, _ in job_label(name, LABEL_COLUMNS))


def test_the_action_and_the_target_are_kept_the_prefix_is_cut() -> None:
    insert, count = _label(INSERT), _label(COUNT)
    assert insert != count
    for label, action in ((insert, "insert_into"), (count, "collect_limit")):
        assert columns(label) <= LABEL_COLUMNS
        assert action in label and label.endswith("daily_agg"), label
        assert label.startswith(INSERT[:4]) and ELLIPSIS in label
    assert _label("clean") == "clean", "a short name as it is"
    assert _label("a.b.c") == "a.b.c"


@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=5), st.integers(8, 60))
def test_any_name_fits_its_box(parts: list[str], limit: int) -> None:
    name = ".".join(parts)
    shown = job_label(name, limit)
    assert sum(columns(piece) for piece, _ in shown) <= limit


def _drawn(markup: str) -> list[tuple[str | None, str, str, str]]:
    return [
        (link or None, kind, key, html.unescape(re.sub(r"<[^>]+>", "", title)))
        for link, kind, key, title, _ in NODE.findall(markup)
    ]


def test_runs_of_one_dataset_read_apart_and_every_box_links(lineage_db: Build) -> None:
    db = lineage_db(oncall_events())
    picture = impact_picture(db, f"{LAKE}/{RAW_LONG}", partition={"day": ONCALL_DATES[0]})
    plain = _drawn(graph_svg(picture))
    assert plain and all(link is None for link, *_ in plain), "the static page links nothing"
    links = Links(run=lambda run_id: f"/run?id={run_id}", dataset=lambda d: f"/d?{d.name}")
    drawn = _drawn(graph_svg(picture, links))
    assert len(drawn) == len(picture.nodes)
    runs = {node.key: node for node in picture.nodes}
    titles = {}
    for link, kind, key, title in drawn:
        node = runs[key]
        assert link is not None, f"box {key} links"
        if kind == "run":
            assert link == f"/run?id={node.run_id}"
            titles[node.title] = title
        else:
            assert node.dataset is not None
            assert urllib.parse.unquote(link) == f"/d?{node.dataset.name}"
    assert set(titles) == {INSERT, COUNT}
    assert titles[INSERT] != titles[COUNT]
    assert "insert_into" in titles[INSERT] and "collect_limit" in titles[COUNT]
    assert all(title.endswith("daily_agg") for title in titles.values())
    assert DAILY_LONG.endswith("daily_agg")
