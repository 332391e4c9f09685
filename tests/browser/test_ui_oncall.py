"""The on-call night in a real headless Chromium, at 1,280 px: from the home page to the
backfill plan of a failed partition in at most three clicks; every link of every page
resolves; no page is wider than the window, a failed run's page with every facet unfolded
either, and no table cell breaks a word; the run graph opens whole.

The server holds the events of :func:`~tests.browser.helpers.oncall_events` (a failed write
among long job and dataset names, as Spark's integration names them). Screenshots go to
``$OL_SUBSET_ARTIFACTS/ui`` (CI keeps that folder), else to the test's temporary folder."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import impact
from tests.browser.conftest import PLAN_JSON, artifact_folder, serving
from tests.browser.helpers import DAILY_LONG, FAILED_DAY, ONCALL_DATES, RAW_LONG, oncall_events
from tests.lineage.events import LAKE

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")

from tests.service.conftest import Server  # after the check: needs the serve extra

WIDTH = 1280
FAILED_RUN = "00000000-0000-4000-8000-000000000707"
"""The failed insert into ``daily_agg`` (run number 700 + 3 * 2 + 1 of the events)."""

HREFS = "links => links.map(a => new URL(a.getAttribute('href'), document.baseURI).href)"
"""Where each link goes, HTML's and SVG's alike (an SVG link's ``href`` is not a string)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(str(tmp_path_factory.mktemp("oncall") / "lineage.db"), oncall_events()) as up:
        yield up


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artifact_folder("ui", tmp_path_factory)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


def _where(name: str, **more: str) -> str:
    return urllib.parse.urlencode({"namespace": "file", "name": f"{LAKE}/{name}", **more})


def _pages() -> dict[str, str]:
    """Each kind of page the UI has, with long names in it."""
    raw = json.dumps({"day": ONCALL_DATES[0], "country": "US"})
    return {
        "home": "/",
        "runs": "/runs",
        "run": f"/run?id={FAILED_RUN}",
        "dataset": f"/dataset?{_where(DAILY_LONG)}",
        "impact": f"/answer?{_where(RAW_LONG, p=raw)}",
        "provenance": f"/answer?{_where(DAILY_LONG, p=json.dumps({'day': ONCALL_DATES[0]}))}"
        + "&query=provenance",
    }


def test_from_home_to_the_backfill_plan_of_a_failed_partition(
    page: Any, server: Server, shots: Path
) -> None:
    page.goto(server.url + "/", wait_until="load")
    first = page.locator("table.incidents tr.incident").first
    assert f"day={FAILED_DAY}" in first.inner_text()
    assert "d ago" in first.inner_text(), "how long ago"
    page.screenshot(path=str(shots / "oncall-1-home.png"), full_page=True)
    clicks = 0
    first.get_by_role("link", name="backfill plan").click()
    clicks += 1
    page.wait_for_url("**/answer?*")
    page.wait_for_load_state("load")
    assert clicks <= 3
    plan = page.locator("#plan-0")
    assert plan.is_visible()
    top = plan.bounding_box()
    assert top is not None and 0 <= top["y"] < 900, "the page opens at the plan"
    expected = impact(server.db, f"{LAKE}/{DAILY_LONG}", partition={"day": FAILED_DAY})
    (block,) = plan.locator("pre.copyable").filter(has_text=PLAN_JSON).all()  # the plan as JSON
    shown = json.loads(block.inner_text())
    assert shown == {"backfill": expected.as_json()["backfill"]}
    page.screenshot(path=str(shots / "oncall-2-plan.png"))


def test_every_link_of_every_page_resolves(page: Any, server: Server) -> None:
    checked: dict[str, int] = {}
    for name, path in _pages().items():
        page.goto(server.url + path, wait_until="load")
        hrefs = page.locator("a[href]").evaluate_all(HREFS)
        local = [href for href in hrefs if href.startswith(server.url + "/")]
        assert len(local) > 2, name
        for href in dict.fromkeys(href.split("#")[0] for href in local):
            if href not in checked:
                checked[href] = page.request.get(href, max_redirects=0).status
        broken = {href: status for href, status in checked.items() if status != 200}
        assert broken == {}, name
    # The answers link every run and dataset they name, and each box of their graph.
    page.goto(server.url + _pages()["impact"], wait_until="load")
    answer = impact(
        server.db,
        f"{LAKE}/{RAW_LONG}",
        partition={"day": ONCALL_DATES[0], "country": "US"},
    )
    for item in answer.runs:
        assert page.locator(f'a[href="/run?id={item.run.run_id}"]').count() >= 2
    boxes = page.locator("svg.run-graph g.node")
    assert boxes.count() == page.locator("svg.run-graph a.node-link > g.node").count() > 0
    box = page.locator("svg.run-graph g.node.run").first
    box.click()
    page.wait_for_url("**/run?id=*")
    assert page.locator("h1").inner_text().startswith("Run ")


def test_no_page_is_wider_than_the_window(page: Any, server: Server, shots: Path) -> None:
    for name, path in _pages().items():
        page.goto(server.url + path, wait_until="load")
        width = page.evaluate("document.documentElement.scrollWidth")
        if name in ("runs", "impact"):
            page.screenshot(path=str(shots / f"oncall-{name}-1280.png"), full_page=True)
        assert width <= WIDTH, f"{name}: {width} px wide"
    page.goto(server.url + "/runs", wait_until="load")
    wrote = page.locator("table.runs td.wrote a").first
    title = wrote.get_attribute("title") or ""
    assert f"{LAKE}/" in title and "where" in title, "the whole text on hover"


def test_the_run_graph_opens_whole(page: Any, server: Server, shots: Path) -> None:
    for name in ("impact", "provenance"):
        page.goto(server.url + _pages()[name], wait_until="load")
        svg = page.locator("svg.run-graph").first
        frame = svg.bounding_box()
        assert frame is not None and frame["x"] + frame["width"] <= WIDTH
        rects = svg.locator("g.node rect").all()
        assert rects
        for rect in rects:
            drawn = rect.bounding_box()
            assert drawn is not None
            assert frame["x"] - 0.5 <= drawn["x"], name
            assert drawn["x"] + drawn["width"] <= frame["x"] + frame["width"] + 0.5, name
            assert frame["y"] - 0.5 <= drawn["y"], name
            assert drawn["y"] + drawn["height"] <= frame["y"] + frame["height"] + 0.5, name
        svg.screenshot(path=str(shots / f"oncall-graph-{name}.png"))


BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("td, th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent.matchAll(/[\\p{L}\\p{N}_]+/gu)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].map(rect => Math.round(rect.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""
"""The words of table cells (runs of letters, digits and ``_``) drawn on more than one line: a
line may end after a ``/`` of a path or a ``-`` of a run id, never inside a word."""


PARTITION_LINKS = 'a[href^="/dataset?"][href*="&p="]'
"""Links to a dataset page with a partition selected."""


def test_a_failed_run_unfolded_fits_the_window_and_no_cell_breaks_a_word(
    page: Any, server: Server, shots: Path
) -> None:
    page.goto(server.url + f"/run?id={FAILED_RUN}", wait_until="load")
    error = page.locator("details.facet", has=page.locator("code", has_text="errorMessage"))
    assert error.count() == 1
    for _ in range(3):  # facets, then what they fold (the stack trace, the JSON)
        page.locator("details:not([open]) > summary").evaluate_all("s => s.forEach(x => x.click())")
    assert page.locator("details:not([open])").count() == 0
    width = page.evaluate("document.documentElement.scrollWidth")
    page.screenshot(path=str(shots / "oncall-failed-run-unfolded.png"), full_page=True)
    assert width <= WIDTH, f"{width} px wide"
    # The error's message with its own lines, its stack trace folded apart from it.
    message = error.locator("pre.error-text").first.inner_text()
    assert message.splitlines()[-1] == "Caused by: java.io.IOException: No space left on device"
    stack = error.locator("details.stack pre.error-text").inner_text()
    assert stack.count("    at org.apache.spark") == 60 and "\\" not in stack
    for name, path in _pages().items():
        page.goto(server.url + path, wait_until="load")
        assert page.evaluate(BROKEN_WORDS) == [], name
        # A partition a page links is drawn on one line (not cut after a "-" of its date).
        lines = page.locator(PARTITION_LINKS).evaluate_all(
            "links => links.map(a => new Set([...a.getClientRects()].map(r => r.top)).size)"
        )
        assert all(count == 1 for count in lines), (name, lines)
    page.goto(server.url + f"/run?id={FAILED_RUN}", wait_until="load")
    assert page.locator(PARTITION_LINKS).count() >= 2, "the run's read and write link theirs"
