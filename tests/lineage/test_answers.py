"""Answers that admit what they do not know: a partition column the dataset never had is an
error naming the columns it has; a partition no run read or wrote is said to be unknown, not
answered with a confident "nothing"; a partition's columns come in one order everywhere; a
dataset is named alike by ``show`` and ``lineage``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import (
    LineageQueryError,
    UnknownPartitionColumnError,
    dataset_partitions,
    history,
    impact,
    ingest,
    provenance,
)
from openlineage_subset.report import impact_picture, report_html
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, Json, compare, day, parts, run, write_events

DAYS = ("2024-10-01", "2024-10-02", "2024-10-03")
ZONES = ("north", "south")
COUNTRIES = ("DE", "PL")


def _zoned(date: str) -> Json:
    """A day's partitions of ``zoned``, listed with their columns as the table orders them:
    day, zone, country (not in the order of their names)."""
    return parts(*({"day": date, "zone": zone, "country": c} for zone in ZONES for c in COUNTRIES))


def _history() -> list[Json]:
    """``zoned`` (day, zone, country) and ``daily`` (day) written and read day by day; ``ranged``
    is only ever read by a range of days, never by a partition list; ``whole`` only whole;
    ``landing`` by a location: one directory, its columns in an order no identifier tells;
    ``drop`` by the location of one day."""
    events: list[Json] = []
    for number, date in enumerate(DAYS):
        base = 10 * number
        events += run(base + 1, base, base + 1, writes=[("zoned", _zoned(date))], job="load")
        events += run(
            base + 2,
            base + 2,
            base + 3,
            reads=[("zoned", _zoned(date))],
            writes=[("daily", day(date))],
            job="daily",
        )
    window = compare("day", "GREATER_EQUAL_THAN", "2024-10-02")
    events += run(50, 50, 51, reads=[("ranged", window), ("whole", None)], job="scan")
    folder = {"type": "location", "locations": [f"{LAKE}/landing/zone=north/day=2024-10-02"]}
    one = {"type": "location", "locations": [f"{LAKE}/drop/day=2024-10-02"]}
    events += run(60, 60, 61, reads=[("landing", folder), ("drop", one)], job="pick")
    return events


@pytest.fixture
def db(lineage_db: Build) -> str:
    return lineage_db(_history())


QUERIES: dict[str, Callable[..., object]] = {
    "impact": impact,
    "provenance": provenance,
    "history": history,
}


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["lineage", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return status, captured.out, captured.err


# -- a partition column the dataset never had ------------------------------------------------


@pytest.mark.parametrize("query", sorted(QUERIES))
def test_a_mistyped_column_is_an_error_naming_the_columns(db: str, query: str) -> None:
    with pytest.raises(UnknownPartitionColumnError) as raised:
        QUERIES[query](db, "zoned", partition={"dayy": "2024-10-02"})
    error = raised.value
    assert isinstance(error, LineageQueryError), "caught where every query error is"
    assert error.dataset.name == f"{LAKE}/zoned"
    assert error.unknown == ("dayy",)
    assert error.columns == ("day", "zone", "country")
    assert error.closest == {"dayy": "day"}
    message = str(error)
    assert "'dayy'" in message and "did you mean 'day'" in message
    assert "day, zone, country" in message and f"{LAKE}/zoned" in message


def test_the_error_lists_only_the_unknown_columns_and_guesses_only_when_close(db: str) -> None:
    with pytest.raises(UnknownPartitionColumnError) as raised:
        impact(db, "zoned", partition={"day": "2024-10-02", "hour": "13"})
    assert raised.value.unknown == ("hour",)
    assert raised.value.closest == {}, "nothing is close to 'hour'"
    assert "did you mean" not in str(raised.value)


@pytest.mark.parametrize("query", ["impact", "provenance", "history", "report"])
def test_the_command_line_exits_2_naming_the_columns(
    db: str, query: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--html", str(tmp_path / "page.html")] if query == "report" else []
    status, out, err = _cli(
        capsys, query, "zoned", "--partition", "dayy=2024-10-02", "--db", db, *extra
    )
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1, "one line"
    assert "'dayy' (did you mean 'day'?)" in err and "day, zone, country" in err
    assert not (tmp_path / "page.html").exists()


def test_columns_are_checked_against_what_the_events_name(db: str) -> None:
    """``ranged`` has no known partition, but a read compares ``day``: day is a column it may
    be partitioned by, and the read of a range covers the day asked about. ``whole`` is read
    whole only: what its partitions are is not known, and the whole read covers any."""
    answer = impact(db, "ranged", partition={"day": "2024-10-05"})
    assert [run.run.job_name for run in answer.runs] == ["scan"]
    assert answer.seen
    with pytest.raises(UnknownPartitionColumnError, match="its conditions name day"):
        impact(db, "ranged", partition={"dayy": "2024-10-05"})
    answer = impact(db, "whole", partition={"anything": "x"})
    assert [run.run.job_name for run in answer.runs] == ["scan"]


# -- a partition nothing read or wrote -------------------------------------------------------


def test_a_value_never_seen_is_said_to_be_unknown(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for query in ("impact", "provenance", "history"):
        status, out, _ = _cli(capsys, query, "daily", "--partition", "day=2024-12-03", "--db", db)
        assert status == 0
        assert "No recorded run read or wrote it" in out, query
        assert "nothing to recompute" not in out
        assert "came from outside the recorded lineage" not in out
        status, out, _ = _cli(
            capsys, query, "daily", "--partition", "day=2024-12-03", "--db", db, "--format", "json"
        )
        assert json.loads(out)["seen"] is False, query
    # Written, and read by nobody after: that is known, and nothing to recompute.
    status, out, _ = _cli(capsys, "impact", "daily", "--partition", "day=2024-10-03", "--db", db)
    assert status == 0
    assert "nothing to recompute" in out
    assert "No recorded run read or wrote it" not in out


def test_seen_is_exact(db: str) -> None:
    """A known partition, a value inside a read's range, the whole dataset: seen. A value
    the range leaves out, a combination no partition list names: not seen."""
    assert impact(db, "daily", partition={"day": "2024-10-03"}).seen
    assert impact(db, "ranged", partition={"day": "2024-10-05"}).seen
    assert not impact(db, "ranged", partition={"day": "2024-09-30"}).seen
    assert provenance(db, "ranged", partition={"day": "2024-10-05"}).seen
    assert history(db, "ranged", partition={"day": "2024-10-05"}).seen
    assert impact(db, "daily").seen and provenance(db, "daily").seen and history(db, "daily").seen
    # A location read: the directory may be the partition's, whatever its columns' order.
    north = impact(db, "landing", partition={"zone": "north", "day": "2024-10-02"})
    assert north.seen
    assert [run.run.job_name for run in north.runs] == ["pick"], "its directory, read"
    assert "zone=north/day=2024-10-02" in str(north.start.definite[0])
    assert not impact(db, "landing", partition={"zone": "south", "day": "2024-10-02"}).seen
    assert impact(db, "drop", partition={"day": "2024-10-02"}).seen
    assert not impact(db, "drop", partition={"day": "2024-10-03"}).seen
    odd = {"day": "2024-10-02", "zone": "east", "country": "DE"}
    assert not impact(db, "zoned", partition=odd).seen
    assert not provenance(db, "zoned", partition=odd).seen


COARSER_UNSEEN = [{"day": "2024-12-03"}, {"day": "2024-10-02", "zone": "east"}]


@pytest.mark.parametrize("partition", COARSER_UNSEEN)
def test_a_coarser_partition_nothing_is_inside_is_unseen(
    db: str, partition: dict[str, str]
) -> None:
    """A partition of fewer columns than the dataset's (a day of ``zoned``, partitioned by
    day, zone and country) inside which no partition was ever written or read is unknown,
    as one naming every column is: the partition lists of other days leave it out."""
    exact = {"zone": "north", "country": "DE", **partition}
    for query in (impact, provenance, history):
        assert not query(db, "zoned", partition=exact).seen, "the exact one: unseen"  # type: ignore[operator]
        answer = query(db, "zoned", partition=partition)  # type: ignore[operator]
        assert answer.seen is False, query.__name__
        assert answer.as_json()["seen"] is False
    found = impact(db, "zoned", partition=partition)
    assert found.runs == () and found.backfill == ()
    assert provenance(db, "zoned", partition=partition).writers == ()
    assert history(db, "zoned", partition=partition).entries == ()


def test_a_coarser_partition_that_was_seen_is_answered_as_its_partitions(db: str) -> None:
    """A day of ``zoned`` some partition of which was written and read is its partitions:
    known, with their writer and their reader (definite), not an unknown part."""
    for partition, inside in (
        ({"day": "2024-10-02"}, 4),
        ({"day": "2024-10-02", "zone": "north"}, 2),
    ):
        found = impact(db, "zoned", partition=partition)
        assert found.seen and len(found.start.definite) == inside
        assert [(run.run.job_name, run.label) for run in found.runs] == [("daily", "definite")]
        where = provenance(db, "zoned", partition=partition)
        assert where.seen and [step.run.job_name for step in where.writers] == ["load"]
        assert [step.label for step in where.writers] == ["definite"]
        entries = history(db, "zoned", partition=partition).entries
        assert [(e.run.job_name, e.direction, e.label) for e in entries] == [
            ("load", "write", "definite"),
            ("daily", "read", "definite"),
        ]


@pytest.mark.parametrize("query", ["impact", "provenance", "history"])
def test_the_command_line_says_a_coarser_partition_is_unseen(
    db: str, query: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _cli(capsys, query, "zoned", "--partition", "day=2024-12-03", "--db", db)
    assert status == 0
    assert "No recorded run read or wrote it" in out
    assert "POSSIBLE" not in out and "possibly" not in out
    args = [query, "zoned", "--partition", "day=2024-12-03", "--db", db, "--format", "json"]
    status, out, _ = _cli(capsys, *args)
    assert status == 0 and json.loads(out)["seen"] is False
    # A day some of whose partitions were written: answered, no note.
    status, out, _ = _cli(capsys, query, "zoned", "--partition", "day=2024-10-02", "--db", db)
    assert status == 0 and "No recorded run read or wrote it" not in out
    assert "POSSIBLE" not in out and "(possibly)" not in out, "its partitions, decided"


# -- one order of a partition's columns --------------------------------------------------------


def test_columns_keep_the_order_of_the_events_in_json(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    order = ["day", "zone", "country"]
    answer = impact(db, "zoned", partition={"day": "2024-10-02"}).as_json()
    assert [list(item["dimensions"]) for item in answer["start"]["definite"]] == [order] * 4
    assert [item["dimensions"]["zone"] for item in answer["start"]["definite"]] == [
        "north",
        "north",
        "south",
        "south",
    ], "sorted by the values in column order: day, then zone, then country"
    for item in answer["runs"][0]["via"]["partitions"]:
        assert list(item["dimensions"]) == order
    status, out, _ = _cli(capsys, "partitions", "zoned", "--db", db, "--format", "json")
    assert status == 0
    for item in json.loads(out)["partitions"]:
        assert list(item["dimensions"]) == order
    listed = dataset_partitions(db, "zoned").partitions
    assert [state.partition.dimensions[0][0] for state in listed] == ["day"] * len(listed)


def test_columns_ordered_by_locations_alone_do_not_depend_on_arrival(tmp_path: Path) -> None:
    """Partitions no identifier names take their columns' order from the locations their
    dataset was read by; two reads that order them differently give one order however the
    events arrived."""
    unnamed = {"type": "partition", "partitions": [{"dimensions": {"a": "1", "b": "2"}}]}
    first = {"type": "location", "locations": [f"{LAKE}/copy/b=2/a=1/part-0.parquet"]}
    second = {"type": "location", "locations": [f"{LAKE}/copy/a=1/b=2/part-0.parquet"]}
    writes = run(1, 0, 1, writes=[("t", unnamed)])
    reads = [run(2, 2, 3, reads=[("t", first)]), run(3, 4, 5, reads=[("t", second)])]
    orders = set()
    for number, arrived in enumerate((reads, reads[::-1])):
        db = str(tmp_path / f"{number}.db")
        events = [*writes, *(item for events in arrived for item in events)]
        ingest([write_events(tmp_path / f"{number}.jsonl", events)], db)
        (state,) = dataset_partitions(db, "t").partitions
        orders.add(tuple(column for column, _ in state.partition.dimensions))
    assert len(orders) == 1, orders


def test_columns_keep_the_order_of_the_events_in_text(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _cli(capsys, "impact", "zoned", "--partition", "day=2024-10-02", "--db", db)
    assert status == 0
    assert "PARTITION (day = '2024-10-02', zone = 'north', country = 'DE')" in out
    assert "country = 'DE', day" not in out
    # A partition asked about (and known to no identifier) reads in the same order.
    asked = [
        "--partition",
        "country=DE",
        "--partition",
        "zone=east",
        "--partition",
        "day=2024-10-02",
    ]
    status, out, _ = _cli(capsys, "history", "zoned", *asked, "--db", db)
    assert status == 0
    assert "day=2024-10-02/zone=east/country=DE" in out
    status, out, _ = _cli(
        capsys, "provenance", "zoned", "--partition", "day=2024-10-02", "--db", db
    )
    assert "day = '2024-10-02', zone = 'north', country = 'DE'" in out


def test_columns_keep_the_order_of_the_events_in_the_report(db: str) -> None:
    (grid, *_) = (
        grid
        for grid in impact_picture(db, "zoned", partition={"day": "2024-10-02"}).grids
        if grid.dataset.name == f"{LAKE}/zoned"
    )
    assert grid.down == "day"
    assert grid.across == ("zone", "country")
    assert "north/DE" in grid.columns
    page = report_html(db, "zoned", partition={"day": "2024-10-02"})
    assert "zone = &#x27;north&#x27;, country" in page or "zone = 'north', country" in page


# -- a dataset named alike by show and lineage -------------------------------------------------


def test_show_and_lineage_name_a_dataset_alike(
    tmp_path: Path, lineage_db: Build, capsys: pytest.CaptureFixture[str]
) -> None:
    events = run(1, 0, 1, writes=[("sales", day("2024-10-15"))], job="load")
    for item in events:
        for dataset in item["outputs"]:
            dataset["namespace"], dataset["name"] = "s3://bucket", "lake/sales"
    db = lineage_db(events)
    status, out, _ = _cli(capsys, "history", "lake/sales", "--db", db)
    assert status == 0 and "History of s3://bucket/lake/sales (whole dataset)" in out
    source = write_events(tmp_path / "shown.jsonl", events)
    assert main(["show", str(source)]) == 0
    shown = capsys.readouterr().out
    assert "s3://bucket/lake/sales" in shown
    assert "s3://bucket:lake/sales" not in shown


def _shown_conditions(out: str) -> dict[tuple[str, str], list[str]]:
    """(direction, dataset) -> the condition of each run, as ``show`` lists them (a partition a
    line, joined back with OR, as a lineage answer renders the list)."""
    found: dict[tuple[str, str], list[str]] = {}
    conditions: list[str] = []
    for line in out.splitlines():
        access = re.fullmatch(r"  (in|out) +(\S+)  (.*)", line)
        more = re.fullmatch(r" +OR (.*)", line)
        if access:
            conditions = found.setdefault((access.group(1), access.group(2)), [])
            conditions.append(access.group(3))
        elif more:
            conditions[-1] += f" OR {more.group(1)}"
    return found


def test_show_orders_partition_columns_as_lineage_does(
    tmp_path: Path, lineage_db: Build, capsys: pytest.CaptureFixture[str]
) -> None:
    """Events relayed through a serializer that sorts keys list each partition's columns by
    name; their identifiers still say the table's order (day, zone, country), and a partition
    no identifier names has its columns by name: show prints the order lineage answers in."""
    unnamed = {"type": "partition", "partitions": [{"dimensions": {"zone": "north", "day": "1"}}]}
    events = [*_history(), *run(70, 70, 71, writes=[("unnamed", unnamed)], job="bare")]
    db = lineage_db(events)
    relayed = [json.loads(json.dumps(item, sort_keys=True)) for item in events]
    written = relayed[1]["outputs"][0]["outputFacets"]["subset"]["outputCondition"]
    assert list(written["partitions"][0]["dimensions"]) == ["country", "day", "zone"]
    source = write_events(tmp_path / "relayed.jsonl", relayed)
    assert main(["show", str(source), "--relative-to", LAKE]) == 0
    shown = _shown_conditions(capsys.readouterr().out)
    for name in ("zoned", "unnamed"):
        answered = [e.condition for e in history(db, name).entries if e.direction == "write"]
        assert answered and all(answered)
        assert shown[("out", name)] == answered, name
