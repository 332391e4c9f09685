"""The web UI of ``lineage serve``, over HTTP from the real server: its pages and status codes,
events' names shown as text, a Content-Security-Policy on every response, the API key (as a
cookie from /login) on every page, and new events shown without a restart."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import html
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import dataset_partitions, datasets, impact
from tests.lineage.events import HOSTILE_NAME, LAKE, pipeline_history, run
from tests.service.conftest import Server
from tests.service.helpers import fetch, page_path, post_events

HOSTILE_VALUE = '"><img src=x onerror=alert(2)>'
RAW = {"namespace": "file", "name": f"{LAKE}/raw"}
START = {"day": "2024-10-05", "country": "DE"}


class _Elements(HTMLParser):
    """The elements of a page as a browser parses them: scripts, tags, event handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.scripts: list[str | None] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if tag == "script":
            self.scripts.append(dict(attrs).get("src"))
        self.handlers += [name for name, _ in attrs if name.startswith("on")]


def hostile_run(number: int) -> list[dict[str, Any]]:
    """A run of a job named like markup writing a partition whose value is markup."""
    value = {"type": "partition", "partitions": [{"dimensions": {"country": HOSTILE_VALUE}}]}
    return run(number, 500, 501, writes=[("hostile_parts", value)], job="<script>x()</script>")


@pytest.fixture
def server(serve: Callable[..., Server]) -> Server:
    started = serve()
    post_events(started, pipeline_history() + hostile_run(900))
    return started


def test_the_front_page_lists_the_datasets_most_recently_written_first(server: Server) -> None:
    status, headers, text = fetch(server, "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    links = re.findall(r'<a href="(/dataset\?[^"]*)">', text)
    expected = [item.dataset for item in datasets(server.db).datasets]
    shown = [
        urllib.parse.parse_qs(urllib.parse.urlsplit(html.unescape(link)).query) for link in links
    ]
    assert [(found["namespace"][0], found["name"][0]) for found in shown] == [
        (item.namespace, item.name) for item in expected
    ]
    # The search without a script: a GET form that filters on the server.
    status, _, text = fetch(server, "/?q=ROLL")
    assert status == 200
    listing = text[text.index('<table class="list datasets"') :]  # after the incidents
    assert re.findall(r"<td><a [^>]*>([^<]*)</a>", listing) == [f"file:{LAKE}/rolling"]
    assert 'value="ROLL"' in text and "1 of " in text


def test_names_and_values_from_events_show_as_text(server: Server) -> None:
    pages = [
        "/",
        page_path("/dataset", namespace="file", name=f"{LAKE}/{HOSTILE_NAME}"),
        page_path("/dataset", namespace="file", name=f"{LAKE}/hostile_parts"),
        page_path("/answer", namespace="file", name=f"{LAKE}/hostile_parts"),
        page_path("/answer", namespace="file", name=f"{LAKE}/hostile_parts", query="provenance"),
        page_path("/run", id="00000000-0000-4000-8000-000000000900"),
        "/runs",
    ]
    for path in pages:
        status, _, text = fetch(server, path)
        assert status == 200, path
        elements = _Elements()
        elements.feed(text)
        assert elements.scripts == ["/static/ui.js"], path
        assert "img" not in elements.tags, path
        assert elements.handlers == [], path
    _, _, text = fetch(server, pages[2])
    assert html.escape(HOSTILE_VALUE, quote=True) in text, "the value, escaped, in its cell"
    _, _, text = fetch(server, pages[5])
    assert "&lt;script&gt;x()&lt;/script&gt;" in text, "the job name, escaped"


def test_every_ui_response_sends_a_content_security_policy(server: Server) -> None:
    paths = [
        "/",
        "/?q=raw",
        page_path("/dataset", **RAW),
        page_path("/answer", **RAW, p=json.dumps(START)),
        page_path("/answer", **RAW, query="provenance", ask="day=2024-10-05"),
        page_path("/answer", **RAW, ask="dayy=2024-10-05"),
        page_path("/dataset", namespace="file", name="nowhere"),
        "/runs",
        page_path("/run", id="no such run"),
        "/login",
        "/static/ui.js",
        "/static/ui.css",
        "/static/missing.js",
    ]
    for path in paths:
        _, headers, _ = fetch(server, path)
        policy = headers["Content-Security-Policy"] or ""
        rules = dict(rule.strip().partition(" ")[::2] for rule in policy.split(";"))
        assert rules["default-src"] == "'self'", path
        assert rules["script-src"] == "'self'", path
        assert "unsafe" not in policy, path
        assert rules["frame-ancestors"] == "'none'", path
        assert headers["X-Content-Type-Options"] == "nosniff", path


def test_the_report_style_is_allowed_by_its_hash(server: Server) -> None:
    _, headers, text = fetch(server, page_path("/answer", **RAW, p=json.dumps(START)))
    styles = re.findall(r"<style>(.*?)</style>", text, flags=re.DOTALL)
    assert styles, "the report's graph and grids come with their style"
    for style in styles:
        digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in headers["Content-Security-Policy"]


def test_the_answer_gives_the_backfill_plan_of_impact(server: Server) -> None:
    status, _, text = fetch(server, page_path("/answer", **RAW, p=json.dumps(START)))
    assert status == 200
    expected = impact(server.db, f"{LAKE}/raw", partition=START, namespace="file")
    blocks = [html.unescape(block) for block in re.findall(r"<pre[^>]*>(.*?)</pre>", text, re.S)]
    plan = next(block for block in blocks if block.startswith("{"))
    assert json.loads(plan) == {"backfill": expected.as_json()["backfill"]}
    listed = next(block for block in blocks if block.startswith("# impact of"))
    for part in expected.backfill:
        assert str(part.dataset) in listed
        for item in part.definite:
            assert f"  definite {item}" in listed.splitlines()


def test_several_selected_partitions_get_one_plan_each_and_a_merged_one(server: Server) -> None:
    other = {"day": "2024-10-06", "country": "PL"}
    selected = [json.dumps(START), json.dumps(other)]
    status, _, text = fetch(server, page_path("/answer", **RAW, p=selected))
    assert status == 200
    assert text.count('<section class="answer"') == 2
    blocks = [html.unescape(block) for block in re.findall(r"<pre[^>]*>(.*?)</pre>", text, re.S)]
    merged = json.loads(next(block for block in blocks if block.startswith("{")))
    wanted: dict[tuple[str, str], set[str]] = {}
    for partition in (START, other):
        for part in impact(server.db, f"{LAKE}/raw", partition=partition).backfill:
            key = (part.dataset.namespace, part.dataset.name)
            wanted.setdefault(key, set()).update(str(item) for item in part.definite)
    got = {
        (item["dataset"]["namespace"], item["dataset"]["name"]): {
            entry["identifier"] for entry in item["definite"]
        }
        for item in merged["backfill"]
    }
    assert got == wanted


def test_an_unknown_partition_column_names_the_columns_and_an_unseen_value_says_so(
    server: Server,
) -> None:
    status, _, text = fetch(server, page_path("/answer", **RAW, ask="dayy=2024-10-05"))
    assert status == 400
    shown = html.unescape(re.sub(r"<[^>]*>", "", text))
    assert "has no partition column 'dayy' (did you mean 'day'?)" in shown
    assert "its partition columns are day, country" in shown
    clean = {"namespace": "file", "name": f"{LAKE}/clean"}
    status, _, text = fetch(server, page_path("/answer", **clean, ask="day=2031-01-01"))
    assert status == 200
    assert re.search(r'<p class="unseen">No recorded run read or wrote it', text)


@pytest.mark.parametrize(
    "asked",
    [
        {"ask": "day=2024-10-05, day=2024-10-06"},
        {"p": '{"day": "2024-10-05", "day": "2024-10-06"}'},
    ],
    ids=["ask", "p"],
)
def test_a_column_given_twice_is_refused_not_read_as_its_last_value(
    server: Server, asked: dict[str, str]
) -> None:
    status, _, text = fetch(server, page_path("/answer", **RAW, **asked))
    assert status == 400
    shown = html.unescape(re.sub(r"<[^>]*>", "", text))
    assert "day" in shown and "2024-10-06" in shown
    assert "twice" in shown or "more than once" in shown


def test_the_dataset_page_draws_each_known_partition_once(server: Server) -> None:
    status, _, text = fetch(server, page_path("/dataset", **RAW))
    assert status == 200
    values = [html.unescape(v) for v in re.findall(r'name="p" value="([^"]*)"', text)]
    known = dataset_partitions(server.db, f"{LAKE}/raw", namespace="file").partitions
    assert len(values) == len(known) == 30
    assert {json.dumps(json.loads(v), sort_keys=True) for v in values} == {
        json.dumps(dict(state.partition.dimensions), sort_keys=True) for state in known
    }
    # What to type for a partition is shown with this dataset's own columns, in their order.
    (example,) = re.findall(r'name="ask"[^>]*placeholder="([^"]*)"', text)
    columns = [name for name, _ in known[-1].partition.dimensions]
    assert [part.split("=")[0] for part in html.unescape(example).split(", ")] == columns
    status, _, _ = fetch(server, page_path("/dataset", namespace="file", name="nowhere"))
    assert status == 404
    status, _, _ = fetch(server, "/dataset")
    assert status == 400


def test_new_events_show_without_a_restart(server: Server) -> None:
    _, _, before = fetch(server, "/")
    assert "arrived_later" not in before
    post_events(server, run(950, 900, 901, writes=[("arrived_later", None)], job="late"))
    _, _, after = fetch(server, "/")
    listing = after[after.index('<table class="list datasets"') :]  # after the incidents
    first = re.search(r"<td><a [^>]*>([^<]*)</a>", listing)
    assert first is not None and first.group(1) == f"file:{LAKE}/arrived_later"


def test_the_api_key_guards_the_ui_and_a_login_sets_a_cookie(
    serve: Callable[..., Server], tmp_path: Path
) -> None:
    server = serve("--api-key", "s3cret")
    status, headers, _ = fetch(server, "/dataset?namespace=file&name=x")
    assert status == 303
    assert headers["Location"] == "/login?next=" + urllib.parse.quote(
        "/dataset?namespace=file&name=x", safe=""
    )
    assert fetch(server, "/static/ui.css")[0] == 200, "the login page needs its style"
    assert fetch(server, "/login")[0] == 200
    assert fetch(server, "/api/v1/datasets")[0] == 401
    assert fetch(server, "/logout", data=b"")[0] == 303

    wrong = urllib.parse.urlencode({"key": "guess", "next": "/runs"}).encode()
    assert fetch(server, "/login", data=wrong)[0] == 401
    right = urllib.parse.urlencode({"key": "s3cret", "next": "/runs"}).encode()
    status, headers, _ = fetch(server, "/login", data=right)
    assert status == 303 and headers["Location"] == "/runs"
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert "s3cret" not in cookie, "the cookie holds a token, not the key"
    pair = cookie.split(";")[0]
    assert fetch(server, "/runs", headers={"Cookie": pair})[0] == 200
    assert fetch(server, "/", headers={"Authorization": "Bearer s3cret"})[0] == 200
    assert fetch(server, "/", headers={"Cookie": "ol_subset_key=forged"})[0] == 303
    # The cookie opens the pages, not the API (which a producer calls with its header).
    assert fetch(server, "/api/v1/datasets", headers={"Cookie": pair})[0] == 401

    away = urllib.parse.urlencode({"key": "s3cret", "next": "//elsewhere.example/"}).encode()
    assert fetch(server, "/login", data=away)[1]["Location"] == "/"


def _big_page(
    days: list[str], countries: list[str], failed: Mapping[Any, Any] | None = None
) -> tuple[str, list[dict[str, str]]]:
    """The dataset page of ``days`` by ``countries`` partitions, none written, and the
    partitions its checkboxes send."""
    from openlineage_subset.lineage import (
        DatasetRef,
        HistoryReport,
        PartitionRef,
        PartitionSet,
        PartitionsReport,
        PartitionState,
    )
    from openlineage_subset.service import _pages

    states = tuple(
        PartitionState(PartitionRef((("day", day), ("country", country))), None, None, 0)
        for day in days
        for country in countries
    )
    dataset = DatasetRef("file", "/lake/big")
    page = _pages.dataset_page(
        dataset,
        None,
        PartitionsReport(dataset, states),
        HistoryReport(PartitionSet(dataset, "definite", (), ()), ()),
        failed=failed,
    ).html
    drawn = [json.loads(html.unescape(v)) for v in re.findall(r'name="p" value="([^"]*)"', page)]
    return page, drawn


def _days(*years: int) -> list[str]:
    first, last = dt.date(min(years), 1, 1), dt.date(max(years), 12, 31)
    return [str(first + dt.timedelta(days)) for days in range((last - first).days + 1)]


def test_years_of_days_by_countries_are_a_calendar_of_checkboxes() -> None:
    from openlineage_subset.report import _picture

    days = _days(2023, 2024)  # as many countries as fit the grid's cells: 8 of 731 days
    countries = [f"C{number:02d}" for number in range(_picture.MAX_CELLS // len(days))]
    assert len(countries) >= 5
    page, drawn = _big_page(days, countries)
    assert len(drawn) == len(days) * len(countries), "every partition is drawn, and once"
    assert {(item["day"], item["country"]) for item in drawn} == {
        (day, country) for day in days for country in countries
    }
    table = re.search(r'<table class="grid"[^>]*>.*?</table>', page, re.S)
    assert table is not None, "the answers' grid, not a plain table"
    # A calendar: a column per day of the month, a band of rows per month (24 of them), a row
    # per country in each band.
    assert re.findall(r'<th scope="col">(\d+)</th>', table.group(0)) == [
        str(day) for day in range(1, 32)
    ]
    months = re.findall(r'<th scope="rowgroup" class="month"[^>]*>([^<]*)</th>', table.group(0))
    assert months == sorted({day[:7] for day in days})
    assert table.group(0).count("<tr") == 1 + len(months) * len(countries)
    assert "row(s) not drawn" not in page and "column(s) not drawn" not in page


def test_a_larger_grid_draws_the_newest_days_and_says_what_it_left_out() -> None:
    from openlineage_subset.report import _picture

    days, countries = _days(2022, 2024), [f"C{number:03d}" for number in range(100)]
    page, drawn = _big_page(days, countries)
    assert 0 < len(drawn) <= _picture.MAX_CELLS
    rows = sorted({item["day"] for item in drawn})
    assert rows == days[-len(rows) :], "the newest days, none skipped"
    assert {item["country"] for item in drawn} == set(countries)
    assert f"{len(days) - len(rows)} row(s) not drawn" in page


def test_a_partition_a_failed_run_wrote_since_its_last_write_is_affected() -> None:
    from openlineage_subset.lineage import RunRef

    days, countries = _days(2024)[:40], ["DE", "PL"]
    failed = RunRef("r-9", "ns", "daily", "FAIL", "2024-03-01T00:00:00Z", "2024-03-01T00:01:00Z")
    page, _ = _big_page(days, countries, {(("country", "PL"), ("day", days[3])): failed})
    cells = re.findall(r'<td class="(\w+)" title="([^"]*)"><label class="pick">', page)
    affected = [title for state, title in cells if state == "affected"]
    assert len(affected) == 1 and "day=2024-01-04, country=PL" in affected[0]
    assert "ns.daily run r-9 may have written it since, and FAIL" in html.unescape(affected[0])
    assert {state for state, _ in cells} == {"affected", "known"}


def test_the_dataset_page_marks_what_a_failed_run_wrote_since_as_affected(server: Server) -> None:
    # tests.rolling fails on its eighth day: its partition of that day is left half written.
    status, _, text = fetch(server, page_path("/dataset", namespace="file", name=f"{LAKE}/rolling"))
    assert status == 200
    cells = {
        json.loads(html.unescape(value))["day"]: state
        for state, value in re.findall(
            r'<td class="(\w+)"[^>]*><label class="pick"><input '
            r'type="checkbox" name="p" value="([^"]*)"',
            text,
        )
    }
    assert len(cells) == 10
    assert cells.pop("2024-10-08") == "affected"
    assert set(cells.values()) <= {"written", "earlier"}, cells
    assert cells["2024-10-10"] == "written", "the latest writer's partition"


@pytest.mark.parametrize("query", ["impact", "provenance"])
def test_an_answer_page_asks_the_database_once_per_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    """The page shows the picture and the answer's text: both from one query per partition,
    however many modules hold the query function."""
    import sys

    from starlette.requests import Request

    from openlineage_subset.lineage import DatasetRef, ingest
    from openlineage_subset.lineage.queries import _impact, _provenance
    from openlineage_subset.service import _ui
    from tests.lineage.events import write_events

    db = str(tmp_path / "lineage.db")
    assert ingest([write_events(tmp_path / "events.jsonl", pipeline_history())], db).invalid == 0
    name = f"{query}_answer"
    original = {"impact": _impact.impact_answer, "provenance": _provenance.provenance_answer}[query]
    calls: list[object] = []

    def counted(store: Any, asked: Any, **bounds: Any) -> Any:
        calls.append(asked.partition)
        return original(store, asked, **bounds)

    for module in list(sys.modules.values()):
        if getattr(module, name, None) is original and module.__name__.startswith(
            "openlineage_subset"
        ):
            monkeypatch.setattr(module, name, counted)
    other = {"day": "2024-10-06", "country": "PL"}
    params = urllib.parse.urlencode(
        {"query": query, "p": [json.dumps(START), json.dumps(other)]}, doseq=True
    )
    request = Request({"type": "http", "query_string": params.encode(), "headers": []})
    serving = _ui.Served(db, None, 1_000)
    page = _ui._answer_page(serving, DatasetRef("file", f"{LAKE}/raw"), request.query_params)
    assert page.status == 200 and page.html.count('<section class="answer"') == 2
    assert calls == [START, other], "one query per partition selected"
