"""impact() against a brute-force oracle that follows individual rows through random pipelines.

The oracle knows every row (dataset, day, country, x), which run wrote it and when it became
readable, and evaluates each read condition on whole rows with ``matches()``. Writes add rows
(impact cannot tell an overwrite from an append, so it never assumes one). A run is affected
when it read an affected row: a row of the starting region (if the run started at or after the
start time) or a row written by an affected run that completed before it started.

- soundness: every run the oracle finds affected is in impact's answer;
- precision, when every condition is on partition columns (or a partition list) and the start is
  a partition: impact lists no other run, and labels none possible.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset import matches
from openlineage_subset.lineage import impact, ingest
from tests.lineage.events import at, compare, run_id, write_events
from tests.lineage.pipelines import (
    DAYS,
    LOAD_END,
    PARTITIONS,
    SCHEMA,
    XS,
    Step,
    partition_list,
    pipeline_events,
    pipelines,
)

starts = st.tuples(
    st.one_of(
        st.none(),
        st.sampled_from(DAYS).map(lambda d: {"day": d}),
        st.sampled_from(PARTITIONS).map(lambda p: {"day": p[0], "country": p[1]}),
    ),
    st.one_of(st.none(), st.integers(0, 100)),
)


@dataclasses.dataclass(frozen=True)
class Row:
    dataset: int
    day: str
    country: str
    x: str
    readable_after: int
    seed_only: bool = False
    writer: int | None = None  # the step that wrote it (None: loaded at the start)


def _oracle(
    datasets: int, steps: list[Step], seed: int, region: dict[str, str] | None, since: int | None
) -> set[int]:
    loaded = [
        Row(dataset, d, c, x, LOAD_END)
        for dataset in range(datasets)
        for (d, c) in PARTITIONS
        for x in XS
    ]
    written = [
        Row(step.write, d, c, x, step.end, writer=number)
        for number, step in enumerate(steps)
        if not step.failed
        for (d, c) in step.wrote
        for x in step.xs
    ]

    def in_region(row: Row) -> bool:
        return row.dataset == seed and all(
            getattr(row, column) == value for column, value in (region or {}).items()
        )

    def selects(step: Step, row: Row) -> bool:
        if step.condition is None:
            return True
        values = {"day": row.day, "country": row.country, "x": row.x}
        return matches(step.condition, values, SCHEMA)

    affected: set[int] = set()
    changed = True
    while changed:
        changed = False
        for number, step in enumerate(steps):
            if number in affected:
                continue
            for row in loaded + written:
                if row.dataset != step.read or row.readable_after >= step.start:
                    continue
                if not selects(step, row):
                    continue
                from_start = in_region(row) and (since is None or step.start >= since)
                if from_start or (row.writer is not None and row.writer in affected):
                    affected.add(number)
                    changed = True
                    break
    return affected


@given(pipelines(), starts, st.data())
def test_impact_is_sound_and_exact_on_partition_columns(
    pipeline: tuple[int, list[Step]], start: tuple[dict[str, str] | None, int | None], data: Any
) -> None:
    datasets, steps = pipeline
    region, since_minute = start
    _check(datasets, steps, data.draw(st.integers(0, datasets - 1)), region, since_minute)


def test_rows_two_runs_wrote_at_once_are_each_their_writer_s() -> None:
    # Found by the test above: two runs append the same rows to d0 at minute 21, one of them
    # affected; later readers of those rows are affected (the oracle once took every such row
    # for the first writer's).
    partition = partition_list([("2024-10-14", "DE")])
    wrote = (("2024-10-14", "DE"),)
    steps = [
        Step(0, partition, True, 0, wrote, ("1",), 10, 21, failed=False),
        Step(1, compare("day", "EQUAL", "2024-10-16"), True, 0, wrote, ("1",), 20, 21, False),
        *(Step(0, partition, True, 0, wrote, ("1",), start, start + 1, True) for start in (30, 40)),
    ]
    assert _oracle(2, steps, 1, {"day": "2024-10-16", "country": "DE"}, None) == {1, 2, 3}
    _check(2, steps, 1, {"day": "2024-10-16", "country": "DE"}, None)


def _check(
    datasets: int,
    steps: list[Step],
    seed: int,
    region: dict[str, str] | None,
    since_minute: int | None,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        events = write_events(Path(folder) / "events.jsonl", pipeline_events(datasets, steps))
        db = Path(folder) / "lineage.db"
        assert ingest([events], db).invalid == 0
        report = impact(
            db,
            f"d{seed}",
            partition=region,
            since=None if since_minute is None else at(since_minute),
        )
    found = {item.run.run_id: item.label for item in report.runs}
    expected = _oracle(datasets, steps, seed, region, since_minute)
    missing = {run_id(number) for number in expected} - set(found)
    assert not missing, f"impact missed runs the oracle found affected: {sorted(missing)}"
    if region is not None and all(step.on_partitions for step in steps):
        assert set(found) == {run_id(number) for number in expected}, "extra runs"
        assert set(found.values()) <= {"definite"}, "a decidable overlap labelled possible"
