"""``dataset_partitions`` against its definition, and its cost.

The definition, evaluated the slow way (each partition against each write and each read): a
partition's last writer is the latest completed write whose condition may select it (surely or
possibly), and its readers are the runs started after that write ended (or ever, without one)
whose read may select it. ``dataset_partitions`` evaluates each write and read once instead;
the answers must be the same, on random pipelines and on the test pipeline. Its cost must grow
with the reads and writes, not with their product by the partitions (a dataset page of three
years of days by 30 countries took a minute of CPU).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from openlineage_subset.lineage import dataset_partitions, ingest
from openlineage_subset.lineage._arguments import open_store
from openlineage_subset.lineage._graph import Graph
from openlineage_subset.lineage._model import PartitionsReport, PartitionState
from tests.lineage.events import HOSTILE_NAME, pipeline_history, write_events
from tests.lineage.pipelines import Step, pipeline_events, pipelines


def _by_definition(db: Path, dataset: str) -> list[PartitionState]:
    store, _ = open_store(db)
    try:
        graph = Graph(store)
        dataset_id = graph.resolve(dataset, None)
        writes = sorted(
            (
                write
                for write in graph.accesses(dataset_id, "output")
                if write.run.status == "COMPLETE" and write.run.ended_at is not None
            ),
            key=lambda write: (write.run.ended_at or "", write.run.run_id),
            reverse=True,
        )
        states = []
        for unit in graph.known(dataset_id):
            writer = next((w for w in writes if graph.overlap(w, unit) is not False), None)
            label = None
            if writer is not None:
                label = "definite" if graph.overlap(writer, unit) else "possible"
            after = None if writer is None else writer.run.ended_at
            readers = {
                read.run.run_id
                for read in graph.accesses(dataset_id, "input")
                if (after is None or read.run.started_at > after)
                and graph.overlap(read, unit) is not False
            }
            states.append(
                PartitionState(
                    graph.partition_refs(dataset_id, [unit])[0],
                    None if writer is None else writer.run,
                    label,  # type: ignore[arg-type]
                    len(readers),
                )
            )
    finally:
        store.close()
    return sorted(states, key=_key)


def _key(state: PartitionState) -> str:
    return repr(state.partition.dimensions)


def _same(db: Path, dataset: str) -> None:
    report: PartitionsReport = dataset_partitions(db, dataset)
    assert sorted(report.partitions, key=_key) == _by_definition(db, dataset)


@settings(deadline=None)
@given(pipelines(), st.data())
def test_each_partition_s_writer_and_readers_are_as_defined(
    pipeline: tuple[int, list[Step]], data: st.DataObject
) -> None:
    datasets, steps = pipeline
    with tempfile.TemporaryDirectory() as folder:
        events = write_events(Path(folder) / "events.jsonl", pipeline_events(datasets, steps))
        db = Path(folder) / "lineage.db"
        assert ingest([events], db).invalid == 0
        _same(db, f"d{data.draw(st.integers(0, datasets - 1))}")


def test_the_test_pipeline_s_partitions_are_as_defined(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", pipeline_history(12))], db)
    for dataset in ("raw", "clean", "rolling", HOSTILE_NAME):
        _same(db, dataset)


def _overlaps(tmp_path: Path, days: int, monkeypatch: object) -> int:
    db = tmp_path / f"lineage{days}.db"
    ingest([write_events(tmp_path / f"events{days}.jsonl", pipeline_history(days))], db)
    calls = 0
    original = Graph.overlap

    def counted(self: Graph, access: object, unit: object) -> object:
        nonlocal calls
        calls += 1
        return original(self, access, unit)  # type: ignore[arg-type]

    monkeypatch.setattr(Graph, "overlap", counted)  # type: ignore[attr-defined]
    for dataset in ("raw", "clean", "rolling", HOSTILE_NAME):
        dataset_partitions(db, dataset)
    monkeypatch.undo()  # type: ignore[attr-defined]
    return calls


def test_the_work_grows_with_the_history_not_with_its_square(
    tmp_path: Path, monkeypatch: object
) -> None:
    small, large = _overlaps(tmp_path, 6, monkeypatch), _overlaps(tmp_path, 18, monkeypatch)
    assert large < 4 * max(small, 1), (small, large)  # three times the days: about three times
