"""The lineage report in a real headless Chromium: it loads clean, fetches nothing, runs no
markup from the events, and its screenshot shows the partition grid in the report's colours."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import impact, ingest
from tests.lineage.events import HOSTILE_NAME, LAKE, pipeline_history, write_events

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
    browser: Any, report_page: tuple[Path, str], tmp_path: Path
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
        shot = tmp_path / "grid.png"
        grid.screenshot(path=str(shot))
        image = image_api.open(io.BytesIO(shot.read_bytes())).convert("RGB")
        colours = image.getcolors(maxcolors=1 << 16) or []
        counted = {colour: count for count, colour in colours}
        # A cell is 16 by 16 pixels: one affected cell, and the known cells around it.
        assert counted.get(AFFECTED, 0) >= 14 * 14
        assert counted.get(KNOWN, 0) >= 20 * 14 * 14
    finally:
        page.close()
