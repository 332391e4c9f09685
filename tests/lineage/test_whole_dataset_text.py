"""A dataset with no known partition is said to be so with why: written whole by every run (a
dbt model), written under conditions that name no partition, or never written by a recorded
run; never "no partition known" alone as if nothing were written."""

from __future__ import annotations

import pytest

from openlineage_subset.lineage import dataset_partitions, no_partitions_note, partitions_text
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, Json, compare, run

AMOUNT = compare("amount", "GREATER_THAN", "0")


@pytest.mark.parametrize(
    ("writes", "expected", "hint"),
    [
        (
            [None, None],
            "Written whole by every run (2 write(s)): no partitions.",
            "Ask about the whole dataset: ol-subset lineage impact",
        ),
        (
            [None, AMOUNT],
            "No partition known: 1 of its 2 write(s) had a condition that names no partition "
            "(a filter, or a location read as no partition).",
            "Its writes and their conditions: ol-subset lineage history",
        ),
        ([], "No partition known: no recorded run wrote it, and no read listed one.", None),
    ],
)
def test_a_dataset_without_partitions_says_how_it_was_written(
    lineage_db: Build, writes: list[Json | None], expected: str, hint: str | None
) -> None:
    events = [
        *(
            event
            for n, cond in enumerate(writes)
            for event in run(n + 1, 10 * n, 10 * n + 5, writes=[("model", cond)])
        ),
        *run(9, 100, 105, reads=[("model", None)]),
    ]
    db = lineage_db(events)
    report = dataset_partitions(db, f"{LAKE}/model")
    assert report.partitions == ()
    assert (report.writes, report.whole_writes) == (
        len(writes),
        sum(cond is None for cond in writes),
    )
    assert no_partitions_note(report) == expected
    lines = partitions_text(report)
    assert lines[2] == expected
    assert "no read or write listed one" not in "\n".join(lines)
    if hint is None:
        assert len(lines) == 3
    else:
        assert lines[3] == f"{hint} {LAKE}/model"
    answer = report.as_json()
    assert (answer["writes"], answer["wholeWrites"]) == (report.writes, report.whole_writes)
