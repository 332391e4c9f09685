"""Impact narrowed by the partition mappings writes state (``olsubset_partitionMapping``).

A run that read days 2024-11-02 and 2024-11-03 and wrote the same two days, each from its own
day, recomputes only the bad day's output; without the facet (or with one that breaks its
schema) it recomputes both, as before: the sound superset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openlineage_subset import PARTITION_MAPPING_FACET, partition_mapping_facet
from openlineage_subset.lineage import impact, ingest
from openlineage_subset.lineage.queries import impact_text
from tests.helpers import PRODUCER
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, Json, parts, run, write_events

DAYS = ("2024-10-31", "2024-11-02", "2024-11-03")


def _days(*days: str) -> Json:
    return parts(*({"day": value} for value in days))


def _months(*months: str) -> Json:
    return parts(*({"month": value} for value in months))


def _mapped(
    events: list[Json], output: str, *mappings: tuple[str, str, str, list[dict[str, Any]]]
) -> list[Json]:
    """``events`` (a run's) with a mapping facet on ``output`` of its end event: each mapping
    (output column, input dataset, input column, steps)."""
    facet = partition_mapping_facet(
        [
            {
                "field": field,
                "input": {"namespace": "file", "name": f"{LAKE}/{source}"},
                "inputField": input_field,
                "steps": steps,
            }
            for field, source, input_field, steps in mappings
        ],
        producer=PRODUCER,
    )
    for dataset in events[-1]["outputs"]:
        if dataset["name"] == f"{LAKE}/{output}":
            dataset.setdefault("outputFacets", {})[PARTITION_MAPPING_FACET] = facet
    return events


def _plan(db: str, dataset: str, partition: dict[str, str]) -> dict[str, list[str]]:
    answer = impact(db, dataset, partition=partition).as_json()
    return {
        part["dataset"]["name"].removeprefix(f"{LAKE}/"): sorted(
            item["identifier"] for item in part["definite"]
        )
        for part in answer["backfill"]
    }


def _daily(mapped: bool) -> list[Json]:
    job = run(1, 0, 5, reads=[("raw", _days(*DAYS[1:]))], writes=[("daily", _days(*DAYS[1:]))])
    if mapped:
        job = _mapped(job, "daily", ("day", "raw", "day", []))
    return [
        *job,
        *run(2, 10, 15, reads=[("daily", _days(DAYS[1]))], writes=[("report", None)]),
        *run(3, 10, 15, reads=[("daily", _days(DAYS[2]))], writes=[("other", None)]),
    ]


def test_a_bad_day_recomputes_only_its_day(lineage_db: Build) -> None:
    db = lineage_db(_daily(mapped=True))
    plan = _plan(db, "raw", {"day": DAYS[1]})
    assert plan["daily"] == [f"day={DAYS[1]}"]
    assert "other" not in plan  # what read the other day is not affected
    answer = impact(db, "raw", partition={"day": DAYS[1]})
    assert [run.mapped_by for run in answer.runs if run.hops == 1] == [("day",)]
    assert "(mapped by day)" in "\n".join(impact_text(answer))


def test_without_the_facet_the_run_recomputes_all_it_wrote(lineage_db: Build) -> None:
    db = lineage_db(_daily(mapped=False))
    plan = _plan(db, "raw", {"day": DAYS[1]})
    assert plan["daily"] == [f"day={DAYS[1]}", f"day={DAYS[2]}"]
    assert "other" in plan
    assert "mapped by" not in "\n".join(impact_text(impact(db, "raw", partition={"day": DAYS[1]})))


def test_a_facet_that_breaks_its_schema_narrows_nothing(lineage_db: Build) -> None:
    events = _daily(mapped=True)
    facet = events[1]["outputs"][0]["outputFacets"][PARTITION_MAPPING_FACET]
    facet["mappings"][0]["steps"] = [{"op": "dateAdd"}]  # no days: no step the schema knows
    db = lineage_db(events)
    assert _plan(db, "raw", {"day": DAYS[1]})["daily"] == [f"day={DAYS[1]}", f"day={DAYS[2]}"]


def test_a_month_of_a_day(lineage_db: Build) -> None:
    month = [{"op": "dateFormat", "pattern": "yyyy-MM"}]
    job = run(
        1, 0, 5, reads=[("raw", _days(*DAYS))], writes=[("monthly", _months("2024-10", "2024-11"))]
    )
    db = lineage_db(_mapped(job, "monthly", ("month", "raw", "day", month)))
    assert _plan(db, "raw", {"day": "2024-10-31"})["monthly"] == ["month=2024-10"]
    assert _plan(db, "raw", {"day": "2024-11-03"})["monthly"] == ["month=2024-11"]


def test_a_run_reached_twice_follows_what_each_read_maps_to(lineage_db: Build) -> None:
    """The join of raw and a day-shifted copy of it: a bad raw day reaches ``joined`` on its
    own day through raw, and on the next day through ``shifted``. Both are recomputed."""
    shift = [{"op": "dateAdd", "days": 1}]
    shifted = run(
        1, 0, 5, reads=[("raw", _days(*DAYS[1:]))], writes=[("shifted", _days(*DAYS[1:]))]
    )
    joined = run(
        2,
        10,
        15,
        reads=[("raw", _days(*DAYS[1:])), ("shifted", _days(*DAYS[1:]))],
        writes=[("joined", _days(*DAYS[1:]))],
    )
    db = lineage_db(
        [
            *_mapped(shifted, "shifted", ("day", "raw", "day", shift)),
            *_mapped(joined, "joined", ("day", "raw", "day", []), ("day", "shifted", "day", [])),
        ]
    )
    plan = _plan(db, "raw", {"day": DAYS[1]})
    assert plan["shifted"] == [f"day={DAYS[2]}"]
    assert plan["joined"] == [f"day={DAYS[1]}", f"day={DAYS[2]}"]


def test_the_answer_does_not_depend_on_the_order_events_came_in(tmp_path: Path) -> None:
    events = _daily(mapped=True)
    plans = []
    for name, ordered in (("forward", events), ("backward", events[::-1])):
        source = write_events(tmp_path / f"{name}.jsonl", ordered)
        db = str(tmp_path / f"{name}.db")
        assert ingest([source], db).invalid == 0
        plans.append(_plan(db, "raw", {"day": DAYS[1]}))
    assert plans[0] == plans[1]
    assert plans[0]["daily"] == [f"day={DAYS[1]}"]
