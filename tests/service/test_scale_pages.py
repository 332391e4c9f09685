"""A dataset's page works out what it draws only: the newest rows of its grid, the latest runs
of its history. What it shows of them is held to an answer worked out here from the events
alone (which partitions each run listed, read by a date range or whole, when each run started
and ended), on a history longer and wider than small grid limits draw."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import (
    DatasetRef,
    Lineage,
    PartitionsQuery,
    dataset_partitions,
    history,
    ingest,
    latest_history,
)
from openlineage_subset.report import UNCOUNTED
from openlineage_subset.service import _pages
from openlineage_subset.service import _partition_grid as partition_grid
from openlineage_subset.service._partition_grid import Limits, NoRowsBefore, drawn_partitions
from tests.lineage.events import LAKE, both, compare, run, run_id, write_events

Json = dict[str, Any]
FIRST = dt.date(2024, 1, 1)
ZONES = ("Z1", "Z2", "Z3", "Z4", "Z5", "Z6")
DAYS = 24
LATE = "Z0"
"""A zone only read, of the day after the last: a known partition no run wrote."""
LIMITS = Limits(rows=4, days=6, cells=24, columns=4)
"""Rows of days: 24 cells over 4 columns is 6 rows (4 at least, 6 at most)."""


def _date(number: int) -> str:
    return (FIRST + dt.timedelta(days=number)).isoformat()


def _parts(pairs: Iterable[tuple[str, str]], first: str = "day", second: str = "zone") -> Json:
    return {
        "type": "partition",
        "partitions": [
            {
                "dimensions": {first: day, second: zone},
                "identifier": f"{first}={day}/{second}={zone}",
            }
            for day, zone in pairs
        ],
    }


class Facts:
    """What the events say, read back from them: each run's start, end, status and what it
    listed, read by a date range or read whole, of ``raw``."""

    def __init__(self, events: list[Json]) -> None:
        self.runs: dict[str, dict[str, Any]] = {}
        for item in events:
            found = self.runs.setdefault(item["run"]["runId"], {"accesses": {}})
            if item["eventType"] == "START":
                found["start"] = item["eventTime"]
            else:
                found["end"], found["status"] = item["eventTime"], item["eventType"]
            for side, key, facet in (
                ("inputs", "input", "inputFacets"),
                ("outputs", "output", "outputFacets"),
            ):
                for dataset in item[side]:
                    condition = dataset.get(facet, {}).get("subset", {})
                    condition = condition.get(f"{key}Condition")
                    if condition is not None or key not in found["accesses"]:
                        found["accesses"][key] = condition

    def covers(self, condition: Json | None, unit: tuple[str, str]) -> bool:
        """Whether a condition of these events selects the partition (day, zone)."""
        if condition is None:
            return True  # the whole dataset
        if condition["type"] == "partition":
            return any(
                (item["dimensions"]["day"], item["dimensions"]["zone"]) == unit
                for item in condition["partitions"]
            )
        low = condition["left"]["right"]["value"]  # day BETWEEN low AND high
        high = condition["right"]["right"]["value"]
        return low <= unit[0] <= high

    def known(self) -> set[tuple[str, str]]:
        return {
            (item["dimensions"]["day"], item["dimensions"]["zone"])
            for found in self.runs.values()
            for condition in found["accesses"].values()
            if condition is not None and condition["type"] == "partition"
            for item in condition["partitions"]
        }

    def state(self, unit: tuple[str, str]) -> tuple[str | None, int, str | None]:
        """The partition's last completed writer, the runs that read it since, and the latest
        failed run that wrote it after that writer started."""
        writers = [
            (found["end"], run)
            for run, found in self.runs.items()
            if found.get("status") == "COMPLETE"
            and "output" in found["accesses"]
            and self.covers(found["accesses"]["output"], unit)
        ]
        writer = max(writers)[1] if writers else None
        ended = self.runs[writer]["end"] if writer else ""
        started = self.runs[writer]["start"] if writer else ""
        readers = {
            run
            for run, found in self.runs.items()
            if "input" in found["accesses"]
            and self.covers(found["accesses"]["input"], unit)
            and found["start"] > ended
        }
        failed = [
            (found["start"], run)
            for run, found in self.runs.items()
            if found.get("status") == "FAIL"
            and self.covers(found["accesses"]["output"], unit)
            and found["start"] > started
        ]
        return writer, len(readers), max(failed)[1] if failed else None


def _history() -> list[Json]:
    """A day's partitions of ``raw`` written by zone each morning, read by the day's job (by
    its list) and by a rolling job (its last four days, by a range); a failed rewrite of the
    day before every fifth day; a rewrite of two zones of the day before every seventh (after
    the failed one, on day 20); one read of the whole dataset; one of a partition of the day
    after the last."""
    events: list[Json] = []
    number = 0

    def add(start: float, end: float, **kwargs: Any) -> None:
        nonlocal number
        number += 1
        events.extend(run(number, start, end, **kwargs))

    for day in range(DAYS):
        base = day * 100
        todays = _parts((_date(day), zone) for zone in ZONES)
        add(base, base + 5, writes=[("raw", todays)], job="ingest")
        add(base + 10, base + 12, reads=[("raw", todays)], job="daily")
        window = both(
            compare("day", "GREATER_EQUAL_THAN", _date(day - 3)),
            "AND",
            compare("day", "LESS_EQUAL_THAN", _date(day)),
        )
        add(base + 20, base + 22, reads=[("raw", window)], job="rolling")
        if day % 5 == 0:
            again = _parts((_date(day - 1), zone) for zone in ZONES)
            add(base + 30, base + 32, writes=[("raw", again)], status="FAIL", job="ingest")
        if day % 7 == 6:
            backfill = _parts((_date(day - 1), zone) for zone in ZONES[:2])
            add(base + 40, base + 45, writes=[("raw", backfill)], job="backfill")
        if day == 10:
            add(base + 50, base + 52, reads=[("raw", None)], job="audit")
    add(DAYS * 100, DAYS * 100 + 2, reads=[("raw", _parts([(_date(DAYS), LATE)]))], job="probe")
    return events


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Facts]:
    folder = tmp_path_factory.mktemp("scale")
    events = _history()
    db = folder / "lineage.db"
    ingest([write_events(folder / "events.jsonl", events)], db)
    return db, Facts(events)


RAW = DatasetRef("file", f"{LAKE}/raw")


def test_the_grid_draws_the_newest_rows_states_as_the_events_give_them(
    made: tuple[Path, Facts],
) -> None:
    db, facts = made
    known = facts.known()
    days = sorted({day for day, _ in known})
    rows = days[-6:]  # 24 cells over 4 columns: 6 rows
    zones = sorted({zone for day, zone in known if day in rows})
    drawn_units = {(day, zone) for day, zone in known if day in rows and zone in zones[:4]}
    with Lineage(db) as lineage:
        drawn = drawn_partitions(lineage, RAW, LIMITS)
    assert drawn.grid is not None, "a dataset by day first is drawn from its newest rows"
    assert drawn.grid.rows == tuple(rows)
    assert drawn.grid.columns == tuple(zones[:4])
    assert drawn.grid.row_gaps == (len(days) - 6, 0, 0, 0, 0, 0, 0)
    assert drawn.grid.hidden_columns == len(zones) - 4
    states = {
        (dict(state.partition.dimensions)["day"], dict(state.partition.dimensions)["zone"]): state
        for state in drawn.report.partitions
    }
    assert set(states) == drawn_units
    assert len(drawn.grid.cells) == len(drawn_units)
    failed_runs = set()
    for unit, state in states.items():
        writer, readers, failed = facts.state(unit)
        assert (state.writer.run_id if state.writer else None, state.reads_since) == (
            writer,
            readers,
        ), unit
        assert state.label == ("definite" if writer else None)
        found = drawn.failed.get((("day", unit[0]), ("zone", unit[1])))
        assert (found.run_id if found else None) == failed, unit
        failed_runs.add(failed)
    # The history exercises what it means to: a failed run, a backfill, the read-only zone.
    assert failed_runs - {None}
    assert {state.writer.job_name for state in states.values() if state.writer} == {
        "ingest",
        "backfill",
    }
    assert states[(_date(DAYS), LATE)].writer is None


def test_the_drawn_states_are_those_of_every_partition_worked_out(
    made: tuple[Path, Facts],
) -> None:
    db, _ = made
    with Lineage(db) as lineage:
        drawn = drawn_partitions(lineage, RAW, LIMITS)
    everything = {state.partition: state for state in dataset_partitions(db, RAW.name).partitions}
    assert len(everything) > 2 * len(drawn.report.partitions)
    for state in drawn.report.partitions:
        assert everything[state.partition] == state


def test_the_page_shows_the_latest_runs_and_counts_the_others(made: tuple[Path, Facts]) -> None:
    db, facts = made
    entries = sorted(
        (found["start"], run, "read" if side == "input" else "write")
        for run, found in facts.runs.items()
        for side in found["accesses"]
    )
    with Lineage(db) as lineage:
        latest, total = latest_history(lineage.store, PartitionsQuery(RAW.name, RAW.namespace), 7)
        drawn = drawn_partitions(lineage, RAW, LIMITS)
    assert total == len(entries)
    assert [(e.run.run_id, e.direction) for e in latest.entries] == [
        (run, side) for _, run, side in entries[-7:]
    ]
    whole = {(e.run.run_id, e.direction): e.condition for e in history(db, RAW.name).entries}
    for entry in latest.entries:
        assert entry.condition == whole[(entry.run.run_id, entry.direction)]
    page = _pages.dataset_page(RAW, None, drawn, latest, history_total=total).html
    shown = re.findall(r'<a href="/run\?id=([^"]+)">', page)
    assert shown[: len(latest.entries)] == [e.run.run_id for e in reversed(latest.entries)]
    assert f"and {total - 7} earlier run(s)" in page
    boxes = [json.loads(html.unescape(v)) for v in re.findall(r'name="p" value="([^"]*)"', page)]
    assert len(boxes) == len(drawn.grid.cells if drawn.grid else ())


def _renamed(item: Any, old: str, new: str) -> Any:
    """The events with the partition column ``old`` named ``new``."""
    if isinstance(item, dict):
        return {
            (new if key == old else key): _renamed(value, old, new) for key, value in item.items()
        }
    if isinstance(item, list):
        return [_renamed(value, old, new) for value in item]
    if isinstance(item, str) and item.startswith(f"{old}="):
        return new + item[len(old) :]
    return item


def test_a_dataset_whose_rows_are_its_second_column_is_drawn_from_its_newest_rows(
    tmp_path: Path,
) -> None:
    """The history above with its zones named ``area``: first by name, fewer than the days.
    The grid's rows are the days, which no range of the key holds: the page draws the newest
    of them by the first areas all the same, each state as worked out from every partition,
    and its older rows a link away."""
    events = [_renamed(item, "zone", "area") for item in _history()]
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    everything = {state.partition: state for state in dataset_partitions(db, RAW.name).partitions}
    known = {(dict(ref.dimensions)["day"], dict(ref.dimensions)["area"]) for ref in everything}
    days = sorted({day for day, _ in known})
    areas = sorted({area for _, area in known})
    with Lineage(db) as lineage:
        drawn = drawn_partitions(lineage, RAW, LIMITS)
        older = drawn_partitions(lineage, RAW, LIMITS, before=days[-6])
    assert drawn.grid is not None and older.grid is not None
    assert (drawn.grid.down, drawn.grid.across) == ("day", ("area",))
    assert drawn.grid.rows == tuple(days[-6:])  # 24 cells over 4 columns: 6 rows
    assert drawn.grid.columns == tuple(areas[:4])
    assert drawn.grid.hidden_columns == len(areas) - 4
    assert drawn.page is not None and drawn.page.older == days[-6]
    assert older.grid.rows == tuple(days[-12:-6])
    for page in (drawn, older):
        assert page.grid is not None
        expected = {
            ref
            for ref in everything
            if dict(ref.dimensions)["day"] in page.grid.rows
            and dict(ref.dimensions)["area"] in page.grid.columns
        }
        assert {state.partition for state in page.report.partitions} == expected
        for state in page.report.partitions:
            assert everything[state.partition] == state
        assert len(page.grid.cells) == len(expected)


def test_a_dataset_of_three_columns_not_by_its_first_is_drawn_from_all(tmp_path: Path) -> None:
    """Rows that are neither the first column nor the second of two: the page draws the
    grid from every partition, as before."""
    pairs = [(_date(n), "Z1") for n in range(30)]
    condition = _parts(pairs, "day", "area")
    for item in condition["partitions"]:
        item["dimensions"]["kind"] = "k"
        item["identifier"] += "/kind=k"
    events = run(1, 0, 5, writes=[("raw", condition)])
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    with Lineage(db) as lineage:
        drawn = drawn_partitions(lineage, RAW, LIMITS)
        # its newest rows only: rows before a value are refused, not drawn as the newest
        with pytest.raises(NoRowsBefore, match="draws its newest rows only"):
            drawn_partitions(lineage, RAW, LIMITS, before=_date(20))
    assert drawn.grid is None
    assert len(drawn.report.partitions) == 30
    assert {state.writer.run_id for state in drawn.report.partitions if state.writer} == {run_id(1)}


def test_a_grid_of_more_columns_than_drawn_from_all_shows_earlier_writes(tmp_path: Path) -> None:
    """Days by 12 areas by 11 kinds, written twice: the grid's columns (132 area/kind pairs)
    are more than a grid draws (120), and its rows not the first column by name: the page
    draws it from every partition, the first write's partitions as written by an earlier
    run (a state the cut of the columns once did not rank: the page failed)."""

    def condition(days: range) -> Json:
        return {
            "type": "partition",
            "partitions": [
                {"dimensions": {"day": _date(day), "area": f"A{area:02d}", "kind": f"K{kind:02d}"}}
                for day in days
                for area in range(12)
                for kind in range(11)
            ],
        }

    events = run(1, 0, 5, writes=[("raw", condition(range(8)))])
    events += run(2, 10, 15, writes=[("raw", condition(range(8, 15)))])
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    with Lineage(db) as lineage:
        drawn = drawn_partitions(lineage, RAW)
        latest, total = latest_history(lineage.store, PartitionsQuery(RAW.name, RAW.namespace), 5)
    assert drawn.grid is None  # drawn from every partition
    page = _pages.dataset_page(RAW, None, drawn, latest, history_total=total).html
    assert "120 column(s)" not in page and "12 column(s) not drawn" in page
    assert 'class="earlier"' in page and 'class="written"' in page


def _drawn_as(
    db: Path, before: str | None, showing: list[dict[str, str | None]]
) -> tuple[Any, ...] | str:
    with Lineage(db) as lineage:
        try:
            drawn = drawn_partitions(lineage, RAW, LIMITS, before=before, showing=showing)
        except NoRowsBefore as error:
            return str(error)
    grid = drawn.grid
    assert grid is not None
    facts = (grid.rows, grid.columns, grid.cells, grid.hidden_columns, grid.row_gaps[1:-1])
    return (*facts, drawn.report, dict(drawn.failed), drawn.page), grid.row_gaps


def test_a_column_of_more_values_than_searched_is_drawn_from_a_stretch_as_from_all(
    made: tuple[Path, Facts], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first column of more values than SQLite is asked for one by one (a million days) is
    drawn from a stretch of them around the rows drawn: the same rows, cells, states and
    links as from all its values, for the newest rows, the rows before each value and the
    rows up to a partition selected; only the rows left out before or after the stretch are
    said without their count (and there are some)."""
    db, facts = made
    days = sorted({day for day, _ in facts.known()})
    asked: list[tuple[str | None, list[dict[str, str | None]]]] = [(None, [])]
    asked += [(day, []) for day in days]
    asked += [(None, [{"day": day, "zone": ZONES[0]}]) for day in days]
    whole = {key: _drawn_as(db, *key_args) for key, key_args in enumerate(asked)}
    monkeypatch.setattr(partition_grid, "MOST_SEARCHED", len(ZONES) + 2)  # fewer than days
    uncounted = 0
    for key, (before, showing) in enumerate(asked):
        found = _drawn_as(db, before, showing)
        if isinstance(found, str) or isinstance(whole[key], str):
            assert found == whole[key], (before, showing)
            continue
        (facts_drawn, gaps), (facts_whole, exact) = found, whole[key]
        assert facts_drawn == facts_whole, (before, showing)
        for said, counted in ((gaps[0], exact[0]), (gaps[-1], exact[-1])):
            assert said in (counted, UNCOUNTED), (before, showing)
            assert said != UNCOUNTED or counted > 0, "rows said left out are there"
            uncounted += said == UNCOUNTED
    assert uncounted > len(asked) // 2, "most pages are drawn from a stretch"
