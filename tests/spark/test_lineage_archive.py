"""EventArchive (Spark over an event archive) against the embedded database, on the same events.

The same events are written as JSON Lines and as Parquet, ingested whole into SQLite, and asked
the same questions both ways; the answers must be equal to the last field. Generated pipelines
(the oracle test's) add cases nobody wrote by hand; an unrelated pipeline and invalid lines in
the archive check that narrowing leaves out what it should and counts what it skips.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from openlineage_subset.lineage import (
    EventArchive,
    LineageQueryError,
    impact,
    ingest,
    provenance,
)
from tests.lineage.events import (
    HOSTILE_NAME,
    LAKE,
    Json,
    at,
    day,
    pipeline_history,
    run,
    write_events,
)
from tests.lineage.pipelines import pipeline_events, pipelines

QUESTIONS: list[tuple[str, str, dict[str, Any]]] = [
    ("impact", "raw", {"partition": {"day": "2024-10-05", "country": "DE"}}),
    ("impact", "raw", {}),
    ("impact", "clean", {"partition": {"day": "2024-10-03"}, "since": at(12)}),
    ("impact", "raw", {"partition": {"day": "2024-10-02"}, "depth": 1}),
    ("provenance", "rolling", {"partition": {"day": "2024-10-05"}}),
    ("provenance", f"{LAKE}/{HOSTILE_NAME}", {}),
    ("provenance", "clean", {"depth": 2}),
]
INVALID_LINES = ['{"eventType": "START"', '{"eventType": "COMPLETE", "run": {"runId": 7}}']


def _history() -> list[Json]:
    """The report tests' pipeline, and an unrelated one the narrowing must leave out (whose two
    outputs make the name "out" ambiguous)."""
    unrelated = [
        event
        for number in range(3)
        for event in run(
            500 + number,
            number * 10,
            number * 10 + 1,
            reads=[("other/in", day(f"d{number}"))],
            writes=[("more/out" if number == 2 else "other/out", day(f"d{number}"))],
            job="other",
        )
    ]
    return [*pipeline_history(), *unrelated]


@pytest.fixture(scope="module")
def archives(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("archive")
    events = _history()
    lines = [json.dumps(event) for event in events]
    jsonl = folder / "jsonl"
    jsonl.mkdir()
    # Invalid lines in the middle: left out and counted, never stopping the job.
    written = [*lines[:7], *INVALID_LINES, *lines[7:]]
    (jsonl / "events.jsonl").write_text("\n".join(written) + "\n")
    parquet = str(folder / "events.parquet")
    spark.createDataFrame([(line,) for line in lines], "event string").coalesce(1).write.parquet(
        parquet
    )
    db = str(folder / "lineage.db")
    assert ingest([write_events(folder / "all.jsonl", events)], db).invalid == 0
    return {
        "db": db,
        "json": EventArchive(spark, str(jsonl)),
        "parquet": EventArchive(spark, parquet),
        "events": events,
        "lines": {"json": written, "parquet": lines},
    }


def _ask(source: Any, query: str, dataset: str, options: dict[str, Any]) -> dict[str, Any]:
    if isinstance(source, EventArchive):
        asked = source.impact if query == "impact" else source.provenance
        return asked(dataset, **options).as_json()
    function = impact if query == "impact" else provenance
    return function(source, dataset, **options).as_json()


@pytest.mark.parametrize("form", ["json", "parquet"])
@pytest.mark.parametrize(("query", "dataset", "options"), QUESTIONS)
def test_the_archive_answers_as_the_database(
    archives: dict[str, Any], form: str, query: str, dataset: str, options: dict[str, Any]
) -> None:
    expected = _ask(archives["db"], query, dataset, options)
    assert _ask(archives[form], query, dataset, options) == expected


@pytest.mark.parametrize("form", ["json", "parquet"])
def test_the_records_are_the_archive_s_events(archives: dict[str, Any], form: str) -> None:
    """One record per line, in the archive's order, each valid event with its run and what it
    reads and writes, as the events say."""
    records = archives[form].records()
    ordered = records.orderBy("source", "position").select("event").collect()
    assert [row["event"] for row in ordered] == archives["lines"][form]
    expected = sorted(
        (
            event["run"]["runId"],
            json.dumps(event),
            sorted(
                (item["namespace"], item["name"], direction)
                for key, direction in (("inputs", "input"), ("outputs", "output"))
                for item in event[key]
            ),
        )
        for event in archives["events"]
    )
    valid = records.where("problem IS NULL").collect()
    found = [
        (row["run_id"], row["event"], sorted(tuple(access) for access in row["accesses"]))
        for row in valid
    ]
    assert sorted(found) == expected


def test_invalid_lines_are_left_out_and_counted(archives: dict[str, Any]) -> None:
    archive: EventArchive = archives["json"]
    left_out = archive.records().where("problem IS NOT NULL").collect()
    assert sorted(row["event"] for row in left_out) == sorted(INVALID_LINES)
    assert all(row["run_id"] is None and not row["accesses"] for row in left_out)
    assert archive.problems.invalid == len(INVALID_LINES)
    assert any("not valid JSON" in example for example in archive.problems.examples)
    assert archives["parquet"].records().where("problem IS NOT NULL").count() == 0
    assert archives["parquet"].problems.invalid == 0


def test_narrowing_leaves_out_what_the_question_cannot_reach(archives: dict[str, Any]) -> None:
    archive: EventArchive = archives["json"]
    reached = archive.reachable(("file", f"{LAKE}/other/in"), "forward")
    assert reached == {("file", f"{LAKE}/{name}") for name in ("other/in", "other/out", "more/out")}
    touching = list(archive.events_touching(reached))
    assert len(touching) == 6, "the three unrelated runs' START and COMPLETE, nothing else"
    backward = archive.reachable(("file", f"{LAKE}/rolling"), "backward")
    assert ("file", f"{LAKE}/other/out") not in backward
    assert ("file", f"{LAKE}/raw") in backward


def test_an_unknown_or_ambiguous_dataset_is_the_same_error(archives: dict[str, Any]) -> None:
    for name in ("nothing", "out"):
        with pytest.raises(LineageQueryError) as expected:
            impact(archives["db"], name)
        with pytest.raises(LineageQueryError) as found:
            archives["json"].impact(name)
        assert str(found.value) == str(expected.value)


def test_a_parquet_archive_without_the_column_says_which_it_has(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "other.parquet")
    spark.createDataFrame([("x",)], "payload string").write.parquet(path)
    with pytest.raises(LineageQueryError, match=r"no column 'event'.*payload"):
        EventArchive(spark, path).records()


def _generated_archive(spark: SparkSession, folder: Path, events: list[Json]) -> Iterator[Any]:
    path = write_events(folder / "events.jsonl", events)
    db = str(folder / "lineage.db")
    assert ingest([path], db).invalid == 0
    yield db
    yield EventArchive(spark, str(path), format="json")


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pipelines(), st.data())
def test_generated_pipelines_answer_alike(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, pipeline: Any, data: Any
) -> None:
    datasets, steps = pipeline
    folder = tmp_path_factory.mktemp("generated")
    db, archive = _generated_archive(spark, folder, pipeline_events(datasets, steps))
    seed = f"d{data.draw(st.integers(0, datasets - 1))}"
    for query in ("impact", "provenance"):
        assert _ask(archive, query, seed, {}) == _ask(db, query, seed, {})
