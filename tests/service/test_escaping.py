"""One escaping rule for every text ``lineage serve`` shows: a character that does not print
as itself (bidirectional controls, C1 controls, separators) never reaches a page or an answer
raw; it is written as its escape (JSON's ``\\uXXXX`` in JSON), and the JSON still means what it
meant.

The names, values, facets and run ids of the events posted hold U+202E, U+2066, U+009B, U+0085
and U+2028; every page and JSON answer is fetched and read line by line.
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

import pytest

from openlineage_subset import printable
from tests.helpers import PRODUCER
from tests.lineage.events import LAKE, parts, run
from tests.service.conftest import Server
from tests.service.helpers import fetch, page_path, post_events

TRICKS = "\u202e\u2066\x9b\x85\u2028"
NAME = f"sales{TRICKS}<b>"
COLUMN = f"cou{TRICKS}ntry"
VALUE = f"D{TRICKS}E"
JOB = f"job{TRICKS}"
PARTITION = {"day": "2024-10-15", COLUMN: VALUE}


def _events() -> list[dict[str, Any]]:
    written = run(1, 0, 1, writes=[(NAME, parts(PARTITION))], job=JOB)
    read = run(2, 2, 3, reads=[(NAME, parts(PARTITION))], writes=[("out", None)], job="next")
    for event in written:
        event["run"]["facets"] = {
            "note": {"_producer": PRODUCER, "_schemaURL": PRODUCER + "#note", "text": TRICKS}
        }
    return [*written, *read]


@pytest.fixture
def server(serve: Callable[..., Server]) -> Server:
    started = serve()
    post_events(started, _events())
    return started


def raw_characters(text: str) -> list[str]:
    """The characters of ``text`` that do not print as themselves, but line breaks and tabs."""
    return sorted({char for char in text if not char.isprintable() and char not in "\n\t"})


def test_no_page_and_no_answer_holds_a_character_raw(server: Server) -> None:
    dataset = {"namespace": "file", "name": f"{LAKE}/{NAME}"}
    chosen = json.dumps(PARTITION)
    paths = [
        "/",
        page_path("/", q=TRICKS),
        page_path("/dataset", **dataset),
        page_path("/answer", **dataset, p=chosen),
        page_path("/answer", **dataset, p=chosen, query="provenance"),
        page_path("/answer", **dataset, ask=f"day=2024-10-15, {COLUMN}={VALUE}"),
        page_path("/answer", **dataset, query=f"impact{TRICKS}"),  # an error page
        "/runs",
        page_path("/run", id="00000000-0000-4000-8000-000000000001"),
        page_path("/run", id=f"nowhere{TRICKS}"),
        "/api/v1/datasets",
        "/api/v1/runs",
        page_path("/api/v1/impact", dataset=NAME),
        page_path("/api/v1/provenance", dataset=NAME, partition=[f"{COLUMN}={VALUE}"]),
        page_path("/api/v1/history", dataset=NAME),
        page_path("/api/v1/partitions", dataset=NAME),
        page_path("/api/v1/impact", dataset=f"nowhere{TRICKS}"),
        page_path("/api/v1/runs", job=JOB),
    ]
    for path in paths:
        status, _, text = fetch(server, path)
        assert status in (200, 400, 404), (path, status)
        assert raw_characters(text) == [], path
        assert "\\u202e" in text, f"{path}: shows the names, as escapes"
    _, _, text = fetch(server, page_path("/login", next=f"/{TRICKS}"))
    assert raw_characters(text) == []


def test_the_provenance_json_to_copy_is_the_answer_escaped(server: Server) -> None:
    dataset = {"namespace": "file", "name": f"{LAKE}/{NAME}"}
    path = page_path("/answer", **dataset, p=json.dumps(PARTITION), query="provenance")
    status, _, text = fetch(server, path)
    assert status == 200
    blocks = [html.unescape(b) for b in re.findall(r"<pre[^>]*>(.*?)</pre>", text, re.S)]
    shown = next(block for block in blocks if block.startswith("{"))
    partition = "&".join(
        "partition=" + urllib.parse.quote(f"{k}={v}") for k, v in PARTITION.items()
    )
    _, answer = server.get(f"/api/v1/provenance?dataset={urllib.parse.quote(NAME)}&{partition}")
    copied = json.loads(shown)
    # The API pages the runs behind it (each once, not the tree): the rest is the same value.
    assert {key: copied[key] for key in ("query", "target", "depth", "seen")} == {
        key: answer[key] for key in ("query", "target", "depth", "seen")
    }, "the same JSON value"
    assert [step["condition"] for step in copied["writers"]] == [
        run["condition"] for run in answer["runs"] if run["latestWriter"]
    ]
    assert "\\u202e\\u2066\\u009b\\u0085\\u2028" in shown, "as JSON escapes"


def test_a_partition_with_such_characters_is_asked_about_from_its_cell(server: Server) -> None:
    dataset = {"namespace": "file", "name": f"{LAKE}/{NAME}"}
    _, _, text = fetch(server, page_path("/dataset", **dataset))
    (value,) = [html.unescape(v) for v in re.findall(r'name="p" value="([^"]*)"', text)]
    assert json.loads(value) == PARTITION, "the cell's value is the partition's JSON"
    status, _, answer = fetch(server, page_path("/answer", **dataset, p=value))
    assert status == 200, "the checkbox asks about it as it is"
    marks = re.findall(r'<span class="escape">([^<]*)</span>', answer)
    assert "\\u202e" in marks


def test_facets_show_as_marked_json_escapes(server: Server) -> None:
    _, _, text = fetch(server, page_path("/run", id="00000000-0000-4000-8000-000000000001"))
    (facet,) = [
        block
        for block in re.findall(r"<pre>(.*?)</pre>", text, re.S)
        if "&quot;text" in block or '"text"' in block
    ]
    assert '<span class="escape">\\u0085</span>' in facet
    plain = html.unescape(re.sub(r"<[^>]*>", "", facet))
    assert json.loads(plain)["text"] == TRICKS


HOSTILE = "<script>alert(1)</script>\" onmouseover=\"alert(2)' onfocus='alert(3)" + TRICKS
"""Markup, a way out of an attribute in either quotes, a bidirectional override and controls."""
HOSTILE_DATASET = f"sales{HOSTILE}"
HOSTILE_JOB = f"load{HOSTILE}"
HOSTILE_PARTITION = {"day": "2024-10-15", f"cou{HOSTILE}": f"D{HOSTILE}"}


class _Parsed(HTMLParser):
    """A page as a browser parses it: its scripts, event handlers, text and attribute values."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str | None] = []
        self.handlers: list[str] = []
        self.texts: list[str] = []
        self.values: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs).get("src"))
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self.values += [value for _, value in attrs if value is not None]

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


@pytest.fixture
def hostile(serve: Callable[..., Server]) -> Server:
    """A dataset, its partition and the job writing it named with :data:`HOSTILE`; its last
    write failed, so the home page's incidents name them too."""
    started = serve()
    condition = parts(HOSTILE_PARTITION)
    post_events(
        started,
        [
            *run(11, 0, 1, writes=[(HOSTILE_DATASET, condition)], job=HOSTILE_JOB),
            *run(12, 2, 3, reads=[(HOSTILE_DATASET, condition)], writes=[("out", None)]),
            *run(13, 4, 5, writes=[(HOSTILE_DATASET, condition)], job=HOSTILE_JOB, status="FAIL"),
        ],
    )
    return started


def test_a_hostile_name_is_shown_escaped_on_every_page_that_shows_names(hostile: Server) -> None:
    dataset = {"namespace": "file", "name": f"{LAKE}/{HOSTILE_DATASET}"}
    chosen = json.dumps(HOSTILE_PARTITION)
    shows_it = [
        "/",
        page_path("/", q="sales"),
        "/runs",
        page_path("/dataset", **dataset),
        page_path("/dataset", **dataset, p=chosen),
        page_path("/answer", **dataset, p=chosen),
        page_path("/answer", **dataset, p=[chosen, json.dumps({"day": "2024-10-16"})]),
        page_path("/answer", **dataset, p=chosen, query="provenance"),
        *(page_path("/run", id=f"00000000-0000-4000-8000-0000000000{n}") for n in (11, 12, 13)),
    ]
    says_it_back = [  # pages that quote what was asked: a name given in the query
        page_path("/", q=HOSTILE),
        page_path("/dataset", **dataset, before=HOSTILE),
        page_path("/answer", **dataset, ask=f"day={HOSTILE}"),
        page_path("/answer", **dataset, query=HOSTILE),
        page_path("/run", id=HOSTILE),
        page_path("/login", next=f"/{HOSTILE}"),
    ]
    for path in shows_it + says_it_back:
        status, _, text = fetch(hostile, path)
        assert status in (200, 400, 404), (path, status)
        page = _Parsed()
        page.feed(text)
        assert page.scripts == ["/static/ui.js"], path
        assert page.handlers == [], f"{path}: a quote left an attribute"
        assert raw_characters(text) == [], path
        if path in shows_it:  # whole, as text or as an attribute (a cut name: its title)
            whole = printable(HOSTILE)
            assert whole in "".join(page.texts) or any(whole in v for v in page.values), path
            assert '<span class="escape">\\u202e</span>' in text, f"{path}: escapes marked"
