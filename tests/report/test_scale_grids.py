"""The answer pages' grids lay out and fetch only what they draw (issue 31 item 5): the same
pictures as the layout of every known partition, and, with small limits, the rows, columns,
counts and cells an oracle works out from the events themselves."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pytest

from openlineage_subset.lineage import DatasetRef, PictureSource
from openlineage_subset.lineage.pages import _picture_facts
from openlineage_subset.report import _picture
from openlineage_subset.report._picture import Grid, Picture, impact_picture, provenance_picture
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, Json, parts, pipeline_history, run

DAYS = [f"2024-09-{number:02d}" for number in range(1, 31)]
COUNTRIES = [f"C{number:02d}" for number in range(12)]


def _full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Have the grids laid out from every known partition, as before."""
    monkeypatch.setattr(PictureSource, "columns", lambda self, dataset, *near: None)


def _pictures(db: str) -> list[Picture]:
    return [
        impact_picture(db, "raw", partition={"day": "2024-10-03", "country": "FR"}),
        impact_picture(db, "clean", partition={"day": "2024-10-02"}),
        provenance_picture(db, "rolling", partition={"day": "2024-10-05"}),
        provenance_picture(db, "clean"),
    ]


def test_a_small_history_draws_the_same_grids(
    lineage_db: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = lineage_db(pipeline_history(10))
    calls: list[object] = []
    columns = PictureSource.columns

    def counted(self: PictureSource, dataset: object, *near: object) -> object:
        found = columns(self, dataset, *near)  # type: ignore[arg-type]
        calls.append(found)
        return found

    monkeypatch.setattr(PictureSource, "columns", counted)
    drawn = [picture.grids for picture in _pictures(db)]
    assert any(found is not None for found in calls), "the grids took the drawn path"
    _full(monkeypatch)
    assert drawn == [picture.grids for picture in _pictures(db)]
    assert any(grid.cells for grids in drawn for grid in grids)


def _history(down: str) -> list[Json]:
    """``raw`` (``down``: a day, and country) written a day at a time, ``daily`` (``down``)
    derived from each day."""
    events: list[Json] = []
    for number, date in enumerate(DAYS):
        each = parts(*({down: date, "country": country} for country in COUNTRIES))
        events += run(2 * number + 1, 4 * number, 4 * number + 1, writes=[("raw", each)])
        events += run(
            2 * number + 2,
            4 * number + 2,
            4 * number + 3,
            reads=[("raw", each)],
            writes=[("daily", parts({down: date}))],
        )
    return events


def _known(events: list[Json], down: str) -> dict[str, set[tuple[str, str]]]:
    """The oracle: each dataset's partitions as the events list them, as (row, column)
    cells of a grid with ``down`` down (the column with the most values)."""
    known: dict[str, set[tuple[str, str]]] = {}
    for item in events:
        for dataset in item["inputs"] + item["outputs"]:
            for facets in (dataset.get("inputFacets"), dataset.get("outputFacets")):
                condition = (facets or {}).get("subset", {})
                for key in ("inputCondition", "outputCondition"):
                    for partition in condition.get(key, {}).get("partitions", ()):
                        values = partition["dimensions"]
                        known.setdefault(dataset["name"], set()).add(
                            (values[down], values.get("country", ""))
                        )
    return known


def _check(
    grid: Grid, known: set[tuple[str, str]], marked: dict[tuple[str, str], str], down: str
) -> None:
    rows = {row for row, _ in known}
    columns = {column for _, column in known}
    assert grid.down == down
    assert len(grid.rows) + sum(grid.row_gaps) == len(rows), "drawn and counted: every day"
    assert len(grid.columns) + grid.hidden_columns == len(columns)
    assert set(grid.rows) <= rows and set(grid.columns) <= columns
    drawn = {(r, c) for r, c in known if r in grid.rows and c in grid.columns}
    assert set(grid.cells) == drawn, "every known partition of a drawn row and column"
    for key, state in marked.items():
        assert grid.cells[key].state == state, key
    states = {key: cell.state for key, cell in grid.cells.items() if cell.state != "known"}
    assert states == marked


@pytest.mark.parametrize("down", ["business_date", "day"])
@pytest.mark.parametrize("limits", [(5, 4, 8, 20), (150, 120, 1100, 20_000)])
def test_small_limits_draw_what_the_events_say(
    lineage_db: Build, monkeypatch: pytest.MonkeyPatch, limits: tuple[int, int, int, int], down: str
) -> None:
    """``business_date`` comes before ``country`` by name: the grid's rows are the first
    column of the key; ``day`` comes after it: the rows are the second column, the first
    across. Either way only the drawn cells are looked up, and the grid is what the events
    say (and what the layout of every known partition draws)."""
    for name, value in zip(
        ("MAX_ROWS", "MAX_COLUMNS", "MAX_DAYS", "MAX_CELLS"), limits, strict=True
    ):
        monkeypatch.setattr(_picture, name, value)
    events = _history(down)
    db = lineage_db(events)
    known = _known(events, down)
    looked_up: list[int] = []
    among = PictureSource.known_among

    def spied(self: PictureSource, dataset: DatasetRef, keys: Iterable[str]) -> set[str]:
        keys = list(keys)
        looked_up.append(len(keys))
        return among(self, dataset, keys)

    monkeypatch.setattr(PictureSource, "known_among", spied)
    bad = ("2024-09-17", "C07")
    asked = {down: bad[0], "country": bad[1]}
    picture = impact_picture(db, "raw", partition=asked)
    grids = {grid.dataset.name: grid for grid in picture.grids}
    # The run reading the bad day read all its countries, and wrote that day of daily.
    raw = {(bad[0], country): "read" for country in COUNTRIES} | {bad: "affected"}
    raw = {key: state for key, state in raw.items() if key[1] in grids[f"{LAKE}/raw"].columns}
    _check(grids[f"{LAKE}/raw"], known[f"{LAKE}/raw"], raw, down)
    _check(grids[f"{LAKE}/daily"], known[f"{LAKE}/daily"], {(bad[0], ""): "affected"}, down)
    assert len(looked_up) == 2, "only the drawn cells looked up, for both datasets"
    most = max(len(grid.rows) * len(grid.columns) for grid in grids.values())
    assert max(looked_up) <= most, "only the partitions of the drawn cells are looked up"
    assert bad[1] in grids[f"{LAKE}/raw"].columns and bad[0] in grids[f"{LAKE}/raw"].rows

    target = provenance_picture(db, "daily", partition={down: bad[0]})
    grids = {grid.dataset.name: grid for grid in target.grids}
    _check(grids[f"{LAKE}/daily"], known[f"{LAKE}/daily"], {(bad[0], ""): "written"}, down)
    _full(monkeypatch)
    assert picture.grids == impact_picture(db, "raw", partition=asked).grids
    assert target.grids == provenance_picture(db, "daily", partition={down: bad[0]}).grids


def _same_but_uncounted(stretched: Grid, whole: Grid) -> int:
    """Whether the grid drawn from stretches of values is the one drawn from all of them, but
    for gaps said :data:`~openlineage_subset.report._picture.UNCOUNTED` (each of rows that are
    there): how many such gaps."""
    assert dataclasses.replace(stretched, row_gaps=()) == dataclasses.replace(whole, row_gaps=())
    uncounted = 0
    for said, counted in zip(stretched.row_gaps, whole.row_gaps, strict=True):
        assert said in (counted, _picture.UNCOUNTED)
        assert said != _picture.UNCOUNTED or counted > 0, "rows said left out are there"
        uncounted += said == _picture.UNCOUNTED
    return uncounted


@pytest.mark.parametrize("limits", [(5, 4, 8, 20), (5, 4, 8, 400)])
def test_a_column_of_more_values_than_listed_is_drawn_from_stretches_as_from_all(
    lineage_db: Build, monkeypatch: pytest.MonkeyPatch, limits: tuple[int, int, int, int]
) -> None:
    """A first column of more values than are listed one by one (a million days) is drawn
    from stretches of them around the partitions an answer marks (wider than a grid has rows):
    the grids of every answer are those drawn from every known partition, but that the rows
    left out beyond the stretches are said, not counted."""
    for name, value in zip(
        ("MAX_ROWS", "MAX_COLUMNS", "MAX_DAYS", "MAX_CELLS"), limits, strict=True
    ):
        monkeypatch.setattr(_picture, name, value)
    events = _history("business_date")
    far = parts(*({"business_date": day, "country": "C01"} for day in (DAYS[2], DAYS[-3])))
    events += run(99, 500, 501, reads=[("raw", far)], writes=[("far", None)])
    db = lineage_db(events)

    def pictures() -> list[Picture]:
        asked = [{"business_date": day, "country": "C03"} for day in (DAYS[0], DAYS[14])]
        return [
            *(impact_picture(db, "raw", partition=partition) for partition in asked),
            provenance_picture(db, "daily", partition={"business_date": DAYS[-1]}),
            provenance_picture(db, "far"),  # marks two days far apart: two stretches
            impact_picture(db, "raw"),  # nothing marked: the first rows
        ]

    monkeypatch.setattr(_picture_facts, "_MOST_VALUES", len(COUNTRIES) + 1)  # < 30 days
    stretched = [picture.grids for picture in pictures()]
    monkeypatch.undo()
    for name, value in zip(
        ("MAX_ROWS", "MAX_COLUMNS", "MAX_DAYS", "MAX_CELLS"), limits, strict=True
    ):
        monkeypatch.setattr(_picture, name, value)
    _full(monkeypatch)
    whole = [picture.grids for picture in pictures()]
    uncounted = sum(
        _same_but_uncounted(one, other)
        for ones, others in zip(stretched, whole, strict=True)
        for one, other in zip(ones, others, strict=True)
    )
    assert uncounted >= 3, "the pictures were drawn from stretches"
    (far_raw,) = [grid for grid in stretched[3] if grid.dataset.name == f"{LAKE}/raw"]
    assert _picture.UNCOUNTED in far_raw.row_gaps[1:-1], "between the two stretches"
