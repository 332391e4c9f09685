"""A run's page shows its events' facets (run, job, each dataset), each as the latest event that
has it gave it, escaped; the subset condition is shown as text, not repeated; and what the
database does not hold (events stored before it kept facets, facets over the limit) is said."""

from __future__ import annotations

import base64
import html
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openlineage_subset.lineage import MAX_KEPT_BYTES, facets_of, ingest, kept_facets, run_details
from tests.lineage.events import LAKE, day, run, run_id, write_events
from tests.service.conftest import Server
from tests.service.helpers import fetch, page_path, post_events

BIDI = "\u202e"
FACET = {"_producer": "https://example.com/producer", "_schemaURL": "https://example.com/f.json"}


def _facet(**fields: Any) -> dict[str, Any]:
    return {**FACET, **fields}


def _faceted_run(number: int) -> list[dict[str, Any]]:
    """A run whose START and COMPLETE both carry facets; COMPLETE's error message replaces
    START's, the job facet is only on START, and the written dataset has a schema."""
    start, end = run(number, 0, 1, reads=[("raw", None)], writes=[("daily", day("2024-10-05"))])
    start["run"]["facets"] = {
        "errorMessage": _facet(message="first <b>try</b>", programmingLanguage="python"),
        "parent": _facet(job={"namespace": "tests", "name": "dag"}, run={"runId": run_id(1)}),
    }
    start["job"]["facets"] = {"sql": _facet(query=f"SELECT 1 -- {BIDI}evil")}
    end["run"]["facets"] = {
        "errorMessage": _facet(message="<img src=x onerror=alert(1)>", programmingLanguage="py")
    }
    schema = _facet(fields=[{"name": "amount", "type": "decimal(10,2)"}])
    end["outputs"][0]["facets"] = {"schema": schema}
    return [start, end]


def test_the_run_page_shows_the_latest_of_each_facet_escaped(
    serve: Callable[..., Server],
) -> None:
    server = serve()
    post_events(server, _faceted_run(7))
    status, _, page = fetch(server, page_path("/run", id=run_id(7)))
    assert status == 200
    # the COMPLETE event's error message replaced the START's, escaped
    assert html.escape('"message": "<img src=x onerror=alert(1)>"', quote=False) in page
    assert "first &lt;b&gt;try" not in page
    assert "<img" not in page
    # the parent (only on START) and the job's sql (only on START) are there, bidi marked
    assert "<code>parent</code>" in page and "<code>sql</code>" in page
    assert '<span class="escape">\\u202e</span>evil' in page
    # the written dataset's schema, under a link to the dataset
    assert "decimal(10,2)" in page
    assert html.escape(f"{LAKE}/daily", quote=False) in page
    # the condition is shown once, as text (the grid's SQL-like form), not as facet JSON
    assert "outputCondition" not in page
    assert "2024-10-05" in page


def test_a_run_without_facets_says_so_and_one_stored_before_facets_were_kept_too(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "lineage.db")
    events = run(1, 0, 1, writes=[("raw", None)])
    ingest([write_events(tmp_path / "a.jsonl", events)], db)
    details = run_details(db, run_id(1))
    assert details is not None and details.facets == () and details.facets_not_kept == ()
    with sqlite3.connect(db) as connection:  # as a database of layout 4 left them
        connection.execute("UPDATE events SET facets = NULL")
    details = run_details(db, run_id(1))
    assert details is not None
    assert [event.event_type for event, _ in details.facets_not_kept] == ["START", "COMPLETE"]
    assert all("before this version kept facets" in why for _, why in details.facets_not_kept)


def test_facets_over_the_limit_are_said_not_kept_with_their_size(tmp_path: Path) -> None:
    noise = base64.b64encode(os.urandom(2 * MAX_KEPT_BYTES)).decode()  # does not compress
    start, end = run(1, 0, 1, writes=[("raw", None)])
    end["run"]["facets"] = {"huge": _facet(blob=noise)}
    body = kept_facets(end)
    assert len(body) < 1000
    db = str(tmp_path / "lineage.db")
    assert ingest([write_events(tmp_path / "a.jsonl", [start, end])], db).stored == 2
    details = run_details(db, run_id(1))
    assert details is not None
    ((event, why),) = details.facets_not_kept
    assert event.event_type == "COMPLETE"
    assert f"over the {MAX_KEPT_BYTES} kept" in why
    assert int(why.split()[0]) > MAX_KEPT_BYTES


def test_what_is_kept_is_every_facet_but_the_conditions() -> None:
    _, end = run(1, 0, 1, reads=[("raw", day("2024-10-04"))], writes=[("d", day("x"))])
    end["run"]["facets"] = {"a": _facet(x=1)}
    kept = facets_of(kept_facets(end))
    assert kept is not None
    text = json.dumps(kept)
    assert "Condition" not in text and "2024-10-04" not in text
    assert kept == {"run": end["run"]["facets"]}  # the subset facets held only conditions
    end["inputs"][0]["inputFacets"]["subset"]["note"] = "kept"
    kept = facets_of(kept_facets(end))
    assert kept is not None
    assert kept["inputs"][0]["inputFacets"]["subset"] == {
        key: value
        for key, value in end["inputs"][0]["inputFacets"]["subset"].items()
        if key != "inputCondition"
    }


def test_the_dataset_page_shows_the_facets_its_latest_run_gave(
    serve: Callable[..., Server],
) -> None:
    server = serve()
    first = _faceted_run(7)
    later = run(8, 5, 6, writes=[("daily", day("2024-10-06"))])
    later[1]["outputs"][0]["facets"] = {
        "schema": _facet(fields=[{"name": "amount", "type": "decimal(12,4)"}])
    }
    post_events(server, first + later + run(9, 7, 8, reads=[("daily", None)]))
    status, _, page = fetch(server, page_path("/dataset", namespace="file", name=f"{LAKE}/daily"))
    assert status == 200
    facets = page[page.index("<h2>Facets</h2>") :]
    # run 9 (the latest) gave the dataset no facet: run 8's schema is shown, not run 7's
    assert "decimal(12,4)" in facets and "decimal(10,2)" not in facets
    assert run_id(8) in facets
    status, _, page = fetch(server, page_path("/dataset", namespace="file", name=f"{LAKE}/raw"))
    assert status == 200
    assert "None given by its latest runs." in page[page.index("<h2>Facets</h2>") :]
