"""provenance(), history(), dataset_partitions(), and how a dataset is named."""

from __future__ import annotations

import pytest

from openlineage_subset.lineage import (
    LineageQueryError,
    dataset_partitions,
    history,
    impact,
    provenance,
)
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, compare, day, event, parts, run, run_id

PIPELINE = [
    *run(1, 0, 1, writes=[("raw", day("d1"))]),
    *run(2, 2, 3, writes=[("raw", day("d1"))]),  # the latest writer of raw/d1
    *run(3, 4, 5, reads=[("raw", day("d1"))], writes=[("mid", day("d1"))]),
    *run(4, 6, 7, reads=[("mid", compare("x", "EQUAL", "1"))], writes=[("out", day("d1"))]),
    *run(5, 8, 9, reads=[("out", None)], writes=[("out", compare("x", "EQUAL", "2"))]),
]


def test_provenance_tree(lineage_db: Build) -> None:
    db = lineage_db(PIPELINE)
    steps = provenance(db, "out", partition={"day": "d1"}).writers
    assert [(int(s.run.run_id[-12:]), s.label, s.repeated) for s in steps] == [
        (5, "possible", False),
        (4, "definite", True),
    ]
    (read_out,) = steps[0].inputs
    assert [(int(w.run.run_id[-12:]), w.repeated) for w in read_out.writers] == [(4, False)]
    (read_mid,) = read_out.writers[0].inputs
    assert [str(p) for p in read_mid.partitions.possible] == ["day=d1"]
    (writer_3,) = read_mid.writers
    (read_raw,) = writer_3.inputs
    assert [str(p) for p in read_raw.partitions.definite] == ["day=d1"]
    assert [int(w.run.run_id[-12:]) for w in read_raw.writers] == [2], "run 1 was overwritten"


def test_provenance_depth_and_cycles(lineage_db: Build) -> None:
    events = []
    for number in range(1, 5):
        events += run(
            number,
            10 * number,
            10 * number + 5,
            reads=[("t", day("d1"))],
            writes=[("t", day("d1"))],
        )
    db = lineage_db(events)
    chain = provenance(db, "t", partition={"day": "d1"})
    numbers = []
    steps = chain.writers
    while steps:
        numbers.append(int(steps[0].run.run_id[-12:]))
        steps = steps[0].inputs[0].writers
    assert numbers == [4, 3, 2, 1]
    shallow = provenance(db, "t", partition={"day": "d1"}, depth=2)
    assert shallow.writers[0].inputs[0].writers[0].truncated
    assert shallow.writers[0].inputs[0].writers[0].inputs[0].writers == ()


def test_history_lists_reads_and_writes_in_time_order(lineage_db: Build) -> None:
    db = lineage_db(PIPELINE)
    entries = history(db, "mid", partition={"day": "d1"}).entries
    assert [(int(e.run.run_id[-12:]), e.direction, e.label) for e in entries] == [
        (3, "write", "definite"),
        (4, "read", "possible"),
    ]
    assert entries[0].condition == "PARTITION (day = 'd1')"
    assert entries[1].condition == "x = 1"
    everything = history(db, "out").entries
    assert [(int(e.run.run_id[-12:]), e.direction) for e in everything] == [
        (4, "write"),
        (5, "read"),
        (5, "write"),
    ]
    assert everything[1].condition is None


def test_history_leaves_out_what_cannot_overlap(lineage_db: Build) -> None:
    db = lineage_db([*run(1, 0, 1, writes=[("a", parts({"day": "d1"}, {"day": "d2"}))])])
    assert len(history(db, "a", partition={"day": "d1"}).entries) == 1
    assert history(db, "a", partition={"day": "d3"}).entries == ()


def test_partitions_show_last_writer_and_reads_since(lineage_db: Build) -> None:
    db = lineage_db(
        [
            *PIPELINE,
            *run(6, 1.5, 1.7, reads=[("raw", day("d1"))]),  # before run 2 completed: not counted
            *run(7, 3.5, 3.7, reads=[("raw", day("d2"))]),
        ]
    )
    states = {str(s.partition): s for s in dataset_partitions(db, "raw").partitions}
    assert set(states) == {"day=d1", "day=d2"}
    assert states["day=d1"].writer is not None
    assert states["day=d1"].writer.run_id == run_id(2)
    assert (states["day=d1"].label, states["day=d1"].reads_since) == ("definite", 1)
    assert (states["day=d2"].writer, states["day=d2"].reads_since) == (None, 1)


def test_a_dataset_is_found_by_the_end_of_its_name(lineage_db: Build) -> None:
    db = lineage_db([*run(1, 0, 1, writes=[("sales", None), ("eu/sales", None)])])
    assert history(db, "lake/sales").target.dataset.name == f"{LAKE}/sales"
    assert history(db, "eu/sales").target.dataset.name == f"{LAKE}/eu/sales"
    with pytest.raises(LineageQueryError, match=r"names 2 datasets[\s\S]*eu/sales"):
        history(db, "sales")
    with pytest.raises(LineageQueryError, match=r"no dataset named 'sale'[\s\S]*like it") as raised:
        history(db, "sale")
    # Each dataset suggested in a form a question takes: as answers print it.
    suggested = str(raised.value).split("like it:\n")[1].split("\n")
    assert f"  file:{LAKE}/sales" in suggested
    assert all(history(db, line.strip()).entries is not None for line in suggested)
    with pytest.raises(LineageQueryError, match="in namespace 's3://b'"):
        history(db, "lake/sales", namespace="s3://b")
    assert history(db, f"{LAKE}/sales", namespace="file").entries


def test_json_answers_have_stable_keys(lineage_db: Build) -> None:
    db = lineage_db([*PIPELINE, event(9, "START", 20, job="late", reads=[("out", None)])])
    answer = impact(db, "raw", partition={"day": "d1"}).as_json()
    assert list(answer) == ["query", "start", "since", "depth", "runs", "backfill", "seen", "tasks"]
    first = answer["runs"][0]
    assert list(first) == [
        "runId",
        "job",
        "status",
        "startedAt",
        "endedAt",
        "label",
        "hops",
        "via",
        "mappedBy",
    ]
    assert first["startedAt"] == "2024-10-15T00:04:00Z"
    assert list(first["via"]) == ["dataset", "partitions", "condition", "upstreamRunId"]
    assert list(answer["backfill"][0]) == ["dataset", "whole", "definite", "possible"]
    assert answer["runs"][-1]["endedAt"] is None
    tree = provenance(db, "out").as_json()
    assert list(tree["writers"][0]) == [
        "runId",
        "job",
        "status",
        "startedAt",
        "endedAt",
        "label",
        "dataset",
        "condition",
        "repeated",
        "truncated",
        "inputs",
    ]
    assert list(dataset_partitions(db, "raw").as_json()["partitions"][0]) == [
        "dimensions",
        "identifier",
        "lastWriter",
        "label",
        "readsSince",
    ]
