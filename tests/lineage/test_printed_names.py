"""What the tool prints is accepted back, and printed one way: a dataset asked for as every
answer prints it (``file:/tmp/lake/raw_events``, ``s3://bucket/lake/sales``) is found by the
CLI, the Python API and the JSON API; a partition's columns come in the dataset's order (as its
events name them, ``day`` before ``country``) in ``runs``, ``/api/v1/runs`` and the run page as
in every other answer."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import (
    LineageQueryError,
    impact,
    ingest,
    run_details,
    runs,
)
from tests.lineage.events import LAKE, day, run, run_id, write_events

# The dataset's events name day first (identifier day=.../country=...): alphabetically,
# country would come first.
RAW = day("2025-03-02", "FR")
DAY_FIRST = "PARTITION (day = '2025-03-02', country = 'FR')"


def pipeline() -> list[dict[str, Any]]:
    return [
        *run(1, 0, 1, writes=[("raw_events", RAW)], job="load"),
        *run(2, 2, 3, reads=[("raw_events", RAW)], writes=[("daily", day("2025-03-02"))]),
    ]


def in_s3(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with their datasets in the bucket ``s3://lake-bucket`` (key: the name)."""
    events = copy.deepcopy(events)
    for event in events:
        for dataset in event["inputs"] + event["outputs"]:
            dataset["namespace"] = "s3://lake-bucket"
            dataset["name"] = dataset["name"].lstrip("/")
    return events


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "lineage.db"
    events = [*pipeline(), *in_s3(pipeline())]
    report = ingest([write_events(tmp_path / "events.jsonl", events)], path)
    assert report.stored == len(events)
    return path


def test_runs_and_a_run_show_partition_columns_in_the_dataset_order(db: Path) -> None:
    listed = runs(db, job="job2")
    assert [item.condition for one in listed.runs for item in one.inputs] == [DAY_FIRST] * 2
    details = run_details(db, run_id(2))
    assert details is not None
    assert [item.condition for item in details.inputs] == [DAY_FIRST] * 2  # file, s3
    # as the impact answer prints the same read
    (affected,) = impact(db, f"{LAKE}/raw_events").runs
    assert affected.condition == DAY_FIRST


@pytest.mark.parametrize(
    "printed", [f"file:{LAKE}/raw_events", f"s3://lake-bucket{LAKE}/raw_events"]
)
def test_a_dataset_is_found_by_its_printed_name(
    db: Path, printed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = impact(db, printed, partition={"day": "2025-03-02", "country": "FR"})
    assert str(answer.start.dataset) == printed
    assert [item.run.job_name for item in answer.runs] == ["job2"]

    assert main(["lineage", "impact", printed, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Impact of {printed} (whole dataset)")

    # --namespace narrows it as it narrows a plain name: the other namespace finds nothing
    other = "file" if printed.startswith("s3") else "s3://lake-bucket"
    with pytest.raises(LineageQueryError, match="no dataset named"):
        impact(db, printed, namespace=other)


def test_a_printed_name_that_means_two_datasets_says_so(tmp_path: Path) -> None:
    # namespace "file://" prints its /x as file:/x too: two datasets, the answer says which
    events = copy.deepcopy(pipeline())
    for event in events[2:]:
        for dataset in event["outputs"]:
            dataset["namespace"] = "file://"
            dataset["name"] = f"{LAKE}/raw_events"
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    with pytest.raises(LineageQueryError) as raised:
        impact(db, f"file:{LAKE}/raw_events")
    message = str(raised.value)
    assert f"'file:{LAKE}/raw_events' names 2 datasets" in message
    assert f"file {LAKE}/raw_events" in message and f"file:// {LAKE}/raw_events" in message


def test_the_json_api_and_the_run_page_accept_and_print_the_same(db: Path) -> None:
    pytest.importorskip("starlette", reason="the serve extra")
    from openlineage_subset.service import EventSink, _app
    from tests.service.helpers import asgi_call

    sink = EventSink(db)
    try:
        app = _app.make_app(db, sink, max_body=1_000_000)
        query = urlencode({"dataset": f"file:{LAKE}/raw_events"})
        impact_status, _, impact_body = asgi_call(app, "GET", f"/api/v1/impact?{query}")
        runs_status, _, runs_body = asgi_call(app, "GET", "/api/v1/runs?job=job2")
        page_status, _, page = asgi_call(app, "GET", f"/run?id={run_id(2)}")
    finally:
        sink.close()
    assert impact_status == 200, impact_body
    answer = json.loads(impact_body)
    assert answer["start"]["dataset"] == {"namespace": "file", "name": f"{LAKE}/raw_events"}
    assert runs_status == 200
    assert [item["condition"] for item in json.loads(runs_body)["runs"][0]["inputs"]] == [
        DAY_FIRST
    ] * 2
    assert page_status == 200
    text = page.decode()
    assert text.index("day = ") < text.index("country = ")
