"""An overwrite of a whole partitioned dataset, as capture reports it: all of it (its root, a
``location``) OR the partitions it left, listed. The store knows each partition it left, even
one nobody read since, and the write is the latest writer of every partition there was."""

from __future__ import annotations

from openlineage_subset.lineage import dataset_partitions, impact, incidents, provenance
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, Json, both, day, parts, run, run_id

ROOT = {"type": "location", "locations": [f"file:{LAKE}/sales"]}


def test_every_partition_an_overwrite_left_is_known_and_it_wrote_all_of_them(
    lineage_db: Build,
) -> None:
    db = lineage_db(
        [
            *run(1, 0, 5, writes=[("sales", parts({"day": "d1"}, {"day": "d2"}))]),
            # Whole overwrite: d2 deleted, d1 rewritten, d3 new (read by nobody yet).
            *run(
                2, 10, 15, writes=[("sales", both(ROOT, "OR", parts({"day": "d1"}, {"day": "d3"})))]
            ),
            *run(3, 20, 25, reads=[("sales", day("d1"))], writes=[("out", None)]),
        ]
    )
    states = {
        state.partition.identifier: state for state in dataset_partitions(db, "sales").partitions
    }
    assert sorted(states) == ["day=d1", "day=d2", "day=d3"]
    assert {
        key: (state.writer.run_id if state.writer else None) for key, state in states.items()
    } == {key: run_id(2) for key in states}
    # d2 is gone: the overwrite replaced it, which is what its provenance says.
    assert [
        step["runId"]
        for step in provenance(db, "sales", partition={"day": "d2"}).as_json()["writers"]
    ] == [run_id(2)]
    # Only d1 was read since: the impact of d3, there and known, names no reader.
    assert impact(db, "sales", partition={"day": "d3"}).as_json()["runs"] == []
    assert [
        item["runId"] for item in impact(db, "sales", partition={"day": "d1"}).as_json()["runs"]
    ] == [run_id(3)]


def test_a_failed_whole_write_is_left_until_a_later_completed_whole_write(
    lineage_db: Build,
) -> None:
    """The front page's incidents: a failed run that wrote the whole dataset (no facet) left it
    as its last write until a run started after it completes a whole write of it; an earlier
    completed whole write, a later failed one, or a later write of some partitions does not
    rewrite it."""
    history = [
        *run(1, 0, 1, writes=[("t", None)], job="load"),  # completed whole, before
        *run(2, 2, 3, writes=[("t", None)], status="FAIL", job="load"),
        *run(3, 4, 5, writes=[("t", None)], status="FAIL", job="again"),  # failed, after
        *run(4, 6, 7, writes=[("t", day("2024-10-01"))], job="some"),  # some partitions
    ]

    def left(events: list[Json]) -> dict[str, bool]:
        found = incidents(lineage_db(events))
        return {item.run.run_id: any(w.whole for w in item.writes) for item in found.runs}

    assert left(history) == {run_id(2): True, run_id(3): True}
    rewritten = [*history, *run(5, 8, 9, writes=[("t", None)], job="load")]
    assert left(rewritten) == {run_id(2): False, run_id(3): False}
