"""impact(): each rule of docs/lineage.md on a small hand-built history."""

from __future__ import annotations

import pytest

from openlineage_subset.lineage import ImpactReport, LineageQueryError, impact
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, at, compare, day, event, parts, run, run_id


def _labels(report: ImpactReport) -> dict[str, str]:
    return {item.run.run_id: item.label for item in report.runs}


def _plan(report: ImpactReport) -> dict[str, tuple[str | None, list[str], list[str]]]:
    return {
        item.dataset.name: (
            item.whole,
            [str(p) for p in item.definite],
            [str(p) for p in item.possible],
        )
        for item in report.backfill
    }


def test_a_read_depends_only_on_writes_completed_before_it_started(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 10, writes=[("raw", day("2024-10-15"))]),
            *run(2, 5, 20, reads=[("raw", day("2024-10-15"))], writes=[("a", None)]),  # overlaps
            *run(3, 10, 20, reads=[("raw", day("2024-10-15"))], writes=[("b", None)]),  # tie
            *run(4, 11, 20, reads=[("raw", day("2024-10-15"))], writes=[("c", None)]),
        ]
    )
    upstream = impact(db, "a", since=at(0))
    assert _labels(upstream) == {}
    report = impact(db, "raw", partition={"day": "2024-10-15"}, since=at(10))
    assert set(_labels(report)) == {run_id(3), run_id(4)}, "started at or after the start time"


def test_propagation_uses_the_writer_completion_time(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 10, reads=[("raw", None)], writes=[("mid", day("d1"))]),
            *run(2, 5, 30, reads=[("mid", day("d1"))], writes=[("out", None)]),  # started before
            *run(3, 11, 30, reads=[("mid", day("d1"))], writes=[("out2", None)]),
        ]
    )
    report = impact(db, "raw")
    assert _labels(report) == {run_id(1): "definite", run_id(3): "definite"}
    assert _plan(report) == {
        f"{LAKE}/mid": (None, ["day=d1"], []),
        f"{LAKE}/out2": ("definite", [], []),
    }


def test_partition_lists_are_exact(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 1, writes=[("raw", parts({"day": "d1"}, {"day": "d2"}))]),
            *run(2, 2, 3, reads=[("raw", day("d1"))], writes=[("x", day("d1"))]),
            *run(3, 2, 3, reads=[("raw", day("d2"))], writes=[("y", day("d2"))]),
        ]
    )
    report = impact(db, "raw", partition={"day": "d1"})
    assert _labels(report) == {run_id(2): "definite"}
    assert _plan(report) == {f"{LAKE}/x": (None, ["day=d1"], [])}


def test_compare_on_a_partition_column_is_decided(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 1, writes=[("raw", parts({"day": "2024-10-14"}, {"day": "2024-10-15"}))]),
            *run(2, 2, 3, reads=[("raw", compare("day", "GREATER_EQUAL_THAN", "2024-10-15"))]),
            *run(3, 2, 3, reads=[("raw", compare("day", "LESS_THAN", "2024-10-15"))]),
        ]
    )
    assert _labels(impact(db, "raw", partition={"day": "2024-10-15"})) == {run_id(2): "definite"}
    assert _labels(impact(db, "raw", partition={"day": "2024-10-14"})) == {run_id(3): "definite"}


def test_a_condition_on_other_columns_is_possible_never_dropped(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 1, writes=[("raw", day("d1"))]),
            *run(2, 2, 3, reads=[("raw", compare("amount", "GREATER_THAN", "100"))]),
            *run(3, 2, 3, reads=[("raw", compare("day", "NOT_EQUAL", "d2"))]),  # not evaluable
        ]
    )
    labels = _labels(impact(db, "raw", partition={"day": "d1"}))
    assert labels == {run_id(2): "possible", run_id(3): "possible"}


def test_locations_are_decided_by_the_partition_directory(lineage_db: Build) -> None:
    location = {"type": "location", "locations": [f"file:{LAKE}/raw/day=d1"]}
    inside = {"type": "location", "locations": [f"{LAKE}/raw/day=d1/part-0.parquet"]}
    db = lineage_db(
        [
            *run(1, 0, 1, writes=[("raw", parts({"day": "d1"}, {"day": "d2"}))]),
            *run(2, 2, 3, reads=[("raw", location)]),
            *run(3, 2, 3, reads=[("raw", inside)]),
        ]
    )
    assert set(_labels(impact(db, "raw", partition={"day": "d1"}))) == {run_id(2), run_id(3)}
    assert _labels(impact(db, "raw", partition={"day": "d2"})) == {}


def test_whole_reads_and_writes_overlap_everything(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 1, writes=[("raw", day("d1"))]),
            *run(2, 2, 3, reads=[("raw", None)], writes=[("all", None)]),
            *run(3, 4, 5, reads=[("all", day("zz"))]),
        ]
    )
    report = impact(db, "raw", partition={"day": "d1"})
    assert _labels(report) == {run_id(2): "definite", run_id(3): "definite"}
    assert _plan(report) == {f"{LAKE}/all": ("definite", [], [])}


def test_possible_upstream_makes_downstream_possible(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 1, writes=[("raw", day("d1"))]),
            *run(2, 2, 3, reads=[("raw", compare("x", "EQUAL", "1"))], writes=[("mid", day("d1"))]),
            *run(3, 4, 5, reads=[("mid", day("d1"))], writes=[("out", day("d1"))]),
        ]
    )
    report = impact(db, "raw", partition={"day": "d1"})
    assert _labels(report) == {run_id(2): "possible", run_id(3): "possible"}
    assert _plan(report) == {
        f"{LAKE}/mid": (None, [], ["day=d1"]),
        f"{LAKE}/out": (None, [], ["day=d1"]),
    }


def test_a_compare_write_covers_the_known_partitions_it_may_select(lineage_db: Build) -> None:
    known = parts({"day": "d1", "country": "PL"}, {"day": "d1", "country": "DE"})
    db = lineage_db(
        [
            *run(1, 0, 1, writes=[("raw", day("d1")), ("mid", known)]),
            *run(
                2,
                2,
                3,
                reads=[("raw", day("d1"))],
                writes=[("mid", compare("country", "EQUAL", "PL"))],
            ),
            *run(
                3, 2, 3, reads=[("raw", day("d1"))], writes=[("other", compare("x", "EQUAL", "1"))]
            ),
        ]
    )
    plan = _plan(impact(db, "raw", partition={"day": "d1"}))
    assert plan[f"{LAKE}/mid"] == (None, ["day=d1/country=PL"], [])
    assert plan[f"{LAKE}/other"] == ("possible", [], []), "no known partition: the whole dataset"


def test_failed_runs_are_listed_but_go_no_further(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 1, writes=[("raw", day("d1"))]),
            *run(2, 2, 3, reads=[("raw", day("d1"))], writes=[("mid", day("d1"))], status="FAIL"),
            *run(3, 4, 5, reads=[("mid", day("d1"))]),
            event(
                4, "START", 2, job="still_running", reads=[("raw", None)], writes=[("mid", None)]
            ),
        ]
    )
    report = impact(db, "raw", partition={"day": "d1"})
    assert {item.run.run_id: item.run.status for item in report.runs} == {
        run_id(2): "FAIL",
        run_id(4): "START",
    }
    assert report.backfill == ()


def test_cycles_end_and_each_run_is_listed_once(lineage_db: Build) -> None:
    events = []
    for number in range(1, 6):  # a job that reads and rewrites its own dataset, five times
        events += run(
            number, 10 * number, 10 * number + 5, reads=[("t", None)], writes=[("t", day("d1"))]
        )
    db = lineage_db(events)
    report = impact(db, "t", partition={"day": "d1"})
    assert [item.run.run_id for item in report.runs] == [run_id(n) for n in range(1, 6)]
    assert [item.hops for item in report.runs] == [1, 1, 1, 1, 1]


def test_depth_limits_run_hops(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 1, reads=[("a", None)], writes=[("b", None)]),
            *run(2, 2, 3, reads=[("b", None)], writes=[("c", None)]),
            *run(3, 4, 5, reads=[("c", None)], writes=[("d", None)]),
        ]
    )
    assert len(impact(db, "a").runs) == 3
    shallow = impact(db, "a", depth=2)
    assert [item.hops for item in shallow.runs] == [1, 2]
    assert [item.dataset.name for item in shallow.backfill] == [f"{LAKE}/b", f"{LAKE}/c"]


def test_a_run_upgraded_from_possible_to_definite_is_followed_again(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 1, reads=[("a", None)], writes=[("b", day("d1")), ("c", day("d1"))]),
            # run 2 reads b on another column (possible) and c by partition (definite)
            *run(
                2,
                2,
                3,
                reads=[("b", compare("x", "EQUAL", "1")), ("c", day("d1"))],
                writes=[("e", day("d1"))],
            ),
            *run(3, 4, 5, reads=[("e", day("d1"))]),
        ]
    )
    report = impact(db, "a")
    assert _labels(report) == {run_id(1): "definite", run_id(2): "definite", run_id(3): "definite"}
    assert _plan(report)[f"{LAKE}/e"] == (None, ["day=d1"], [])


def test_a_coarser_partition_covers_the_known_finer_ones(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *run(1, 0, 1, writes=[("raw", parts({"day": "d1", "country": "PL"}))]),
            *run(2, 2, 3, reads=[("raw", parts({"day": "d1", "country": "PL"}))]),
            *run(3, 2, 3, reads=[("raw", compare("country", "EQUAL", "PL"))]),
            *run(4, 2, 3, reads=[("raw", parts({"day": "d2", "country": "PL"}))]),
        ]
    )
    labels = _labels(impact(db, "raw", partition={"day": "d1"}))
    assert labels == {run_id(2): "definite", run_id(3): "definite"}


def test_bad_arguments_say_what_to_write(lineage_db: Build) -> None:
    db = lineage_db(run(1, 0, 1, writes=[("raw", None)]))
    with pytest.raises(LineageQueryError, match="not an ISO-8601 time"):
        impact(db, "raw", since="yesterday")
    with pytest.raises(LineageQueryError, match="depth must be"):
        impact(db, "raw", depth=0)
    with pytest.raises(LineageQueryError, match="partition must map"):
        impact(db, "raw", partition={})


def test_date_ranges_leave_out_only_reads_of_other_days(lineage_db: Build) -> None:
    # A backfill writes three days at once; later reads select days by range, as rolling
    # windows do. The index of those ranges may leave a read out only when it selects none of
    # the days written: below the least, or above the greatest.
    days = ("2024-10-01", "2024-10-02", "2024-10-03")
    db = lineage_db(
        [
            *run(
                1,
                0,
                10,
                reads=[("raw", None)],
                writes=[("daily", parts(*({"day": d} for d in days)))],
            ),
            *run(2, 20, 30, reads=[("daily", compare("day", "LESS_EQUAL_THAN", days[0]))]),
            *run(3, 20, 30, reads=[("daily", compare("day", "GREATER_EQUAL_THAN", days[2]))]),
            *run(4, 20, 30, reads=[("daily", compare("day", "LESS_THAN", days[0]))]),
            *run(5, 20, 30, reads=[("daily", compare("day", "GREATER_THAN", days[2]))]),
            *run(6, 20, 30, reads=[("daily", compare("day", "EQUAL", days[1]))]),
        ]
    )
    report = impact(db, "raw")
    assert _labels(report) == {
        run_id(1): "definite",
        run_id(2): "definite",
        run_id(3): "definite",
        run_id(6): "definite",
    }
