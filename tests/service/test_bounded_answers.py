"""An impact or provenance answer of a whole dataset is bounded: the answer page of one with
more runs than it draws (``ANSWER_RUNS``) lists a page of them with their counts and links to
the others, and the JSON API answers a page at a time (``limit``, ``cursor``) with the totals.
Held against the whole answer the command line gives, over the real server."""

from __future__ import annotations

import datetime as dt
import html
import json
import random
import re
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import ImpactQuery, Lineage, ProvenanceQuery, ingest
from openlineage_subset.service._answer_runs import ANSWER_RUNS
from openlineage_subset.service._paging import DEFAULT_LIMITS, MAX_LIMIT
from tests.lineage.events import LAKE, pipeline_history, write_events
from tests.service.conftest import Server
from tests.service.helpers import fetch, page_path

DAYS = 60
"""Days of the pipeline: the impact of the whole ``raw`` is 239 runs, the provenance of the
whole ``clean`` 180 runs behind 60 writers: more than a page draws and than the API's
default limits."""
_RUN_CELL = re.compile(r'<td class="id"><a href="[^"]*">([^<]+)</a></td>')
_NEXT = re.compile(r'([\d,]+) more runs: <a href="([^"]+)"')


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("bounded")
    db = folder / "lineage.db"
    events = pipeline_history(days=DAYS)
    assert ingest([write_events(folder / "events.jsonl", events)], db).invalid == 0
    return str(db)


def _behind(tree: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each run behind a provenance answer's target (its JSON), once: where it was followed
    back (not ``repeated``), the latest ended first."""
    found: dict[str, dict[str, Any]] = {}
    todo = list(tree["writers"])
    while todo:
        step = todo.pop()
        known = found.get(step["runId"])
        if known is None or (known["repeated"] and not step["repeated"]):
            found[step["runId"]] = step
        todo += [writer for read in step["inputs"] for writer in read["writers"]]
    order = sorted(found.values(), key=lambda step: (step["endedAt"], step["runId"]), reverse=True)
    return {step["runId"]: step for step in order}


@pytest.fixture(scope="module")
def whole(history: str) -> dict[str, Any]:
    """The whole answers, as the command line's JSON gives them, and the runs behind the
    provenance's target."""
    with Lineage(history) as lineage:
        impact = lineage.impact(ImpactQuery("raw")).as_json()
        provenance = lineage.provenance(ProvenanceQuery("clean")).as_json()
    return {"impact": impact, "provenance": provenance, "behind": _behind(provenance)}


def _pages(server: Server, path: str) -> tuple[list[str], list[str]]:
    """The run ids each answer page lists, following its "more runs" link from ``path``, and
    the pages' texts."""
    ids: list[str] = []
    texts: list[str] = []
    while path:
        status, _, text = fetch(server, path)
        assert status == 200, text
        texts.append(text)
        ids += _RUN_CELL.findall(text)
        more = _NEXT.search(text)
        path = html.unescape(more.group(2)) if more else ""
        assert len(texts) < 20, "the pages end"
    return ids, texts


def test_the_impact_page_of_a_whole_dataset_lists_a_page_of_runs_and_counts_them(
    serve: Callable[..., Server], history: str, whole: dict[str, Any]
) -> None:
    server = serve(db=history)
    runs = [item["runId"] for item in whole["impact"]["runs"]]
    assert len(runs) > ANSWER_RUNS
    status, _, first = fetch(server, page_path("/answer", namespace="file", name=f"{LAKE}/raw"))
    assert status == 200, first
    listed = _RUN_CELL.findall(first)
    assert listed == runs[:ANSWER_RUNS], "the first runs, in the answer's order"
    definite = sum(item["label"] == "definite" for item in whole["impact"]["runs"])
    assert f"{len(runs):,} runs affected: {definite:,} definite" in first
    more = _NEXT.search(first)
    assert more is not None and int(more.group(1).replace(",", "")) == len(runs) - ANSWER_RUNS
    assert "<svg" not in first, "no graph of hundreds of runs"
    assert "/api/v1/impact?dataset=" in first, "where the whole answer is"
    ids, texts = _pages(server, page_path("/answer", namespace="file", name=f"{LAKE}/raw"))
    assert ids == runs, "every run once, in order, over the pages"
    assert all(len(_RUN_CELL.findall(text)) <= ANSWER_RUNS for text in texts)
    assert "the 100 runs before" in texts[-1]


def test_the_provenance_page_of_a_whole_dataset_lists_a_page_of_the_runs_behind_it(
    serve: Callable[..., Server], history: str, whole: dict[str, Any]
) -> None:
    server = serve(db=history)
    behind = whole["behind"]
    assert len(behind) > ANSWER_RUNS
    path = page_path("/answer", namespace="file", name=f"{LAKE}/clean", query="provenance")
    ids, texts = _pages(server, path)
    assert ids == list(behind), "every run once, the latest ended first, over the pages"
    assert (
        f"{len(behind):,} runs behind it, of which {len(whole['provenance']['writers'])}"
        in (texts[0])
    )
    assert len(_RUN_CELL.findall(texts[0])) == ANSWER_RUNS


def test_an_answer_page_out_of_its_runs_is_a_400(
    serve: Callable[..., Server], history: str
) -> None:
    server = serve(db=history)
    path = page_path("/answer", namespace="file", name=f"{LAKE}/raw", start="5000")
    status, _, text = fetch(server, path)
    assert status == 400
    assert "start is the place of the first run listed, from 0 to 238" in html.unescape(text)


def _api_pages(server: Server, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    pages = []
    cursor = None
    while True:
        asked = {**params, **({"cursor": cursor} if cursor else {})}
        status, answer = server.get(f"/api/v1/{query}?{urllib.parse.urlencode(asked, True)}")
        assert status == 200, answer
        pages.append(answer)
        cursor = answer["next"]
        if cursor is None:
            return pages
        assert len(pages) < 100, "the cursors end"


def test_the_impact_api_pages_its_runs_and_gives_the_totals(
    serve: Callable[..., Server], history: str, whole: dict[str, Any]
) -> None:
    server = serve(db=history)
    expected = whole["impact"]
    status, first = server.get("/api/v1/impact?dataset=raw")
    assert status == 200, first
    assert len(first["runs"]) == DEFAULT_LIMITS["impact"] < len(expected["runs"])
    assert first["limit"] == DEFAULT_LIMITS["impact"]
    definite = sum(item["label"] == "definite" for item in expected["runs"])
    assert first["total"] == {
        "runs": len(expected["runs"]),
        "definite": definite,
        "possible": len(expected["runs"]) - definite,
        "tasks": len(expected["tasks"]),
        "backfill": [
            {
                "dataset": part["dataset"],
                "whole": part["whole"],
                "definite": len(part["definite"]),
                "possible": len(part["possible"]),
            }
            for part in expected["backfill"]
        ],
    }
    pages = _api_pages(server, "impact", {"dataset": "raw", "limit": "40"})
    assert all(len(page["runs"]) <= 40 for page in pages) and len(pages) == 6
    assert [run for page in pages for run in page["runs"]] == expected["runs"]
    assert [task for page in pages for task in page["tasks"]] == expected["tasks"]
    for page in pages:  # what a page says besides its runs is the whole answer's
        assert {key: page[key] for key in ("query", "start", "since", "depth", "seen")} == {
            key: expected[key] for key in ("query", "start", "since", "depth", "seen")
        }
    # Every page's plan together, each partition at its strongest, is the whole plan.
    found: dict[tuple[str, str | None], str] = {}
    for page in pages:
        for part in page["backfill"]:
            for label in ("definite", "possible"):
                for item in part[label]:
                    key = (part["dataset"]["name"], item["identifier"])
                    found[key] = "definite" if "definite" in (label, found.get(key)) else label
    assert found == {
        (part["dataset"]["name"], item["identifier"]): label
        for part in expected["backfill"]
        for label in ("definite", "possible")
        for item in part[label]
    }


def test_the_provenance_api_pages_the_runs_behind_it_and_gives_the_totals(
    serve: Callable[..., Server], history: str, whole: dict[str, Any]
) -> None:
    server = serve(db=history)
    expected, behind = whole["provenance"], whole["behind"]
    pages = _api_pages(server, "provenance", {"dataset": "clean", "limit": "40"})
    assert [len(page["runs"]) for page in pages] == [40, 40, 40, 40, 20]
    runs = [run for page in pages for run in page["runs"]]
    assert [run["runId"] for run in runs] == list(behind), "each once, the latest ended first"
    latest = {step["runId"]: step["label"] for step in expected["writers"]}
    for run in runs:  # each as the answer followed it back, its inputs' writers by run id
        step = behind[run["runId"]]
        assert run["latestWriter"] == latest.get(run["runId"])
        assert {key: run[key] for key in run if key not in ("inputs", "latestWriter")} == {
            key: step[key] for key in step if key not in ("inputs", "repeated")
        }
        assert run["inputs"] == [
            {
                **read,
                "writers": [
                    {"runId": writer["runId"], "label": writer["label"]}
                    for writer in read["writers"]
                ],
            }
            for read in step["inputs"]
        ]
    assert pages[0]["total"] == {
        "runs": len(behind),
        "writers": len(expected["writers"]),
        "target": {
            "dataset": expected["target"]["dataset"],
            "whole": None,
            "definite": len(expected["target"]["definite"]),
            "possible": 0,
        },
    }
    # The whole dataset asked about is its target, not each of its partitions listed.
    assert pages[0]["target"] == {**expected["target"], "whole": "definite", "definite": []}
    status, first = server.get("/api/v1/provenance?dataset=clean")
    assert status == 200 and len(first["runs"]) == DEFAULT_LIMITS["provenance"]


def test_a_cursor_is_the_same_however_the_events_arrived(
    serve: Callable[..., Server], tmp_path: Path, history: str
) -> None:
    events = pipeline_history(days=DAYS)
    random.Random(38).shuffle(events)
    shuffled = tmp_path / "shuffled.db"
    assert ingest([write_events(tmp_path / "events.jsonl", events)], shuffled).invalid == 0
    ordered, other = serve(db=history), serve(db=str(shuffled))
    for query, dataset in (("impact", "raw"), ("provenance", "clean")):
        path = f"/api/v1/{query}?dataset={dataset}&limit=9"
        first = [server.get(path)[1] for server in (ordered, other)]
        assert first[0] == first[1]
        second = [server.get(f"{path}&cursor={first[0]['next']}")[1] for server in (ordered, other)]
        assert second[0] == second[1] and second[0]["next"] != first[0]["next"]


BAD_PAGES = [
    ("/api/v1/impact?dataset=raw&cursor=abc", "cursor 'abc' is not a cursor of this server"),
    ("/api/v1/impact?dataset=raw&cursor=%FF%FE", "is not a cursor of this server"),
    ("/api/v1/provenance?dataset=clean&cursor=W10", "is not a cursor of this server"),
    (
        "/api/v1/impact?dataset=raw&limit=0",
        f"limit must be a whole number from 1 to {MAX_LIMIT}",
    ),
    ("/api/v1/impact?dataset=raw&limit=ten", "the default is 50), got 'ten'"),
    ("/api/v1/provenance?dataset=clean&limit=1001", "(the runs of a page; the default"),
    ("/api/v1/impact?dataset=raw&limit=2&limit=3", "'limit' is given more than once"),
]
"""A malformed cursor or limit, and words of the 400 that says what to do."""


def test_a_bad_cursor_or_limit_is_a_400_saying_what_to_do(
    serve: Callable[..., Server], history: str
) -> None:
    server = serve(db=history)
    for path, words in BAD_PAGES:
        status, answer = server.get(path)
        assert status == 400, (path, answer)
        assert words in answer["error"], path


def test_a_cursor_of_another_question_is_a_400(serve: Callable[..., Server], history: str) -> None:
    server = serve(db=history)
    _, first = server.get("/api/v1/impact?dataset=raw&limit=5")
    for other in ("/api/v1/impact?dataset=clean", "/api/v1/provenance?dataset=raw"):
        status, answer = server.get(f"{other}&cursor={first['next']}")
        assert status == 400, answer
        assert "is a cursor of another question" in answer["error"]
        assert "pass the 'next' of the page before unchanged" in answer["error"]


def test_a_page_of_the_api_is_a_bounded_number_of_bytes(
    serve: Callable[..., Server], history: str, whole: dict[str, Any]
) -> None:
    server = serve(db=history)
    for query, dataset in (("impact", "raw"), ("provenance", "clean")):
        request = f"{server.url}/api/v1/{query}?dataset={dataset}"
        with urllib.request.urlopen(request, timeout=30) as answer:
            size = len(answer.read())
        everything = len(json.dumps(whole[query], separators=(",", ":")))
        assert size < everything / 2, (query, size, everything)


def test_a_whole_dataset_answer_past_the_servers_limit_is_a_422_before_it_is_worked_out(
    serve: Callable[..., Server], history: str
) -> None:
    """``--max-whole-answer 100``: a question about the whole of a dataset that starts from
    more than 100 of its reads (impact), writes or partitions (provenance), reads and writes
    (history) or partitions is refused, saying how to ask instead; one about partitions of
    it, from a later time, or within the limit is answered as always. ``clean`` is read and
    written twice a day (120 each), ``raw`` once (60)."""
    server = serve("--max-whole-answer", "100", db=history)
    clean, raw = f"{LAKE}/clean", f"{LAKE}/raw"
    late = (dt.date(2024, 10, 1) + dt.timedelta(days=DAYS - 5)).isoformat()
    refused = [
        ("impact", {"dataset": clean}),
        ("provenance", {"dataset": clean}),
        ("provenance", {"dataset": raw}),  # 60 writes, 180 partitions (each looked for)
        ("history", {"dataset": raw}),
        ("partitions", {"dataset": raw}),
    ]
    for query, params in refused:
        status, answer = server.get(f"/api/v1/{query}?{urllib.parse.urlencode(params)}")
        assert status == 422, (query, answer)
        assert f"{query} of the whole of file:{params['dataset']}: its" in answer["error"]
        assert "more than 100" in answer["error"] and "ask about partitions" in answer["error"]
    # What these load, each read and write once, is at most 100: see the test below.
    answered = [
        ("impact", {"dataset": clean, "since": late}),  # no read from then on (120 before)
        ("impact", {"dataset": clean, "partition": f"day={late}"}),
        ("impact", {"dataset": raw, "partition": f"day={late}"}),
        ("provenance", {"dataset": f"{LAKE}/rolling", "partition": f"day={late}"}),
        ("history", {"dataset": clean, "partition": f"day={late}"}),
    ]
    for query, params in answered:
        status, answer = server.get(f"/api/v1/{query}?{urllib.parse.urlencode(params)}")
        assert status == 200, (query, params, answer)
    status, _, page = fetch(server, page_path("/answer", namespace="file", name=clean))
    assert status == 422, page
    assert "ask about partitions of it, from a later since," in html.unescape(page)
    partition = json.dumps({"day": late})
    status, _, page = fetch(server, page_path("/answer", namespace="file", name=clean, p=partition))
    assert status == 200, page


def test_an_answer_that_fans_out_past_the_servers_limit_is_a_422_however_little_it_starts_from(
    serve: Callable[..., Server], history: str, whole: dict[str, Any]
) -> None:
    """The impact of the whole of ``raw`` starts from its 60 reads, within ``--max-whole-answer
    100``, and reaches what its readers wrote and their readers: hundreds of reads and
    writes; the partitions of ``clean``, 60, are worked out from its 120 writes and 120 reads.
    Both are given up on once they have loaded 100 (a 422 saying how to ask instead); what
    loads fewer is answered as the command line answers it."""
    server = serve("--max-whole-answer", "100", db=history)
    assert len(whole["impact"]["runs"]) > 100
    fanned = [
        ("impact", {"dataset": f"{LAKE}/raw"}),
        ("partitions", {"dataset": f"{LAKE}/clean"}),
    ]
    for query, params in fanned:
        status, answer = server.get(f"/api/v1/{query}?{urllib.parse.urlencode(params)}")
        assert status == 422, (query, answer)
        assert "loads reads and writes of runs more than 100 times" in answer["error"], answer
        assert "ask about fewer partitions, with a smaller depth" in answer["error"]
    status, _, page = fetch(server, page_path("/answer", namespace="file", name=f"{LAKE}/raw"))
    assert status == 422, page
    assert "loads reads and writes of runs more than 100 times" in html.unescape(page)
    late = (dt.date(2024, 10, 1) + dt.timedelta(days=DAYS - 5)).isoformat()
    status, answer = server.get(
        f"/api/v1/impact?dataset={LAKE}/raw&partition=day={late}&limit=1000"
    )
    assert status == 200, answer
    with Lineage(history) as lineage:
        expected = lineage.impact(ImpactQuery("raw", {"day": late})).as_json()
    assert [run["runId"] for run in answer["runs"]] == [run["runId"] for run in expected["runs"]]
