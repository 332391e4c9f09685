"""The lineage report in a real headless Chromium: it loads clean, fetches nothing, runs no
markup from the events, and its screenshot shows the partition grid in the report's colours.
The run graph is measured as Chromium lays it out: no edge passes through a box it does not
connect, every label fits its box in the real font, and long names still tell boxes apart.
Screenshots are saved in the ``artifacts`` folder (see conftest)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import impact, ingest
from tests.browser.helpers import GEOMETRY
from tests.lineage.events import (
    HOSTILE_NAME,
    LAKE,
    WIDE_PREFIX,
    pipeline_history,
    wide_pipeline,
    write_events,
)

AFFECTED = (215, 48, 31)  # #d7301f, the page's colour of an affected cell
KNOWN = (238, 238, 238)  # #eeeeee
START = {"day": "2024-10-05", "country": "DE"}
PAGES = {
    "impact": ["raw", *(f"--partition={k}={v}" for k, v in START.items())],
    "provenance": [f"{LAKE}/{HOSTILE_NAME}", "--provenance"],
    "overview": [],
}
"""The report's three pages, by the arguments that ask for them."""


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("report")
    events = write_events(folder / "events.jsonl", pipeline_history())
    db = str(folder / "lineage.db")
    assert ingest([events], db).invalid == 0
    for name, query in PAGES.items():
        out = str(folder / f"{name}.html")
        assert main(["lineage", "report", *query, "--db", db, "--html", out]) == 0
    wide = write_events(folder / "wide.jsonl", wide_pipeline())
    assert ingest([wide], str(folder / "wide.db")).invalid == 0
    out = str(folder / "wide.html")
    assert main(["lineage", "report", "--db", str(folder / "wide.db"), "--html", out]) == 0
    return folder, db


def _open(browser: Any, path: Path) -> tuple[Any, dict[str, list[str]]]:
    seen: dict[str, list[str]] = {"console": [], "errors": [], "requests": [], "dialogs": []}
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("console", lambda message: seen["console"].append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.goto(path.as_uri(), wait_until="load")
    return page, seen


@pytest.mark.parametrize("name", list(PAGES))
def test_the_page_loads_clean_and_fetches_nothing(
    browser: Any, report_page: tuple[Path, str], name: str
) -> None:
    path = report_page[0] / f"{name}.html"
    page, seen = _open(browser, path)
    try:
        assert seen["console"] == [], "no console message at all: no error, no CSP report"
        assert seen["errors"] == [] and seen["dialogs"] == []
        assert seen["requests"] == [path.as_uri()], "the page alone, nothing else"
        assert page.locator("script, img, iframe").count() == 0
        assert f"file:{LAKE}/{HOSTILE_NAME}" in page.inner_text("body")
        assert page.locator("table.grid").count() >= 3
        assert page.locator("svg.run-graph g.node").first.is_visible()
    finally:
        page.close()


def test_the_grid_shows_the_answer(
    browser: Any, report_page: tuple[Path, str], artifacts: Path
) -> None:
    path, db = report_page[0] / "impact.html", report_page[1]
    answer = impact(db, "raw", partition=START)
    page, _ = _open(browser, path)
    try:
        assert page.title().startswith(f"Impact of file:{LAKE}/raw, partition(s) ")
        runs = page.locator("svg.run-graph g.node.run")
        assert runs.count() == len(answer.runs)
        assert runs.first.is_visible()

        grid = page.locator(f'table.grid[data-dataset="file:{LAKE}/raw"]')
        assert grid.is_visible()
        cell = grid.locator("td.affected")
        assert cell.count() == 1, "the starting partition is the one affected cell of raw"
        assert cell.evaluate("td => getComputedStyle(td).backgroundColor") == f"rgb{AFFECTED}"
        assert "day=2024-10-05, country=DE" in cell.get_attribute("title")
        readers = grid.locator("td.read").first.get_attribute("title")
        assert "read by tests.clean run" in readers

        image_api = pytest.importorskip("PIL.Image", reason="Pillow reads the screenshot")
        shot = artifacts / "impact-grid.png"
        grid.screenshot(path=str(shot))
        image = image_api.open(io.BytesIO(shot.read_bytes())).convert("RGB")
        colours = image.getcolors(maxcolors=1 << 16) or []
        counted = {colour: count for count, colour in colours}
        # A cell is 16 by 16 pixels: one affected cell, and the known cells around it.
        assert counted.get(AFFECTED, 0) >= 14 * 14
        assert counted.get(KNOWN, 0) >= 20 * 14 * 14
    finally:
        page.close()


@pytest.mark.parametrize("name", [*PAGES, "wide"])
def test_no_edge_crosses_a_box_and_every_label_fits(
    browser: Any, report_page: tuple[Path, str], artifacts: Path, name: str
) -> None:
    path = report_page[0] / f"{name}.html"
    page, seen = _open(browser, path)
    try:
        assert seen["requests"] == [path.as_uri()] and seen["console"] == []
        graph = page.locator("svg.run-graph")
        found = graph.evaluate(GEOMETRY)
        assert found["edges"] > 0 and found["points"] > found["edges"]
        assert found["crossed"] == 0, found["crossings"]
        assert found["misfits"] == []
        page.screenshot(path=str(artifacts / f"{name}.png"), full_page=name != "wide")
    finally:
        page.close()


def test_long_names_are_cut_in_the_middle_and_tell_boxes_apart(
    browser: Any, report_page: tuple[Path, str]
) -> None:
    page, _ = _open(browser, report_page[0] / "wide.html")
    try:
        jobs = page.locator("svg.run-graph g.node.job")
        assert jobs.count() == 50
        titles = jobs.locator("text.title").all_text_contents()
        hovers = jobs.locator("title").all_text_contents()
        assert len(set(titles)) == 50, "each job's box reads differently"
        for title, hover in zip(titles, hovers, strict=True):
            full = f"{WIDE_PREFIX}{title[-2:]}"
            assert "\u2026" in title and title.startswith(WIDE_PREFIX[:8])
            assert f"job tests.{full}:" in hover, "the full name on hover"
    finally:
        page.close()
    page, _ = _open(browser, report_page[0] / "impact.html")
    try:
        runs = page.locator("svg.run-graph g.node.run")
        shown = [" / ".join(run.locator("text").all_text_contents()) for run in runs.all()]
        assert len(shown) == len(set(shown)) > 1, shown
    finally:
        page.close()


def test_the_graph_pans_and_zooms_without_scripts(
    browser: Any, report_page: tuple[Path, str], artifacts: Path
) -> None:
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1400, "height": 900}
    )
    try:
        page = context.new_page()
        page.goto((report_page[0] / "wide.html").as_uri(), wait_until="load")
        frame, drawing = page.locator("div.graph"), page.locator("svg.run-graph")
        width = frame.bounding_box()["width"]
        opened = drawing.bounding_box()
        assert opened["width"] <= width + 1, "opens fitted: nothing cut off on the right"
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        page.get_by_label("actual size").check()
        assert drawing.bounding_box()["width"] > 2 * width, "actual size: the frame scrolls"
        frame.evaluate("frame => frame.scrollBy(600, 400)")
        page.get_by_label("fit the width").check()
        fitted = drawing.bounding_box()
        assert fitted["width"] <= width + 1
        page.locator("div.graph").screenshot(path=str(artifacts / "wide-fitted.png"))
        page.get_by_label("half").check()
        assert abs(drawing.bounding_box()["width"] - float(drawing.get_attribute("width")) / 2) < 2
    finally:
        context.close()


def test_grid_axes_are_no_larger_than_their_cells(
    browser: Any, report_page: tuple[Path, str]
) -> None:
    page, _ = _open(browser, report_page[0] / "impact.html")
    try:
        for table in page.locator("table.grid").all():
            head = table.locator("thead").bounding_box()
            cell = table.locator("td").first.bounding_box()
            assert cell["width"] >= 16 and cell["height"] >= 16
            assert head["height"] <= 2 * cell["height"], "the axis is not taller than 2 cells"
    finally:
        page.close()
