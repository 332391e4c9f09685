"""A partition asked about among thousands: found by its typed value, never by comparing it with
every known partition, and exactly what comparing with each would find.

A write listing 2,000 partitions of a numeric column (``part=N``) made an impact answer ask
``partition_overlap`` of each listed partition against every known one: four million
evaluations, minutes for one answer. The catalog now looks each up by a key of its values
(numbers by value, dates and text by text); these tests hold the lookup to the evaluator (the
answer of each-to-each) on values of every kind, and count the evaluations.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openlineage_subset import partition_overlap
from openlineage_subset.lineage import LineageStore, impact, ingest
from openlineage_subset.lineage.engine import _partition_catalog
from openlineage_subset.lineage.engine._partition_catalog import PartitionCatalog
from tests.lineage.events import LAKE, parts, run, write_events

# Spellings that the evaluator reads as equal, or nearly: numbers (7 is 07 and 7.0), dates
# (2024-1-1 is no ISO date: text), text that looks like them, and null.
VALUES = st.sampled_from(
    ["7", "07", "7.0", "+7", "1e1", "10", "2024-01-01", "2024-1-1", "2024-02-30", "x", "X", None]
)


def _store(tmp_path: Path, written: list[dict[str, str | None]]) -> Path:
    events = run(1, 0, 1, writes=[("t", parts(*written))], job="load")
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    return db


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    known=st.lists(st.tuples(VALUES, VALUES), min_size=1, max_size=10, unique=True),
    asked=st.tuples(VALUES, VALUES),
)
def test_the_partitions_found_are_those_the_evaluator_finds_one_by_one(
    tmp_path_factory: object,
    known: list[tuple[str | None, str | None]],
    asked: tuple[str | None, str | None],
) -> None:
    tmp_path = tmp_path_factory.mktemp("equality")  # type: ignore[attr-defined]
    db = _store(tmp_path, [{"day": a, "part": b} for a, b in known])
    wanted = {"day": asked[0], "part": asked[1]}
    listed = {"type": "partition", "partitions": [{"dimensions": wanted}]}
    with LineageStore.open(db) as store:
        (dataset_id,) = store.connection.execute("SELECT dataset_id FROM datasets").fetchone()
        partitions = PartitionCatalog(store.connection).of(dataset_id)
        found = partitions.expand(wanted)
        each = [unit for unit in partitions.known() if _selects(listed, unit)]
    itself = tuple(sorted(wanted.items()))
    assert sorted(found, key=repr) == sorted(each or [itself], key=repr)


def _selects(listed: dict[str, object], unit: tuple[tuple[str, str | None], ...]) -> bool:
    try:
        return partition_overlap(listed, dict(unit)) is True
    except (ValueError, TypeError):
        return False


def test_a_write_of_thousands_of_partitions_costs_evaluations_in_proportion(
    tmp_path: Path, monkeypatch: object
) -> None:
    """The impact of one partition through a run that read and wrote 2,000 partitions of a
    numeric column: the partitions it recomputes found by key, each evaluated once at most
    (it was each against each: 4,000,000)."""
    count = 2000
    listed = parts(*({"day": "2024-01-01", "part": str(n)} for n in range(count)))
    events = [
        *run(1, 0, 1, writes=[("t", listed)], job="load"),
        *run(2, 2, 3, reads=[("t", listed)], writes=[("u", listed)], job="agg"),
    ]
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    calls = []
    evaluate = _partition_catalog.partition_overlap

    def counted(*arguments: object, **options: object) -> object:
        calls.append(1)
        if len(calls) > count:  # fails at once, rather than after minutes of each-to-each
            raise AssertionError(f"over {count} evaluations for {count} partitions")
        return evaluate(*arguments, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(_partition_catalog, "partition_overlap", counted)  # type: ignore[attr-defined]
    answer = impact(db, f"{LAKE}/t", partition={"day": "2024-01-01", "part": "7"})
    (plan,) = [item for item in answer.backfill if item.dataset.name == f"{LAKE}/u"]
    assert len(plan.definite) + len(plan.possible) == count
    assert len(calls) <= count
