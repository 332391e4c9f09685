"""``ol-subset lineage report``: the picture agrees with the answer, and the page is inert.

The colours are checked against the impact and provenance answers themselves (computed by the
queries, not by the picture's own walk), and the page is parsed to show it holds no markup from
the events and asks for nothing over the network. tests/browser loads it in Chromium.
"""

from __future__ import annotations

import datetime as dt
import html.parser
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from openlineage_subset import __version__
from openlineage_subset.cli import main
from openlineage_subset.lineage import (
    PartitionSet,
    dataset_partitions,
    impact,
    provenance,
)
from openlineage_subset.report import report_html
from openlineage_subset.report._html import page
from openlineage_subset.report._picture import (
    MAX_DAYS,
    MAX_ROWS,
    Grid,
    Picture,
    impact_picture,
    overview_picture,
    provenance_picture,
)
from tests.lineage.conftest import Build
from tests.lineage.events import HOSTILE_NAME, LAKE, day, parts, pipeline_history, run

Cells = set[tuple[str, tuple[tuple[str, str], ...]]]


def _cells(picture: Picture, state: str) -> Cells:
    """(dataset name, partition) of every drawn cell in ``state``."""
    found: Cells = set()
    for grid in picture.grids:
        for (row, column), cell in grid.cells.items():
            if cell.state == state:
                found.add((grid.dataset.name, _dimensions(grid, row, column)))
    return found


def _dimensions(grid: Grid, row: str, column: str) -> tuple[tuple[str, str], ...]:
    assert grid.down is not None
    values = dict(zip(grid.across, column.split("/") if column else (), strict=True))
    return tuple(sorted({grid.down: row, **values}.items()))


def str_values(dimensions: Iterable[tuple[str, str | None]]) -> list[tuple[str, str]]:
    return sorted((name, str(value)) for name, value in dimensions)


def _of(parts_: Iterable[PartitionSet], label: str) -> Cells:
    return {
        (part.dataset.name, tuple(str_values(item.dimensions)))
        for part in parts_
        for item in (part.definite if label == "definite" else part.possible)
    }


def test_impact_colours_are_the_answer(lineage_db: Build) -> None:
    db = lineage_db(pipeline_history())
    start = {"day": "2024-10-05", "country": "DE"}
    answer = impact(db, "raw", partition=start)
    picture = impact_picture(db, "raw", partition=start)

    via = {
        (item.dataset.name, tuple(sorted(str_values(part.dimensions))))
        for item in answer.runs
        if item.label == "definite"
        for part in item.partitions or ()
    }
    affected = _of([answer.start, *answer.backfill], "definite") | via
    assert _cells(picture, "affected") == affected
    assert _cells(picture, "possible") == _of(answer.backfill, "possible") - affected
    assert (f"{LAKE}/raw", (("country", "FR"), ("day", "2024-10-05"))) in _cells(picture, "read")
    whole = {grid.dataset.name: grid.whole for grid in picture.grids if grid.whole}
    assert whole[f"{LAKE}/{HOSTILE_NAME}"].state == "possible"  # written whole by a possible run

    runs = [node for node in picture.nodes if node.kind == "run"]
    assert len(runs) == len(answer.runs)
    layers = {node.key: node.layer for node in picture.nodes}
    assert all(layers[edge.target] == layers[edge.source] + 1 for edge in picture.edges), (
        "compact reads and rewrites clean: the graph is unrolled, never a cycle"
    )


def test_a_failed_run_is_drawn_without_outputs(lineage_db: Build) -> None:
    db = lineage_db(pipeline_history(failed_day=4))
    picture = impact_picture(db, "raw", partition={"day": "2024-10-05", "country": "DE"})
    failed = [node for node in picture.nodes if node.state == "failed"]
    assert [node.title for node in failed] == ["rolling"]
    assert not [edge for edge in picture.edges if edge.source == failed[0].key]
    assert (f"{LAKE}/rolling", (("day", "2024-10-05"),)) not in _cells(picture, "affected")


def test_provenance_colours_are_the_answer(lineage_db: Build) -> None:
    db = lineage_db(pipeline_history())
    answer = provenance(db, "rolling", partition={"day": "2024-10-05"})
    picture = provenance_picture(db, "rolling", partition={"day": "2024-10-05"})

    read: Cells = set()
    todo = list(answer.writers)
    while todo:
        step = todo.pop()
        for item in step.inputs:
            read |= _of([item.partitions], "definite")
            todo.extend(item.writers)
    assert _cells(picture, "written") == _of([answer.target], "definite")
    assert _cells(picture, "read") == read
    assert {(f"{LAKE}/clean", (("day", f"2024-10-0{d}"),)) for d in (3, 4, 5)} <= read
    layers = {node.key: node.layer for node in picture.nodes}
    target = next(node for node in picture.nodes if node.state == "target")
    assert layers[target.key] == max(layers.values()), "inputs on the left, the target right"


def test_a_long_grid_draws_the_marked_rows_and_counts_the_rest(lineage_db: Build) -> None:
    batches = [f"batch-{number:04d}" for number in range(336)]
    events = [
        event
        for number, batch in enumerate(batches)
        for event in run(number + 1, number, number + 0.5, writes=[("daily", day(batch))])
    ]
    events += run(999, 1000, 1001, reads=[("daily", day(batches[200]))], writes=[("out", None)])
    db = lineage_db(events)
    (grid, *_) = impact_picture(db, "daily", partition={"day": batches[200]}).grids
    assert len(batches) > MAX_ROWS

    assert grid.rows == tuple(batches[198:203]), "the affected batch and its neighbours, no more"
    assert grid.row_gaps == (198, 0, 0, 0, 0, len(batches) - 203)
    assert grid.cells[(batches[200], "")].state == "affected"


def _days(first: dt.date, count: int) -> list[str]:
    return [(first + dt.timedelta(days=number)).isoformat() for number in range(count)]


def test_a_grid_of_days_draws_years_of_them_around_the_answer(lineage_db: Build) -> None:
    days = _days(dt.date(2021, 1, 1), MAX_DAYS + 365)
    events = [
        event
        for number, date in enumerate(days)
        for event in run(number + 1, number, number + 0.5, writes=[("daily", day(date))])
    ]
    marked = days[900]
    events += run(9999, 9999, 10000, reads=[("daily", day(marked))], writes=[("out", None)])
    db = lineage_db(events)
    (grid, *_) = impact_picture(db, "daily", partition={"day": marked}).grids

    assert len(grid.rows) == MAX_DAYS and marked in grid.rows
    start = days.index(grid.rows[0])
    assert grid.rows == tuple(days[start : start + MAX_DAYS]), "one stretch of days"
    assert grid.row_gaps == (start, *[0] * (MAX_DAYS - 1), len(days) - start - MAX_DAYS)
    assert grid.cells[(marked, "")].state == "affected"


class _Calendar(html.parser.HTMLParser):
    """Each grid table's header cells and rows (each row: its header texts, its cells' classes
    and titles)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, tuple[list[str], list[tuple[list[str], list[tuple[str, str]]]]]]
        self.tables = {}
        self._table = ""
        self._head = False
        self._th: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {key: value or "" for key, value in attrs}
        if tag == "table" and "grid" in found.get("class", ""):
            self._table = found["data-dataset"]
            self.tables[self._table] = ([], [])
        elif not self._table:
            return
        elif tag == "thead":
            self._head = True
        elif tag == "tr" and not self._head:
            self.tables[self._table][1].append(([], []))
        elif tag == "th":
            self._th = []
        elif tag == "td" and not self._head:
            self.tables[self._table][1][-1][1].append((found["class"], found.get("title", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = ""
        elif tag == "thead":
            self._head = False
        elif tag == "th" and self._th is not None and self._table:
            label = "".join(self._th)
            head, rows = self.tables[self._table]
            (head if self._head else rows[-1][0]).append(label)
            self._th = None

    def handle_data(self, data: str) -> None:
        if self._th is not None:
            self._th.append(data)


def test_a_grid_of_days_is_a_calendar_with_a_row_per_other_value(lineage_db: Build) -> None:
    days = _days(dt.date(2024, 9, 20), 50)
    countries = [f"C{number:02d}" for number in range(12)]
    events = [
        event
        for number, date in enumerate(days)
        for event in run(
            number + 1,
            number,
            number + 0.5,
            writes=[("sales", parts(*({"day": date, "country": c} for c in countries)))],
        )
    ]
    db = lineage_db(events)
    start = {"day": "2024-10-05", "country": "C03"}
    parsed = _Calendar()
    parsed.feed(page(impact_picture(db, "sales", partition=start)))
    head, rows = parsed.tables[f"file:{LAKE}/sales"]

    assert head[-31:] == [str(number) for number in range(1, 32)], "a column per day of a month"
    assert len(rows) == 3 * len(countries), "a row per country in each month's band"
    assert [row[0][-1] for row in rows] == countries * 3
    assert [row[0][0] for row in rows[:: len(countries)]] == ["2024-09", "2024-10", "2024-11"]
    for band, month in enumerate(("2024-09", "2024-10", "2024-11")):
        for place, country in enumerate(countries):
            cells = rows[band * len(countries) + place][1]
            assert len(cells) == 31
            for number, (state, title) in enumerate(cells, start=1):
                date = f"{month}-{number:02d}"
                if date in {"2024-09-31", "2024-11-31"}:
                    assert state == "void" and not title
                elif date not in days:
                    assert state == "none" and title.endswith("no such partition")
                else:
                    assert title.startswith(f"day={date}, country={country}")
                    affected = {"day": date, "country": country} == start
                    assert (state == "affected") == affected, (date, country, state)


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_the_page_is_inert_and_shows_hostile_names_as_text(lineage_db: Build) -> None:
    db = lineage_db(pipeline_history())
    picture = impact_picture(db, "raw", partition={"day": "2024-10-05", "country": "DE"})
    parsed = _Tags()
    parsed.feed(page(picture, source=db))

    names = {tag for tag, _ in parsed.tags}
    assert not names & {"script", "img", "iframe", "link", "object", "embed", "image"}
    assert not [
        (tag, key) for tag, attrs in parsed.tags for key in attrs if key.startswith("on")
    ], "no event handler attributes"
    references = {
        value
        for _, attrs in parsed.tags
        for key, value in attrs.items()
        if key in ("src", "href", "xlink:href", "marker-end", "action")
    }
    assert references <= {"url(#arrow)"}, "nothing to fetch"
    policy = [attrs for tag, attrs in parsed.tags if attrs.get("http-equiv")]
    assert policy and "default-src 'none'" in str(policy[0]["content"])
    assert f"file:{LAKE}/{HOSTILE_NAME}" in "".join(parsed.text)


def test_report_command(
    lineage_db: Build, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = lineage_db(pipeline_history(days=4))
    out = tmp_path / "impact.html"
    args = ["lineage", "report", "raw", "--partition", "day=2024-10-02", "--db", db]
    assert main([*args, "--html", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"wrote {out}: ") and out.read_text().startswith("<!DOCTYPE html>")

    assert main([*args, "--provenance", "--html", str(out)]) == 0
    assert "Provenance of" in out.read_text()

    assert main(["lineage", "report", "nothing", "--db", db, "--html", str(out)]) == 2
    assert "no dataset named 'nothing'" in capsys.readouterr().err
    assert main([*args, "--provenance", "--since", "2024-10-01", "--html", str(out)]) == 2
    assert "since is for impact" in capsys.readouterr().err
    assert main([*args, "--html", str(tmp_path / "missing" / "x.html")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_the_command_counts_the_runs_the_page_shows(
    lineage_db: Build, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = pipeline_history(days=3)
    runs = len({item["run"]["runId"] for item in events})
    db = lineage_db(events)
    out = tmp_path / "report.html"
    assert main(["lineage", "report", "--db", db, "--html", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}: {runs} run(s), ")
    assert f"job(s), {runs} run(s), " in out.read_text(), "the overview's summary"

    asked = ["lineage", "report", "raw", "--partition", "day=2024-10-02", "--db", db]
    assert main([*asked, "--html", str(out)]) == 0
    said = capsys.readouterr().out
    shown = re.search(r"(\d+) run\(s\) affected", out.read_text())
    assert shown is not None and said.startswith(f"wrote {out}: {shown[1]} run(s), ")


def test_report_html_from_python(lineage_db: Build) -> None:
    db = lineage_db(pipeline_history(days=4))
    shown = report_html(db, "rolling", provenance=True, partition={"day": "2024-10-03"})
    assert shown.startswith("<!DOCTYPE html>")
    assert "<h1>Provenance of file:/data/lake/rolling, partition(s) day=2024-10-03</h1>" in shown
    assert f"ol-subset {__version__} lineage report from {db}" in shown


def test_a_graph_too_large_is_cut_and_says_so(
    lineage_db: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = lineage_db(pipeline_history())
    whole = impact_picture(db, "raw")
    monkeypatch.setattr("openlineage_subset.report._picture.MAX_NODES", 5)
    cut = impact_picture(db, "raw")
    assert len(cut.nodes) == 5 and cut.hidden_nodes == len(whole.nodes) - 5
    assert {node.layer for node in cut.nodes} <= {0, 1}, "the first layers are kept"
    assert f"{len(whole.nodes) - 5} more node(s) not drawn" in page(cut)


def test_the_overview_shows_jobs_and_each_partition_s_last_writer(lineage_db: Build) -> None:
    db = lineage_db(pipeline_history(failed_day=9))
    picture = overview_picture(db)

    jobs = {node.title: node for node in picture.nodes if node.kind == "job"}
    assert sorted(jobs) == ["clean", "compact", "load", "report", "rolling"]
    assert jobs["load"].subtitle == "10 run(s), last COMPLETE"
    assert jobs["rolling"].state == "failed", "its last run failed"
    layers = {node.key: node.layer for node in picture.nodes}
    backwards = [e for e in picture.edges if layers[e.target] <= layers[e.source]]
    assert len(backwards) == 1, "only compact's rewrite of clean goes back"

    grids = {grid.dataset.name: grid for grid in picture.grids}
    assert set(grids) == {f"{LAKE}/{name}" for name in ("raw", "clean", "rolling", HOSTILE_NAME)}
    for name in ("raw", "clean", "rolling"):
        grid = grids[f"{LAKE}/{name}"]
        for state in dataset_partitions(db, name).partitions:
            dimensions = dict(state.partition.dimensions)
            column = "/".join(str(dimensions[c]) for c in grid.across)
            cell = grid.cells[(str(dimensions[str(grid.down)]), column)]
            if state.writer is None:
                assert cell.state == "known"
            else:
                assert cell.state == ("written" if state.label == "definite" else "possible")
                assert state.writer.run_id in cell.notes[-1]
    assert grids[f"{LAKE}/rolling"].cells[("2024-10-10", "")].state == "known", "its run failed"


def test_the_overview_takes_no_query_options(
    lineage_db: Build, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = lineage_db(pipeline_history(days=3))
    out = tmp_path / "overview.html"
    assert main(["lineage", "report", "--db", db, "--html", str(out)]) == 0
    assert "<h2>Jobs</h2>" in out.read_text()
    given = ["lineage", "report", "--db", db, "--html", str(out), "--partition", "day=x"]
    assert main(given) == 2
    assert "partition: name a dataset to ask about" in capsys.readouterr().err
