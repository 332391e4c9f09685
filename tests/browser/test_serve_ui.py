"""The web UI of ``lineage serve`` in a real headless Chromium, over the real server.

The database holds a real captured pipeline: the events ``ol-subset demo`` captured from local
Spark (tests/data/captured/demo_events.jsonl, written by ``ol-subset demo``), posted to the
server as a producer would, plus the test pipeline of tests/lineage/events.py, which names a
dataset, a job and a partition value like markup. The tests search, check a dataset's
calendar of partitions against ``/api/v1/partitions``, click a partition, check the
highlighted cells against :func:`~openlineage_subset.lineage.impact`, zoom and pan the run
graph (wheel, drag, buttons; still no edge through a box), and check that no markup from an
event runs. Screenshots go to ``$OL_SUBSET_ARTIFACTS/ui`` (CI keeps
that folder), else to the test's temporary folder.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import datasets, impact
from tests.browser.conftest import PLAN_JSON, artifact_folder, serving
from tests.browser.helpers import GEOMETRY
from tests.helpers import ROOT
from tests.lineage.events import HOSTILE_NAME, LAKE, pipeline_history, run

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")

from tests.service.conftest import Server  # after the check: needs the serve extra

CAPTURED = ROOT / "tests" / "data" / "captured" / "demo_events.jsonl"
HOSTILE_VALUE = '"><img src=x onerror=alert(2)>'
CLICKED = {"business_date": "2024-10-15", "country": "DE"}
RAW_START = {"day": "2024-10-05", "country": "DE"}


def _events() -> list[dict[str, Any]]:
    captured = [json.loads(line) for line in CAPTURED.read_text("utf-8").splitlines() if line]
    value = {"type": "partition", "partitions": [{"dimensions": {"country": HOSTILE_VALUE}}]}
    hostile = run(900, 500, 501, writes=[("hostile_parts", value)], job="<script>x()</script>")
    return [*captured, *pipeline_history(), *hostile]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(str(tmp_path_factory.mktemp("serve-ui") / "lineage.db"), _events()) as up:
        yield up


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artifact_folder("ui", tmp_path_factory)


class Watched:
    """A page and everything it did that a clean page does not: console messages (a CSP
    violation is one), script errors, dialogs, requests to anywhere but the server."""

    def __init__(self, browser: Any, server: Server, *, scripts: bool = True) -> None:
        self.context = browser.new_context(
            viewport={"width": 1400, "height": 1000}, java_script_enabled=scripts
        )
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.elsewhere: list[str] = []
        self.page.on(
            "console",
            lambda message: (
                self.console.append(f"{message.type}: {message.text}")
                if message.type in ("error", "warning")  # a CSP violation is an error
                else None
            ),
        )
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss())
        )
        self.page.on(
            "request",
            lambda request: (
                None
                if request.url.startswith(server.url + "/")
                else self.elsewhere.append(request.url)
            ),
        )

    def clean(self) -> None:
        assert self.console == [], "no error or warning: no CSP violation, no 404"
        assert self.errors == [] and self.dialogs == [] and self.elsewhere == []

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def watched(browser: Any, server: Server) -> Iterator[Watched]:
    found = Watched(browser, server)
    yield found
    found.close()


def test_search_click_a_partition_and_see_its_impact(
    watched: Watched, server: Server, shots: Path
) -> None:
    page = watched.page
    page.goto(server.url + "/", wait_until="load")
    rows = page.locator("table.datasets tbody tr")
    assert rows.count() == len(datasets(server.db).datasets)
    page.fill("#dataset-search", "lake/sales")
    visible = page.locator("table.datasets tbody tr:visible")
    assert visible.count() == 1, "filtered as one types"
    assert visible.first.inner_text().startswith("file:") and "/lake/sales" in visible.inner_text()
    assert "1 of" in page.inner_text("#dataset-count")
    page.screenshot(path=str(shots / "1-search.png"), full_page=True)

    visible.locator("a").click()
    page.wait_for_load_state("load")
    assert page.locator("h1").inner_text().endswith("/lake/sales")
    page.screenshot(path=str(shots / "2-dataset.png"), full_page=True)
    value = json.dumps(CLICKED, separators=(",", ":"))
    cell = page.locator(f'table.grid input[name="p"][value={json.dumps(value)}]')
    assert cell.count() == 1
    cell.click()  # the script opens its impact at once
    page.wait_for_url("**/answer?*")
    page.wait_for_load_state("load")
    page.screenshot(path=str(shots / "3-impact.png"), full_page=True)

    asked = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    answer = impact(server.db, asked["name"][0], partition=CLICKED, namespace=asked["namespace"][0])
    assert answer.runs and answer.backfill, "the demo's partition feeds later runs"
    assert page.locator("svg.run-graph g.node.run").count() == len(answer.runs)
    start = page.locator(f'table.grid[data-dataset="{answer.start.dataset}"]')
    assert start.locator("td.affected").count() == 1, "the partition clicked"
    for part in answer.backfill:
        grid = page.locator(f'table.grid[data-dataset="{part.dataset}"]')
        if part.whole is not None or grid.count() == 0:
            assert part.whole is not None, f"a grid for {part.dataset}"
            continue
        assert grid.locator("td.affected").count() == len(part.definite), str(part.dataset)
        assert grid.locator("td.possible").count() == len(part.possible), str(part.dataset)
    (block,) = page.locator("pre.copyable").filter(has_text=PLAN_JSON).all()  # the plan as JSON
    plan = block.inner_text()
    assert json.loads(plan) == {"backfill": answer.as_json()["backfill"]}
    assert page.locator("button.copy").first.is_visible(), "the script shows the copy buttons"
    watched.clean()


def test_without_scripts_the_search_and_the_selection_are_forms(
    browser: Any, server: Server, shots: Path
) -> None:
    watched = Watched(browser, server, scripts=False)
    try:
        page = watched.page
        page.goto(server.url + "/", wait_until="load")
        page.fill("#dataset-search", "rolling")
        page.press("#dataset-search", "Enter")
        page.wait_for_url("**/?q=rolling")
        assert page.locator("table.datasets tbody tr").count() == 1
        page.locator("table.datasets a").click()
        page.wait_for_load_state("load")
        boxes = page.locator('table.grid input[name="p"]')
        boxes.nth(0).check()
        boxes.nth(1).check()
        page.screenshot(path=str(shots / "4-selected-no-script.png"), full_page=True)
        page.locator('button[value="impact"]').click()
        page.wait_for_load_state("load")
        assert page.locator("section.answer").count() == 2
        assert page.locator("button.copy:visible").count() == 0, "no script: nothing to copy with"
        watched.clean()
    finally:
        watched.close()


def test_names_from_events_show_as_text_and_run_nothing(
    watched: Watched, server: Server, shots: Path
) -> None:
    page = watched.page
    for name in (HOSTILE_NAME, "hostile_parts"):
        query = urllib.parse.urlencode({"namespace": "file", "name": f"{LAKE}/{name}"})
        for route in ("dataset", "answer"):
            page.goto(f"{server.url}/{route}?{query}", wait_until="load")
            assert page.locator("img").count() == 0
            assert page.locator("script").count() == 1, "the UI's own script only"
            if route == "dataset":
                shown = f"file:{LAKE}/{name}"
                assert page.locator("h1").inner_text() == shown
    page.goto(f"{server.url}/dataset?namespace=file&name={LAKE}/hostile_parts", wait_until="load")
    cell = page.locator('table.grid input[name="p"]')
    assert json.loads(cell.get_attribute("value") or "") == {"country": HOSTILE_VALUE}
    page.goto(f"{server.url}/runs", wait_until="load")
    assert "<script>x()</script>" in page.inner_text("table.runs")
    page.screenshot(path=str(shots / "5-hostile-runs.png"), full_page=True)
    page.goto(f"{server.url}/", wait_until="load")
    assert HOSTILE_NAME in page.inner_text("table.datasets")
    watched.clean()


def _colour(item: dict[str, Any], latest: str | None) -> str:
    """The colour the dataset page should give a partition of ``/api/v1/partitions`` (the
    demo has no failed run, so none is affected)."""
    writer = item["lastWriter"]
    if writer is None:
        return "known"
    if item["label"] == "possible":
        return "possible"
    return "written" if writer["runId"] == latest else "earlier"


def test_a_dataset_of_the_demo_is_a_calendar_of_its_partitions(
    watched: Watched, server: Server, shots: Path
) -> None:
    page = watched.page
    (sales,) = [
        item.dataset
        for item in datasets(server.db).datasets
        if item.dataset.name.endswith("/lake/sales")
    ]
    where = {"namespace": sales.namespace, "name": sales.name}
    status, known = server.get(
        "/api/v1/partitions?"
        + urllib.parse.urlencode({"dataset": sales.name, "namespace": sales.namespace})
    )
    assert status == 200 and len(known["partitions"]) >= 2
    writers = [item["lastWriter"] for item in known["partitions"] if item["lastWriter"]]
    latest = max(writers, key=lambda run: (run["endedAt"] or "", run["runId"]))["runId"]
    page.goto(f"{server.url}/dataset?{urllib.parse.urlencode(where)}", wait_until="load")
    grid = page.locator("table.grid")
    assert grid.count() == 1
    # A calendar: the days of the month across, a band per month, a row per country in it.
    days = grid.locator("thead th[scope=col]").all_inner_texts()
    assert days[1:] == [str(day) for day in range(1, 32)]
    months = {item["dimensions"]["business_date"][:7] for item in known["partitions"]}
    assert grid.locator("th.month").all_inner_texts() == sorted(months)
    values = grid.locator('input[name="p"]').evaluate_all("boxes => boxes.map(b => b.value)")
    assert sorted(json.dumps(json.loads(v), sort_keys=True) for v in values) == sorted(
        json.dumps(item["dimensions"], sort_keys=True) for item in known["partitions"]
    ), "a checkbox for each partition the store knows, once, and nothing else"
    for item in known["partitions"]:
        value = json.dumps(item["dimensions"], separators=(",", ":"), ensure_ascii=False)
        cell = grid.locator(f"td:has(input[value={json.dumps(value)}])")
        assert cell.count() == 1
        title = cell.get_attribute("title") or ""
        assert all(f"{name}={v}" in title for name, v in item["dimensions"].items())
        assert cell.get_attribute("class") == _colour(item, latest), title
        box = cell.bounding_box()
        assert box is not None and box["width"] >= 16 and box["height"] >= 16
    page.screenshot(path=str(shots / "6-dataset-calendar.png"), full_page=True)

    first = known["partitions"][0]["dimensions"]
    value = json.dumps(first, separators=(",", ":"), ensure_ascii=False)
    grid.locator(f"input[value={json.dumps(value)}]").click()  # one click: its impact
    page.wait_for_url("**/answer?*")
    page.wait_for_load_state("load")
    assert page.locator("h1").first.inner_text() == f"Impact: {sales}"
    start = page.locator(f'table.grid[data-dataset="{sales}"] td.affected')
    assert start.count() == 1, "the partition clicked, highlighted"
    assert all(f"{name}={v}" in (start.get_attribute("title") or "") for name, v in first.items())
    watched.clean()


SCALE = (
    "svg => { const r = svg.querySelector('g.node rect'); "
    "return r.getBoundingClientRect().width / r.width.baseVal.value; }"
)
"""Screen pixels per unit of the drawing, as Chromium draws its first box."""
UNDER = (
    "([svg, x, y]) => { const p = new DOMPoint(x, y).matrixTransform("
    "svg.getScreenCTM().inverse()); return [p.x, p.y]; }"
)
"""The point of the drawing under the screen point (x, y)."""


def _drag(page: Any, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Press the mouse at ``start``, move it to ``end`` in steps, release it there."""
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=6)
    page.mouse.up()


def _assert_every_node_inside(svg: Any) -> None:
    """Every box of the graph (a Playwright locator of its svg) is drawn whole in its frame."""
    frame_box, boxes = svg.bounding_box(), svg.locator("g.node rect").all()
    assert frame_box is not None and boxes
    for rect in boxes:
        drawn = rect.bounding_box()
        assert drawn is not None
        assert (
            frame_box["x"] - 0.5
            <= drawn["x"]
            <= frame_box["x"] + frame_box["width"] - drawn["width"] + 0.5
        )
        assert (
            frame_box["y"] - 0.5
            <= drawn["y"]
            <= frame_box["y"] + frame_box["height"] - drawn["height"] + 0.5
        )


def _opens_fitted(page: Any, svg: Any) -> None:
    """The graph opens whole in its frame (this one shrunk), then goes to actual size."""
    _assert_every_node_inside(svg)
    assert svg.evaluate(SCALE) < 0.99, "this graph is larger than its frame: shrunk to fit"
    page.get_by_role("button", name="actual size, from the top left").first.click()


def test_the_run_graph_zooms_at_the_pointer_pans_and_resets(
    watched: Watched, server: Server, shots: Path
) -> None:
    page = watched.page
    where = {"namespace": "file", "name": f"{LAKE}/raw", "p": json.dumps(RAW_START)}
    page.goto(f"{server.url}/answer?{urllib.parse.urlencode(where)}", wait_until="load")
    frame = page.locator("div.graph").first
    svg = frame.locator("svg.run-graph")
    assert "panzoom" in (frame.get_attribute("class") or ""), "the script took the graph over"
    assert page.locator("p.zoom").first.is_hidden(), "the CSS size choices give way"
    node = svg.locator("g.node rect").first
    _opens_fitted(page, svg)
    before = node.bounding_box()
    assert before is not None and abs(svg.evaluate(SCALE) - 1) < 0.01, "actual size"

    # The wheel zooms in around the pointer: what is under it stays under it.
    box = svg.bounding_box()
    x, y = box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.5
    under = page.evaluate(UNDER, [svg.element_handle(), x, y])
    page.mouse.move(x, y)
    page.mouse.wheel(0, -400)
    page.wait_for_function("frame => Number(frame.dataset.scale) > 1.2", arg=frame.element_handle())
    zoomed = svg.evaluate(SCALE)
    assert zoomed > 1.2
    after = page.evaluate(UNDER, [svg.element_handle(), x, y])
    assert abs(after[0] - under[0]) * zoomed < 1.5 and abs(after[1] - under[1]) * zoomed < 1.5
    assert page.evaluate("window.scrollY") == 0, "the wheel zooms, it does not scroll the page"
    found = svg.evaluate(GEOMETRY)
    assert found["edges"] > 0 and found["crossed"] == 0, found["crossings"]
    page.screenshot(path=str(shots / "7-graph-zoomed.png"))

    # Dragging pans: every box moves with the pointer, the scale stays.
    start = node.bounding_box()
    _drag(page, (x, y), (x - 120, y - 40))
    moved = node.bounding_box()
    assert abs(moved["x"] - (start["x"] - 120)) < 1 and abs(moved["y"] - (start["y"] - 40)) < 1
    assert abs(svg.evaluate(SCALE) - zoomed) < 1e-6
    assert svg.evaluate(GEOMETRY)["crossed"] == 0

    # The buttons, from the keyboard: zoom out, then back to actual size from the top left.
    page.get_by_role("button", name="zoom out").first.focus()
    page.keyboard.press("Enter")
    assert abs(svg.evaluate(SCALE) - zoomed * 0.8) < 0.01
    page.get_by_role("button", name="actual size, from the top left").first.focus()
    page.keyboard.press("Enter")
    reset = node.bounding_box()
    assert abs(svg.evaluate(SCALE) - 1) < 0.01
    assert abs(reset["x"] - before["x"]) < 0.5 and abs(reset["y"] - before["y"]) < 0.5
    page.get_by_role("button", name="fit the whole graph").first.click()
    _assert_every_node_inside(svg)
    fitted_scale = svg.evaluate(SCALE)
    assert fitted_scale < 1, "the whole graph is larger than its frame"
    svg.focus()
    page.keyboard.press("+")
    assert abs(svg.evaluate(SCALE) - 1.25 * fitted_scale) < 0.01, "+ on the drawing zooms in"
    page.keyboard.press("0")
    assert abs(svg.evaluate(SCALE) - 1) < 0.01
    watched.clean()


def test_a_run_of_the_demo_opens_to_its_facets(
    watched: Watched, server: Server, shots: Path
) -> None:
    """From a dataset's latest runs to a run: its facets, folded, open to the JSON the
    captured events gave (the latest of each); the dataset page shows the dataset's facets."""
    captured = [json.loads(line) for line in CAPTURED.read_text("utf-8").splitlines() if line]
    page = watched.page
    page.goto(server.url + "/", wait_until="load")
    page.fill("#dataset-search", "lake/sales")
    page.locator("table.datasets tbody tr:visible a").click()
    page.wait_for_load_state("load")
    assert page.locator("h2:text-is('Facets') + p.note a").count() == 1, "names its run"
    page.locator("table.history a[href^='/run?']").first.click()
    page.wait_for_load_state("load")
    run_id = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)["id"][0]
    events = [item for item in captured if item["run"]["runId"] == run_id]
    assert events, "a run of the captured demo"
    latest: dict[str, Any] = {}
    for item in sorted(events, key=lambda item: item["eventTime"]):
        latest.update(item["run"].get("facets") or {})
    assert latest, "the demo's runs have run facets"
    facets = page.locator("details.facet")
    assert facets.count() >= len(latest)
    for name, value in latest.items():
        folded = page.locator(f"details.facet:has(summary code:text-is('{name}'))").first
        assert not folded.locator("pre").is_visible(), "folded until asked"
        folded.locator("summary").click()
        assert json.loads(folded.locator("pre").inner_text()) == value, name
    page.screenshot(path=str(shots / "8-run-facets.png"), full_page=True)
    watched.clean()
