"""Every run, dataset and partition a page names links to its page: the run page's reads and
writes list the partitions each may cover (links to the dataset page, them selected), the
runs page and an answer link each run by its id and its job, long names cut with the whole
in the link's title. Expected partitions come from the events posted."""

from __future__ import annotations

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
from tests.lineage.events import LAKE
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
