"""A grid cell names its partition as every other text does: its columns in the dataset's order
(``day=..., country=...``), whichever of them the grid draws down (the one with most values),
in both forms a grid takes (a table, a calendar)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from openlineage_subset.lineage import DatasetRef
from openlineage_subset.report._cells import GridCell
from openlineage_subset.report._grids import grid_html
from openlineage_subset.report._picture import arranged

DATASET = DatasetRef("file", "/lake/sales")


@pytest.mark.parametrize(
    ("days", "countries"),
    [
        (["2024-10-15", "2024-10-16"], ["DE", "FR", "IT", "PL", "US"]),  # countries down
        ([f"2024-10-{n:02d}" for n in range(1, 9)], ["DE", "FR"]),  # a calendar of days
        (["d1", "d2"], ["DE", "FR", "IT"]),  # a table, countries down
    ],
)
def test_each_cell_names_its_partition_in_the_dataset_s_column_order(
    days: list[str], countries: list[str]
) -> None:
    units = {
        (("day", day), ("country", country)): GridCell("read", (f"read by run {day}",))
        for day, country in itertools.product(days, countries)
    }
    grid = arranged(DATASET, units, ["day", "country"])
    titles = [
        title.split("&#10;")[0].split("\n")[0]
        for title in re.findall(r'<td[^>]* title="([^"]*)"', grid_html(grid))
    ]
    named = [title for title in titles if "no such partition" not in title]
    assert len(named) == len(units)
    assert all(re.fullmatch(r"day=[^,]+, country=[A-Z]{2}", title) for title in named), named


def test_a_dataset_with_a_column_of_dates_is_a_calendar_whatever_part_an_answer_draws() -> None:
    # Two days of five countries and eight days of two: one form for the dataset, the days down
    # (a calendar), where the column with most values went down before.
    for days, countries in ((2, 5), (8, 2), (1, 30)):
        units = {
            (("day", f"2024-10-{day + 1:02d}"), ("country", f"C{country:02d}")): GridCell(
                "read", ()
            )
            for day, country in itertools.product(range(days), range(countries))
        }
        assert arranged(DATASET, units, ["day", "country"]).down == "day", (days, countries)
        assert '<tr class="month">' in grid_html(arranged(DATASET, units, ["day", "country"]))
    # No column of dates: the one with most values down, as before.
    units = {
        (("region", region), ("shop", f"s{shop}")): GridCell("read", ())
        for region, shop in itertools.product(("eu", "us"), range(6))
    }
    assert arranged(DATASET, units, ["region", "shop"]).down == "shop"


def test_an_answer_s_grid_drawn_from_the_column_values_names_cells_in_order(
    tmp_path: Path,
) -> None:
    # The answer's grid laid out from each column's values alone (not every partition), shops
    # down (more values) after region in the dataset's order.
    from openlineage_subset.lineage import ingest
    from openlineage_subset.report._picture import impact_picture
    from tests.lineage.events import parts, run, write_events

    shops = parts(*({"region": r, "shop": f"s{n}"} for r in ("eu", "us") for n in range(6)))
    events = [
        *run(1, 0, 1, writes=[("shops", shops)]),
        *run(2, 2, 3, reads=[("shops", parts({"region": "eu", "shop": "s1"}))]),
    ]
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    picture = impact_picture(db, "shops", partition={"region": "eu", "shop": "s1"})
    (grid,) = [grid for grid in picture.grids if grid.dataset.name.endswith("/shops")]
    assert (grid.down, grid.down_last) == ("shop", True)
    titles = [
        title.split("&#10;")[0].split("\n")[0]
        for title in re.findall(r'<td[^>]* title="([^"]*)"', grid_html(grid))
    ]
    named = [title for title in titles if "no such partition" not in title]
    assert len(named) == 12
    assert all(re.fullmatch(r"region=(eu|us), shop=s\d", title) for title in named), named
