"""The subset facet where other producers put it, read leniently: under ``facets.inputSubset`` /
``facets.outputSubset`` (Airflow's all-facets system test) and ``inputFacets.inputSubset`` /
``outputFacets.outputSubset`` (the Go client). ``ingest`` reads it where the spec's place holds
none and says so once per producer; ``validate`` says it is not the spec's place."""

from __future__ import annotations

import copy
import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset import validate
from openlineage_subset.cli import main
from openlineage_subset.lineage import facets_of, impact, ingest
from tests.lineage.alias_events import AIRFLOW, AIRFLOW_PLACES, GO, GO_PLACES, moved, pipeline
from tests.lineage.events import LAKE, day, write_events


def canonical_digest(event: dict[str, Any]) -> str:
    text = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("producer", "places"), [(AIRFLOW, AIRFLOW_PLACES), (GO, GO_PLACES)], ids=["airflow", "go"]
)
def test_an_aliased_facet_is_read_as_the_subset_facet(
    tmp_path: Path, producer: str, places: Any
) -> None:
    events = moved(pipeline(), producer, places)
    db = tmp_path / "lineage.db"
    report = ingest([write_events(tmp_path / "events.jsonl", events)], db)
    assert report.stored == len(events) and report.invalid == 0

    answer = impact(db, f"{LAKE}/raw", partition={"day": "2024-11-03"})
    # Only the aggregation that read that day, definitely; the other read another day.
    assert [(item.run.job_name, item.label) for item in answer.runs] == [("job3", "definite")]
    (plan,) = answer.backfill
    assert plan.dataset.name == f"{LAKE}/agg" and plan.whole is None
    assert [str(item) for item in plan.definite] == ["day=2024-11-03"]

    # One note for the producer: every event with an aliased facet (the START events of the
    # aggregations list their read; the load's START lists its output without one).
    with_facet = sum(
        any(place in item for item in event["inputs"] + event["outputs"] for place, _ in places)
        for event in events
    )
    (note,) = report.notes()
    input_place, output_place = (f"{place}.{key}" for place, key in places)
    assert note.startswith(f"{with_facet} event(s) of producer {producer!r} put the subset facet")
    assert f"{input_place} (read as inputFacets.subset)" in note
    assert f"{output_place} (read as outputFacets.subset)" in note
    assert report.as_json()["notes"] == [note]

    # The digest is the event's as sent, and the condition is kept apart from its facets.
    with sqlite3.connect(db) as connection:
        digests = {row[0] for row in connection.execute("SELECT digest FROM events")}
        kept = [facets_of(row[0]) for row in connection.execute("SELECT facets FROM events")]
    connection.close()
    assert digests == {canonical_digest(event) for event in events}
    assert "Condition" not in json.dumps(kept)

    again = ingest([tmp_path / "events.jsonl"], db)  # read again: nothing changes, still said
    assert again.stored == 0 and again.duplicates == len(events)
    assert again.notes() == report.notes()


def test_the_spec_place_wins_over_an_alias_and_an_invalid_alias_is_not_read(
    tmp_path: Path,
) -> None:
    events = moved(pipeline(), AIRFLOW, AIRFLOW_PLACES)
    # The run of 2024-11-04 also says, in the spec's place, that it read 2024-11-03:
    # that one is read, the alias beside it is not.
    for event in events[6:]:
        facet = copy.deepcopy(event["inputs"][0]["facets"]["inputSubset"])
        facet["inputCondition"] = day("2024-11-03")
        event["inputs"][0]["inputFacets"] = {"subset": facet}
    # The first aggregation's alias is no valid subset facet: not read (a whole read).
    for event in events[4:6]:
        event["inputs"][0]["facets"]["inputSubset"]["inputCondition"] = {"type": "near"}
    db = tmp_path / "lineage.db"
    report = ingest([write_events(tmp_path / "events.jsonl", events)], db)
    assert report.stored == len(events) and report.invalid == 0

    answer = impact(db, f"{LAKE}/raw", partition={"day": "2024-11-04"})
    # job3 read raw whole (its facet unread); job4 read 2024-11-03 (the spec's place)
    assert [(item.run.job_name, item.condition) for item in answer.runs] == [("job3", None)]
    (note,) = report.notes()
    assert "facets.inputSubset, not read: no valid subset facet ($.inputCondition.type" in note


def test_two_alias_keys_that_disagree_are_both_read_and_said_in_one_note(
    tmp_path: Path,
) -> None:
    """An input with ``facets.inputSubset`` for one day and ``inputFacets.inputSubset`` for
    another: reading the first alone answered that nothing read the second day."""
    events = moved(pipeline(), AIRFLOW, AIRFLOW_PLACES)
    for event in events[4:6]:  # the first aggregation: 2024-11-03 here, 2024-11-04 there
        facet = copy.deepcopy(event["inputs"][0]["facets"]["inputSubset"])
        facet["inputCondition"] = day("2024-11-04")
        event["inputs"][0]["inputFacets"] = {"inputSubset": facet}
    db = tmp_path / "lineage.db"
    report = ingest([write_events(tmp_path / "events.jsonl", events)], db)
    assert report.stored == len(events) and report.invalid == 0

    for asked, readers in [("2024-11-03", ["job3"]), ("2024-11-04", ["job3", "job4"])]:
        answer = impact(db, f"{LAKE}/raw", partition={"day": asked})
        assert sorted(item.run.job_name for item in answer.runs) == readers, asked
    (note,) = report.notes()
    assert "facets.inputSubset (read as inputFacets.subset)" in note
    assert "inputFacets.inputSubset (read as inputFacets.subset)" in note
    assert "facets.inputSubset and inputFacets.inputSubset disagree: read as their OR" in note


def test_validate_says_an_aliased_facet_is_not_in_the_spec_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = moved(pipeline(), GO, GO_PLACES)
    read = events[5]  # the first aggregation's COMPLETE: a read and a write, both aliased
    both = copy.deepcopy(read)
    both["inputs"][0]["inputFacets"]["subset"] = both["inputs"][0]["inputFacets"]["inputSubset"]

    lenient = validate(read)
    strict = [str(issue) for issue in validate(read, strict=True)]
    assert lenient == []
    assert strict == [
        "$.inputs[0].inputFacets.inputSubset: a subset facet under inputFacets.inputSubset is "
        "not the spec's place: put it under inputFacets.subset (ol-subset lineage reads it here "
        "only leniently)",
        "$.outputs[0].outputFacets.outputSubset: a subset facet under outputFacets.outputSubset "
        "is not the spec's place: put it under outputFacets.subset (ol-subset lineage reads it "
        "here only leniently)",
    ]
    (beside,) = [
        str(issue) for issue in validate(both, strict=True) if issue.path.startswith("$.inputs")
    ]
    assert beside == (
        "$.inputs[0].inputFacets.inputSubset: a subset facet under inputFacets.inputSubset "
        "beside inputFacets.subset: not the spec's place, and inputFacets.subset is the one "
        "read; remove this one"
    )

    path = str(write_events(tmp_path / "events.jsonl", [read]))
    assert main(["validate", path]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}:1: warning: {strict[0]}"
    assert f"{path}:1: valid" in out
    assert main(["validate", "--strict", path]) == 1
    out = capsys.readouterr().out.splitlines()
    assert f"{path}:1: {strict[0]} [strict]" in out
