"""The home page of ``lineage serve`` starts with the incidents: the partitions whose last
write failed and the latest failed runs, the newest first, each one link from its impact and
its backfill plan; and the lineage answer behind it (:func:`incidents`).

The expected partitions come from the events the test posts (which run failed, what it wrote,
what a later run rewrote), the plans from :func:`impact` itself."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import urllib.parse
from collections.abc import Callable

import pytest

from openlineage_subset.lineage import impact, incidents
from tests.browser.helpers import DAILY_LONG, FAILED_DAY, INSERT, oncall_events
from tests.lineage.events import LAKE, day, parts, run
from tests.service.conftest import Server
from tests.service.helpers import fetch, post_events

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")

ROLLING_FAILED = "2024-10-08"
"""The day of the pipeline's failed ``rolling`` write (tests.lineage.events.pipeline_history)."""


@pytest.fixture
def server(serve: Callable[..., Server]) -> Server:
    started = serve()
    post_events(started, oncall_events())
    return started


def _found(server: Server) -> list[tuple[str, str, str]]:
    return [
        (str(dataset.name), "" if part is None else str(part), failed.job_name)
        for part, dataset, failed, _ in incidents(server.db).partitions
    ]


def test_the_partitions_whose_last_write_failed_the_newest_first(server: Server) -> None:
    assert _found(server) == [
        (f"{LAKE}/{DAILY_LONG}", f"day={FAILED_DAY}", INSERT),
        (f"{LAKE}/rolling", f"day={ROLLING_FAILED}", "rolling"),
    ]
    assert incidents(server.db).failed_total == 2
    # A completed rewrite of the rolling partition: no longer an incident, its run still listed.
    post_events(server, run(990, 600, 601, writes=[("rolling", day(ROLLING_FAILED))], job="fix"))
    assert _found(server) == [(f"{LAKE}/{DAILY_LONG}", f"day={FAILED_DAY}", INSERT)]
    runs = incidents(server.db).runs
    assert [item.run.job_name for item in runs] == [INSERT, "rolling"]
    assert runs[1].writes == (), "rewritten since: nothing left half written"
    # A rewrite of another day leaves the failed one as it is.
    post_events(server, run(991, 610, 611, writes=[(DAILY_LONG, day("2024-10-01"))], job="x"))
    assert _found(server)[0][1] == f"day={FAILED_DAY}"


def _rows(page: str) -> list[str]:
    listing = page[page.index('<table class="list incidents"') :]
    return re.findall(r'<tr class="incident">(.*?)</tr>', listing[: listing.index("</table>")])


def test_the_home_page_starts_with_the_incidents_each_a_click_from_its_plan(
    server: Server,
) -> None:
    # How long ago, from the failed run's end (the events' times are in October 2024): the
    # page's clock is read between these two, which may straddle the end's time of day.
    ended = dt.datetime(2024, 10, 15, 3, 33, tzinfo=dt.timezone.utc)  # minute 213 of BASE
    before = dt.datetime.now(dt.timezone.utc)
    status, _, page = fetch(server, "/")
    after = dt.datetime.now(dt.timezone.utc)
    assert status == 200
    assert page.index("<h1>Incidents</h1>") < page.index('<table class="list datasets"')
    rows = _rows(page)
    assert len(rows) == 2
    assert f"day={FAILED_DAY}" in rows[0] and f"day={ROLLING_FAILED}" in rows[1]
    (shown_ago,) = re.findall(r">([0-9]+ d ago)<", rows[0])
    assert shown_ago in {f"{(when - ended).days} d ago" for when in (before, after)}
    (plan,) = re.findall(r'<a class="plan" href="([^"]*)"', rows[0])
    (answer,) = re.findall(r'<a class="impact" href="([^"]*)"', rows[0])
    plan, answer = html.unescape(plan), html.unescape(answer)
    assert plan == answer + "#plan-0"
    asked = urllib.parse.parse_qs(urllib.parse.urlsplit(answer).query)
    assert asked["name"] == [f"{LAKE}/{DAILY_LONG}"] and asked["query"] == ["impact"]
    assert [json.loads(value) for value in asked["p"]] == [{"day": FAILED_DAY}]
    status, _, shown = fetch(server, answer)
    assert status == 200 and 'id="plan-0"' in shown
    expected = impact(server.db, f"{LAKE}/{DAILY_LONG}", partition={"day": FAILED_DAY})
    # the answer's blocks to copy: the plan as text, the tasks to re-run, the plan as JSON
    blocks = re.findall(r'<pre class="copyable" id="copy-0-[0-9]+">(.*?)</pre>', shown, re.S)
    plans = [html.unescape(block) for block in blocks if html.unescape(block).startswith("{")]
    assert [json.loads(plan) for plan in plans] == [{"backfill": expected.as_json()["backfill"]}]
    # The partition itself: its dataset's page with it selected.
    (selected,) = re.findall(r'<a href="(/dataset\?[^"]*&amp;p=[^"]*)"', rows[0])
    status, _, dataset_page = fetch(server, html.unescape(selected))
    assert status == 200
    checked = re.findall(r'<input [^>]*name="p" value="([^"]*)"[^>]*checked>', dataset_page)
    assert [json.loads(html.unescape(value)) for value in checked] == [{"day": FAILED_DAY}]


def test_without_a_failed_run_the_home_page_says_so(serve: Callable[..., Server]) -> None:
    server = serve()
    post_events(server, run(1, 0, 1, writes=[("raw", day("2024-10-01"))], job="load"))
    status, _, page = fetch(server, "/")
    assert status == 200 and "No failed run in the database: nothing to recompute." in page


def test_a_wide_failed_write_lists_its_first_partitions_and_says_there_are_more(
    serve: Callable[..., Server],
) -> None:
    server = serve()
    days = [f"2024-{month:02d}-{number:02d}" for month in (1, 2) for number in range(1, 29)]
    wide = parts(*({"day": value} for value in days))
    post_events(server, run(1, 0, 1, writes=[("wide", wide)], job="load"))
    post_events(server, run(2, 2, 3, writes=[("wide", wide)], job="load", status="FAIL"))
    (failed,) = incidents(server.db).runs
    (write,) = failed.writes
    assert write.more and len(write.partitions) == 40 < len(days)
    assert [str(ref) for ref, _ in write.partitions] == [f"day={value}" for value in days[:40]]
    _, _, page = fetch(server, "/")
    assert "40+ partition(s) (the first 40 listed)" in page
    # More than one answer takes: the link selects the first of them on the dataset page.
    (selected,) = re.findall(r'<a href="([^"]*)">select them on the dataset page</a>', page)
    asked = urllib.parse.parse_qs(urllib.parse.urlsplit(html.unescape(selected)).query)
    assert [json.loads(value)["day"] for value in asked["p"]] == days[:24]
    status, _, _ = fetch(server, html.unescape(selected))
    assert status == 200
