"""ol-subset lineage: exit codes, text a person reads, JSON as documented, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from openlineage_subset.cli import main
from tests.lineage.events import compare, day, run, write_events

EVENTS = [
    *run(1, 0, 1, writes=[("raw/sales", day("2024-10-15"))]),
    *run(2, 2, 3, reads=[("raw/sales", day("2024-10-15"))], writes=[("daily", day("2024-10-15"))]),
    *run(3, 4, 5, reads=[("daily", compare("amount", "GREATER_THAN", "100"))], status="FAIL"),
]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["lineage", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return status, captured.out, captured.err


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    source = write_events(tmp_path / "events.jsonl", EVENTS)
    path = str(tmp_path / "lineage.db")
    status, out, _ = _run(capsys, "ingest", str(source), "--db", path)
    assert status == 0
    assert "6 event(s) stored, 0 already there, 0 invalid" in out
    return path


def test_ingest_reports_invalid_lines_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "events.jsonl"
    source.write_text(json.dumps(EVENTS[0]) + "\n[]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    status, out, _ = _run(capsys, "ingest", str(source))
    assert status == 1
    assert f"{source}:2: expected an OpenLineage RunEvent" in out
    assert (tmp_path / "lineage.db").is_file(), "the default database is lineage.db, here"


def test_ingest_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_events(tmp_path / "events.jsonl", EVENTS)
    db = str(tmp_path / "lineage.db")
    status, out, _ = _run(capsys, "ingest", str(source), "--db", db, "--jobs", "2")
    assert status == 0 and "6 event(s) stored" in out
    with pytest.raises(SystemExit):
        main(["lineage", "ingest", str(source), "--jobs", "0"])
    assert "--jobs: a number of processes, 1 or more; got '0'" in capsys.readouterr().err


def test_ingest_into_a_foreign_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n", encoding="utf-8")
    status, _, err = _run(capsys, "ingest", str(notes), "--db", str(notes))
    assert status == 2
    assert "not a SQLite database" in err


def test_impact_text(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(
        capsys, "impact", "raw/sales", "--partition", "day=2024-10-15", "--db", db
    )
    assert status == 0
    assert "2 run(s) affected: 1 definite, 1 possible; 1 did not complete" in out
    assert "where PARTITION (day = '2024-10-15')" in out
    assert "where amount > 100" in out
    assert "Backfill plan: recompute" in out and "definite: day=2024-10-15" in out


def test_impact_json(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "impact", "sales", "--format", "json", "--db", db)
    assert status == 0
    answer = json.loads(out)
    assert [run["label"] for run in answer["runs"]] == ["definite", "possible"]
    assert answer["backfill"][0]["definite"][0]["dimensions"] == {"day": "2024-10-15"}


@pytest.mark.parametrize("query", ["provenance", "history", "partitions"])
def test_other_queries_answer(db: str, capsys: pytest.CaptureFixture[str], query: str) -> None:
    status, out, _ = _run(capsys, query, "daily", "--db", db)
    assert status == 0
    assert "daily" in out.splitlines()[0]
    status, out, _ = _run(capsys, query, "daily", "--db", db, "--format", "json")
    assert json.loads(out)["query"] == query


def test_unknown_dataset_and_bad_partition_exit_2(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = _run(capsys, "history", "nothing", "--db", db)
    assert status == 2 and "no dataset named 'nothing'" in err
    status, _, err = _run(capsys, "impact", "daily", "--partition", "day", "--db", db)
    assert status == 2 and "--partition takes COLUMN=VALUE" in err
    twice = ["--partition", "day=2024-10-01", "--partition", "day=2024-10-02"]
    status, out, err = _run(capsys, "impact", "daily", *twice, "--db", db)
    assert status == 2 and not out
    assert "--partition gives day twice ('2024-10-01' and '2024-10-02')" in err


def test_a_missing_database_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, "partitions", "daily", "--db", str(tmp_path / "none.db"))
    assert status == 2 and "ol-subset lineage ingest" in err


@pytest.mark.parametrize("query", ["impact", "history", "partitions"])
def test_a_closed_output_pipe_stops_quietly_with_141(db: str, query: str) -> None:
    # As `ol-subset lineage history daily | true`: the reader is gone before any output.
    child = subprocess.Popen(
        [sys.executable, "-m", "openlineage_subset", "lineage", query, "daily", "--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    assert child.wait(timeout=120) == 141
    assert child.stderr.read() == b""
