"""Every run, dataset and partition a page names links to its page: the run page's reads and
writes list the partitions each may cover (links to the dataset page, them selected), the
runs page and an answer link each run by its id and its job, long names cut with the whole
in the link's title. Expected partitions come from the events posted."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import urllib.parse
from collections.abc import Callable

import pytest

from tests.browser.helpers import (
    COUNT,
    DAILY_LONG,
    INSERT,
    ONCALL_DATES,
    RAW_LONG,
    oncall_events,
)
from tests.lineage.events import LAKE, parts, run
from tests.service.conftest import Server
from tests.service.helpers import fetch, page_path, post_events

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")

INSERT_RUN = "00000000-0000-4000-8000-000000000701"
"""The first insert into daily_agg: read raw's day=2024-10-01/country=US, wrote its day."""


@pytest.fixture
def server(serve: Callable[..., Server]) -> Server:
    started = serve()
    post_events(started, oncall_events())
    return started


def _selected(page: str) -> list[tuple[str, dict[str, str]]]:
    """The (dataset name, partition) of each link to a dataset page with one selected."""
    found = []
    for link in re.findall(r'<a href="(/dataset\?[^"]*)"', page):
        asked = urllib.parse.parse_qs(urllib.parse.urlsplit(html.unescape(link)).query)
        if "p" in asked:
            found += [(asked["name"][0], json.loads(value)) for value in asked["p"]]
    return found


def test_a_run_page_links_the_partitions_it_read_and_wrote(server: Server) -> None:
    status, _, page = fetch(server, page_path("/run", id=INSERT_RUN))
    assert status == 200
    assert _selected(page) == [
        (f"{LAKE}/{RAW_LONG}", {"day": ONCALL_DATES[0], "country": "US"}),
        (f"{LAKE}/{DAILY_LONG}", {"day": ONCALL_DATES[0]}),
    ]
    for link in re.findall(r'<a href="(/dataset\?[^"]*p=[^"]*)"', page):
        status, _, shown = fetch(server, html.unescape(link))
        assert status == 200 and re.search(r'name="p" value="[^"]*"[^>]*checked>', shown), link


def test_the_runs_page_cuts_long_job_names_and_keeps_them_whole_on_hover(server: Server) -> None:
    status, _, page = fetch(server, "/runs")
    assert status == 200
    row = re.search(rf"<tr><td class=\"id\"><a href=\"/run\?id={INSERT_RUN}\">.*?</tr>", page)
    assert row is not None
    (title, shown) = re.findall(r'<a href="/run\?id=[^"]*" title="([^"]*)">(.*?)</a>', row[0])[0]
    assert html.unescape(title) == f"tests.{INSERT}"
    assert len(html.unescape(shown)) <= 60 and "insert_into" in shown and shown.endswith("agg")
    (wrote,) = re.findall(r'<td class="wrote">(.*?)</td>', row[0])
    assert f"{LAKE}/{DAILY_LONG} where " in html.unescape(wrote), "the whole name on hover"


def test_an_answer_links_each_run_by_what_tells_it_apart(server: Server) -> None:
    query = {"day": ONCALL_DATES[0], "country": "US"}
    where = {"namespace": "file", "name": f"{LAKE}/{RAW_LONG}", "p": json.dumps(query)}
    status, _, page = fetch(server, page_path("/answer", **where))
    assert status == 200
    table = page[page.index('<table class="list answer-runs impact"') :]
    jobs = re.findall(r'<a href="/run\?id=([^"]*)" title="([^"]*)">(.*?)</a>', table)
    shown = {html.unescape(title): html.unescape(text) for _, title, text in jobs}
    assert set(shown) == {f"tests.{INSERT}", f"tests.{COUNT}"}
    assert "insert_into" in shown[f"tests.{INSERT}"]
    assert "collect_limit" in shown[f"tests.{COUNT}"]
    assert all(text.endswith("daily_agg") and len(text) <= 60 for text in shown.values())


def _days(count: int) -> list[str]:
    first = dt.date(2020, 1, 1)
    return [(first + dt.timedelta(days=number)).isoformat() for number in range(count)]


def _drawn_days(page: str) -> list[str]:
    return [
        json.loads(html.unescape(v))["day"] for v in re.findall(r'name="p" value="([^"]*)"', page)
    ]


def _row_links(page: str) -> dict[str, str]:
    """The dataset page's links to other rows of its grid, by their text."""
    found = re.search(r'<p class="pages">(.*?)</p>', page)
    assert found is not None, "no links to the rows not drawn"
    return {
        html.unescape(label): html.unescape(href)
        for href, label in re.findall(r'<a href="([^"]*)"[^>]*>([^<]*)</a>', found.group(1))
    }


def test_a_grid_too_long_to_draw_at_once_links_its_older_rows(serve: Callable[..., Server]) -> None:
    """1,200 days of one column: a calendar draws 1,100 at most. Every day is drawn on the
    dataset's page or on the page its "older rows" link opens, and a link selecting an old
    day opens the rows that hold it, ticked."""
    server = serve()
    days = _days(1200)
    post_events(server, run(1, 0, 5, writes=[("long_daily", parts(*({"day": d} for d in days)))]))
    dataset = {"namespace": "file", "name": f"{LAKE}/long_daily"}
    status, _, newest = fetch(server, page_path("/dataset", **dataset))
    assert status == 200
    assert _drawn_days(newest) == days[-1100:]
    links = _row_links(newest)
    assert set(links) == {"\u2190 older rows"}
    status, _, older = fetch(server, links["\u2190 older rows"])
    assert status == 200
    assert _drawn_days(older) == days[:100]
    assert set(_row_links(older)) == {"newer rows \u2192"}
    status, _, back = fetch(server, _row_links(older)["newer rows \u2192"])
    assert status == 200 and _drawn_days(back) == days[-1100:]
    # a link selecting an old day (a run page's, an answer's) draws the rows up to it
    picked = json.dumps({"day": days[42]})  # typed by hand: spaced otherwise than the pages
    status, _, shown = fetch(server, page_path("/dataset", **dataset, p=picked))
    assert status == 200
    assert _drawn_days(shown) == days[:43]
    assert re.search(r'name="p" value="[^"]*2020-02-12[^"]*"[^>]*checked>', shown)
    # a row value the grid does not have, or the first (nothing before it): said, with the way back
    for before, said in (("2019-12-31", "has no partition of day="), (days[0], "before")):
        status, _, refused = fetch(server, page_path("/dataset", **dataset, before=before))
        assert status == 404 and said in html.unescape(refused), before
        assert 'href="/dataset?namespace=file' in refused
