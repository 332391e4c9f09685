"""A run's page links its parent run and the runs it started, both ways: from an action to its
Spark application and back, from a parent no event of which is stored to nothing (said so),
and a parent of more runs than a page lists says how many there are."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from openlineage_subset.lineage import ingest
from tests.lineage.events import event, run_id, write_events

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")

APP, ORPHAN = 1, 2
"""The application run, and a run whose parent was never posted."""
_RUN_LINK = re.compile(r'href="/run\?id=([^"&]+)"')


def _child(number: int, parent: int, minute: float) -> list[dict[str, object]]:
    events = [
        event(number, kind, minute + at, job=f"app.count.t{number}")
        for kind, at in (("START", 0), ("COMPLETE", 0.5))
    ]
    for item in events:
        facet = {
            "_producer": "tests",
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ParentRunFacet.json",
            "run": {"runId": run_id(parent)},
            "job": {"namespace": "tests", "name": "app"},
        }
        item["run"] = {"runId": run_id(number), "facets": {"parent": facet}}
    return events


def _page(db: Path, number: int, query: str | None = None) -> str:
    from openlineage_subset.service import EventSink, _app
    from tests.service.helpers import asgi_call

    sink = EventSink(db)
    try:
        app = _app.make_app(db, sink, max_body=1_000_000)
        status, _, body = asgi_call(app, "GET", f"/run?{query or 'id=' + run_id(number)}")
    finally:
        sink.close()
    assert status == 200, body
    return body.decode("utf-8")


def _children(page: str) -> list[str]:
    """The runs a run's page lists of those it started, in its order (each links twice)."""
    table = page[page.index('<table class="list children">') :]
    return _RUN_LINK.findall(table[: table.index("</table>")])[::2]


def test_a_run_links_its_parent_and_the_parent_its_runs(tmp_path: Path) -> None:
    children = range(10, 10 + 260)  # more than a page lists
    events = [event(APP, "START", 0, job="app")]
    for number in children:
        events += _child(number, APP, number)
    events += _child(ORPHAN, 9999, 1)
    db = tmp_path / "lineage.db"
    assert ingest([write_events(tmp_path / "events.jsonl", events)], db).invalid == 0

    parent_page = _page(db, APP)
    assert f"Runs it started ({len(children)})" in parent_page
    shown = int(re.search(r"(\d+) of (\d+), the newest first", parent_page).group(1))  # type: ignore[union-attr]
    assert 0 < shown < len(children)
    newest = list(reversed(children))
    # Page after page through "Older runs": every run it started, once each, the newest first.
    seen: list[str] = []
    page, pages = parent_page, 0
    while True:
        seen += _children(page)
        older = re.search(r'href="(/run\?id=[^"]+&amp;before=[^"]+)">Older runs', page)
        pages += 1
        if older is None:
            break
        query = html.unescape(older.group(1)).split("?", 1)[1]
        page = _page(db, APP, query)
    assert seen == [run_id(number) for number in newest]
    assert pages == -(-len(children) // shown)
    # A time: the runs started before it.
    cut = newest[100]
    moment = re.search(r"\d{4}-\d{2}-\d{2}T[\d:.]+Z", event(cut, "START", cut)["eventTime"])
    assert moment is not None
    before = _page(db, APP, f"id={run_id(APP)}&before={moment.group(0)}")
    assert _children(before)[0] == run_id(newest[101])

    child_page = _page(db, children[0])
    parent_part = child_page[child_page.index("<dt>parent</dt>") :]
    assert html.unescape(_RUN_LINK.search(parent_part).group(1)) == run_id(APP)  # type: ignore[union-attr]

    orphan_page = _page(db, ORPHAN)
    assert (
        f'<dt>parent</dt><dd>{run_id(9999)} <span class="note">(no event of it in the database)'
        in orphan_page
    )
    assert "Runs it started" not in orphan_page and "Runs it started" not in child_page


def _get(db: Path, path: str) -> str:
    from openlineage_subset.service import EventSink, _app
    from tests.service.helpers import asgi_call

    sink = EventSink(db)
    try:
        status, _, body = asgi_call(_app.make_app(db, sink, max_body=1_000_000), "GET", path)
    finally:
        sink.close()
    assert status == 200, body
    return body.decode("utf-8")


def test_the_runs_page_shows_a_jobs_runs_under_one_parent_as_one_row(tmp_path: Path) -> None:
    events = [event(APP, "START", 0, job="app")]
    for number in range(10, 40):  # thirty batches of one job under the application
        batch = _child(number, APP, number)
        for item in batch:
            item["job"] = {"namespace": "tests", "name": "app.stream.q.batch"}
        events += batch
    events += _child(ORPHAN, 9999, 100)  # the newest: a run of its own job
    db = tmp_path / "lineage.db"
    assert ingest([write_events(tmp_path / "events.jsonl", events)], db).invalid == 0

    page = _get(db, "/runs")
    assert "The latest 32 of 32 run(s)" in page and "in 3 rows" in page
    rows = page[page.index("<tbody>") : page.index("</tbody>")].split("<tr>")[1:]
    assert [_RUN_LINK.findall(row)[0] for row in rows] == [
        run_id(ORPHAN),
        run_id(39),  # the newest batch, standing for the thirty
        run_id(APP),
    ]
    assert f'href="/run?id={run_id(APP)}">the newest of 30 runs under its parent' in rows[1]
    answer = json.loads(_get(db, "/api/v1/runs"))
    assert answer["total"] == answer["shown"] == 32
    assert [item.get("family") for item in answer["runs"]] == [
        None,
        {"parentRunId": run_id(APP), "runs": 30},
        None,
    ]
