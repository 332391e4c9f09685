"""Ingest in chunks and worker processes: the same database and report, whatever the split.

Chunks are checked here or in worker processes and stored in input order, each with a few bulk
statements; a chunk boundary, a worker or a chunk that fails to store and is stored event by
event must change nothing in the database or the report, invalid and duplicate lines included.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import ingest
from openlineage_subset.lineage.ingestion import _ingest, _workers, _writer
from openlineage_subset.lineage.ingestion._workers import WorkerError
from tests.lineage.events import pipeline_history
from tests.lineage.mixed_inputs import ingest_all, inputs, tables


def test_workers_store_what_one_process_stores(tmp_path: Path) -> None:
    paths = inputs(tmp_path / "in")
    alone = ingest_all(paths, tmp_path / "alone.db", jobs=1)
    assert (alone[0]["invalid"], alone[0]["skipped"], alone[0]["unreadable"]) == (11, 2, 1)
    assert alone[0]["duplicates"] > 40
    assert "a lone surrogate" in alone[0]["problems"][4]["message"], "refused as validate does"
    assert alone[1]["access_conditions"], "some access has several conditions"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_ingest, "_CHUNK_BYTES", 2000)  # many chunks, for both workers and here
        assert ingest_all(paths, tmp_path / "workers.db", jobs=3) == alone
        assert ingest_all(paths, tmp_path / "one_by_one.db", jobs=1) == alone


def test_a_chunk_that_fails_is_stored_event_by_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = inputs(tmp_path / "in")
    alone = ingest_all(paths, tmp_path / "alone.db")
    original = _writer.Writer._store

    def once_whole(self: Any, events: list[Any], conditions: Any) -> Any:
        if len(events) > 1:
            original(self, events, conditions)  # half stored, then undone
            raise sqlite3.IntegrityError("a chunk that cannot be stored whole")
        return original(self, events, conditions)

    monkeypatch.setattr(_writer.Writer, "_store", once_whole)
    assert ingest_all(paths, tmp_path / "events.db") == alone


def test_jobs_is_a_number_of_processes(tmp_path: Path) -> None:
    for wrong in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="jobs is a number of processes"):
            ingest([], tmp_path / "lineage.db", jobs=wrong)  # type: ignore[arg-type]


def test_a_worker_that_stops_is_an_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = inputs(tmp_path / "in")
    monkeypatch.setattr(_workers, "_CODE", "import sys; sys.exit(3)")
    with pytest.raises(WorkerError, match=r"exit status 3"):
        ingest(paths, tmp_path / "lineage.db", jobs=2)
    assert tables(tmp_path / "lineage.db")["events"] == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_a_workers_pipes_hold_a_whole_chunk_each_way() -> None:
    limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    with _workers.Workers(1) as workers:
        process = workers.all[0].process
        assert process.stdin is not None and process.stdout is not None
        sizes = [
            fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ)
            for pipe in (process.stdin, process.stdout)
        ]
    # a chunk's lines (and far less of outcomes) pass at once, not a piece per thread switch
    assert (
        sizes == [min(_workers.PIPE_BYTES, limit)] * 2
        and _workers.PIPE_BYTES >= _ingest._CHUNK_BYTES
    )


def test_a_script_without_a_main_guard_can_use_workers(tmp_path: Path) -> None:
    paths = inputs(tmp_path / "in")
    script = tmp_path / "script.py"
    script.write_text(
        "import sys\n"
        "from openlineage_subset.lineage import ingest\n"
        "print('top-level code')\n"
        "print(ingest(sys.argv[2:], sys.argv[1], jobs=2).stored)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "lineage.db"), *map(str, paths)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    stored = ingest(paths, tmp_path / "again.db").as_json()["stored"]
    assert done.stdout == f"top-level code\n{stored}\n", "the workers never run the script"


def test_jobs_are_lowered_to_the_cpus_and_to_one_worker_per_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_ingest, "available_cpus", lambda: 4)
    small, large = 32 * 700, 100 * _ingest._CHUNK_BYTES  # 32 events; 100 chunks
    jobs, why = _ingest.job_count(100_000, small)
    assert jobs == 2, "this process stores, one worker checks the one chunk"
    assert why is not None and why.startswith("jobs 100000 lowered to 2: 1 chunk(s) of input")
    assert "CPU" not in why
    jobs, why = _ingest.job_count(100_000, large)
    assert (jobs, why) == (4, "jobs 100000 lowered to 4: 4 CPU(s) available to this process")
    assert _ingest.job_count(3, large) == (3, None), "nothing lowered, nothing said"
    assert _ingest.job_count(None, large) == (4, None), "the default: one per CPU"
    assert _ingest.job_count(None, small) == (1, None)


def test_the_cpus_available_are_those_of_the_affinity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert _ingest.available_cpus() == 2
    monkeypatch.delattr(os, "sched_getaffinity")
    assert _ingest.available_cpus() == 64


def _counting_workers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The worker processes ingest starts, from now on (more than 8: the test fails at once)."""
    started: list[Any] = []
    original = _workers.Worker

    class Counted(original):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            started.append(self)
            if len(started) > 8:
                raise AssertionError("more than 8 worker processes started")
            super().__init__()

    monkeypatch.setattr(_workers, "Worker", Counted)
    return started


def test_ingest_starts_no_more_workers_than_chunks_or_cpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _counting_workers(monkeypatch)
    monkeypatch.setattr(_ingest, "available_cpus", lambda: 64)
    source = tmp_path / "events.jsonl"
    source.write_text("".join(json.dumps(item) + "\n" for item in pipeline_history()[:32]))
    said = io.StringIO()
    report = ingest([source], tmp_path / "small.db", jobs=100_000, progress=said)
    assert report.stored == 32 and len(started) == 1, "one chunk: one worker"
    assert said.getvalue().count("jobs 100000 lowered to 2") == 1
    started.clear()
    monkeypatch.setattr(_ingest, "available_cpus", lambda: 3)
    monkeypatch.setattr(_ingest, "_CHUNK_BYTES", 2000)  # many chunks: the CPUs bound
    report = ingest([source], tmp_path / "large.db", jobs=100_000, progress=io.StringIO())
    assert report.stored == 32 and len(started) == 2, "3 CPUs: this process and 2 workers"


def test_the_command_line_says_once_that_jobs_were_lowered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _counting_workers(monkeypatch)
    source = tmp_path / "events.jsonl"
    source.write_text("".join(json.dumps(item) + "\n" for item in pipeline_history()[:32]))
    db = tmp_path / "lineage.db"
    assert main(["lineage", "ingest", str(source), "--db", str(db), "--jobs", "100000"]) == 0
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("ingest: jobs 100000 lowered to ")
    assert len(started) <= 1, "one chunk: one worker at most"
    assert "32 event(s) stored" in captured.out
