"""``dataset_partitions`` against its definition, evaluated on rows, and its cost.

The definition: a partition's last writer is the latest completed write that may have written
rows of it (``definite`` when it writes every row the partition may hold, else ``possible``),
and its readers are the runs started after that write ended (or ever, without one) that may
have read a row of it. The oracle evaluates each condition of the events written on every row
a partition may hold (its values, and each value of the other columns) with
:func:`~openlineage_subset.matches`, never with the lineage store's evaluation; the answers must
be the same, on random pipelines and on the test pipeline. Its cost must grow with the reads
and writes, not with their product by the partitions (a dataset page of three years of days by
30 countries took a minute of CPU).
"""

from __future__ import annotations

import datetime as dt
import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openlineage_subset import matches
from openlineage_subset.lineage import dataset_partitions, ingest
from openlineage_subset.lineage.engine._evaluation import Evaluation
from tests.lineage.events import HOSTILE_NAME, LAKE, Json, pipeline_history, write_events
from tests.lineage.pipelines import Step, pipeline_events, pipelines

SCHEMA = {"day": "date", "country": "string", "x": "int", "score": "double"}
VALUES = {
    "day": [f"2024-10-{number:02d}" for number in range(1, 19)],
    "country": ["DE", "FR", "PL"],
    "x": ["0", "1", "2", "3", "4"],  # around every literal the pipelines compare x with
    "score": ["0", "1"],  # on both sides of the report's filter, score > 0.5
}
"""Every value a row of the pipelines may have in each column."""

State = tuple[str | None, str | None, int]  # last writer's run id, label, reads since
Run = dict[str, Any]


def _runs(events: list[Json]) -> list[Run]:
    """Each run of the events: its start, end, status, and the conditions of what it read and
    wrote, by dataset (a list: an event without the facet adds none; none at all: whole)."""
    runs: dict[str, Run] = {}
    for item in events:
        found = runs.setdefault(
            item["run"]["runId"], {"start": None, "end": None, "status": None, "io": {}}
        )
        time = dt.datetime.fromisoformat(item["eventTime"].replace("Z", "+00:00"))
        if item["eventType"] == "START":
            found["start"] = time
        else:
            found["end"], found["status"] = time, item["eventType"]
        for direction, place, key in (
            ("input", "inputFacets", "inputCondition"),
            ("output", "outputFacets", "outputCondition"),
        ):
            for dataset in item[f"{direction}s"]:
                conditions = found["io"].setdefault((direction, dataset["name"]), [])
                subset = dataset.get(place, {}).get("subset")
                if subset is not None and subset[key] not in conditions:
                    conditions.append(subset[key])
    return [{"run_id": run_id, **run} for run_id, run in sorted(runs.items())]


def _listed(condition: Any) -> Iterator[dict[str, str]]:
    """The partitions a condition lists, anywhere in it."""
    if isinstance(condition, dict):
        if condition.get("type") == "partition":
            for item in condition["partitions"]:
                yield item["dimensions"]
        for value in condition.values():
            yield from _listed(value)
    elif isinstance(condition, list):
        for value in condition:
            yield from _listed(value)


def _rows(partition: dict[str, str]) -> list[dict[str, str]]:
    """Every row the partition may hold: its values, and each value of the other columns."""
    others = [column for column in VALUES if column not in partition]
    return [
        {**partition, **dict(zip(others, values, strict=True))}
        for values in itertools.product(*(VALUES[column] for column in others))
    ]


def _selected(conditions: list[Any], rows: list[dict[str, str]]) -> str:
    """Of the rows: ``all``, ``some`` or ``none`` selected by the conditions (OR'ed; none:
    the whole dataset)."""
    if not conditions:
        return "all"
    chosen = [any(matches(c, row, SCHEMA) for c in conditions) for row in rows]
    return "all" if all(chosen) else ("some" if any(chosen) else "none")


def _by_definition(events: list[Json], dataset: str) -> dict[tuple[Any, ...], State]:
    name = f"{LAKE}/{dataset}"
    runs = _runs(events)
    known = {
        tuple(sorted(partition.items()))
        for run in runs
        for (_, where), conditions in run["io"].items()
        if where == name
        for condition in conditions
        for partition in _listed(condition)
    }
    completed = sorted(
        (run for run in runs if run["status"] == "COMPLETE" and ("output", name) in run["io"]),
        key=lambda run: (run["end"], run["run_id"]),
        reverse=True,
    )
    states: dict[tuple[Any, ...], State] = {}
    for partition in known:
        rows = _rows(dict(partition))
        writer, label = None, None
        for run in completed:
            written = _selected(run["io"][("output", name)], rows)
            if written != "none":
                writer, label = run, "definite" if written == "all" else "possible"
                break
        readers = {
            run["run_id"]
            for run in runs
            if ("input", name) in run["io"]
            and (writer is None or run["start"] > writer["end"])
            and _selected(run["io"][("input", name)], rows) != "none"
        }
        states[partition] = (None if writer is None else writer["run_id"], label, len(readers))
    return states


def _same(db: Path, events: list[Json], dataset: str) -> None:
    report = dataset_partitions(db, dataset)
    found = {
        tuple(sorted(state.partition.dimensions)): (
            None if state.writer is None else state.writer.run_id,
            state.label,
            state.reads_since,
        )
        for state in report.partitions
    }
    assert found == _by_definition(events, dataset)


@settings(deadline=None)
@given(pipelines(), st.data())
def test_each_partition_s_writer_and_readers_are_as_defined(
    pipeline: tuple[int, list[Step]], data: st.DataObject
) -> None:
    datasets, steps = pipeline
    events = pipeline_events(datasets, steps)
    with tempfile.TemporaryDirectory() as folder:
        source = write_events(Path(folder) / "events.jsonl", events)
        db = Path(folder) / "lineage.db"
        assert ingest([source], db).invalid == 0
        _same(db, events, f"d{data.draw(st.integers(0, datasets - 1))}")


def test_the_test_pipeline_s_partitions_are_as_defined(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    events = pipeline_history(12)
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    for dataset in ("raw", "clean", "rolling", HOSTILE_NAME):
        _same(db, events, dataset)


def _overlaps(tmp_path: Path, days: int, monkeypatch: pytest.MonkeyPatch) -> int:
    db = tmp_path / f"lineage{days}.db"
    ingest([write_events(tmp_path / f"events{days}.jsonl", pipeline_history(days))], db)
    calls = 0
    original = Evaluation.overlap

    def counted(self: Evaluation, access: Any, unit: Any) -> bool | None:
        nonlocal calls
        calls += 1
        return original(self, access, unit)

    monkeypatch.setattr(Evaluation, "overlap", counted)
    for dataset in ("raw", "clean", "rolling", HOSTILE_NAME):
        dataset_partitions(db, dataset)
    monkeypatch.undo()
    return calls


def test_the_work_grows_with_the_history_not_with_its_square(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, large = _overlaps(tmp_path, 6, monkeypatch), _overlaps(tmp_path, 18, monkeypatch)
    assert large < 4 * max(small, 1), (small, large)  # three times the days: about three times
