"""One lineage database shared: ingests at once in separate processes, a process holding the
write lock, and files of other applications (refused, left byte for byte as they were)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import SCHEMA_VERSION, LineageDatabaseError
from openlineage_subset.lineage.store._database import LineageStore
from tests.lineage.events import Json, day, run, write_events

ROOT = Path(__file__).resolve().parents[2]


def _runs(first: int, count: int) -> list[Json]:
    """``count`` runs numbered from ``first``, each a START and a COMPLETE, all reading and
    writing the same few datasets and partitions (so that two ingests meet on the same rows)."""
    events = []
    for number in range(first, first + count):
        date = f"2024-10-{1 + number % 28:02d}"
        events += run(
            number,
            number,
            number + 0.5,
            reads=[("raw/sales", day(date))],
            writes=[(f"daily{number % 3}", day(date))],
        )
    return events


def _ingest(db: Path, source: Path, *options: str) -> subprocess.Popen[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    command = [sys.executable, "-m", "openlineage_subset", "lineage", "ingest", str(source)]
    return subprocess.Popen(
        [*command, "--db", str(db), "--jobs", "1", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=ROOT,
    )


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def _counts(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        (events,) = connection.execute("SELECT count(*) FROM events").fetchone()
        (runs,) = connection.execute("SELECT count(*) FROM runs").fetchone()
    return events, runs


def _both_land(db: Path, first: Path, second: Path) -> None:
    processes = [_ingest(db, first), _ingest(db, second)]
    for process in processes:
        status, out, err = _finish(process)
        assert (status, err) == (0, ""), out
        assert "0 invalid" in out


def test_two_ingests_at_once_on_a_new_file_both_land(tmp_path: Path) -> None:
    first = write_events(tmp_path / "a.jsonl", _runs(0, 150))
    second = write_events(tmp_path / "b.jsonl", _runs(1000, 150))
    for round_ in range(10):  # making the schema raced about one time in three
        db = tmp_path / f"round{round_}.db"
        _both_land(db, first, second)
        assert _counts(db) == (600, 300), f"round {round_}: every event of both is stored"
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_two_ingests_at_once_on_an_existing_file_both_land(tmp_path: Path) -> None:
    first = write_events(tmp_path / "a.jsonl", _runs(0, 2500))
    second = write_events(tmp_path / "b.jsonl", _runs(10_000, 2500))
    for round_ in range(2):
        db = tmp_path / f"round{round_}.db"
        _finish(_ingest(db, write_events(tmp_path / "seed.jsonl", _runs(50_000, 10))))
        _both_land(db, first, second)
        assert _counts(db) == (10_020, 5010), f"round {round_}: every event of both is stored"


_HOLDER = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
commits, seconds = int(sys.argv[2]), float(sys.argv[3])
connection.execute("BEGIN IMMEDIATE")
print("holding", flush=True)
for number in range(commits):
    connection.execute("INSERT INTO datasets (namespace, name) VALUES ('h', ?)", (str(number),))
    time.sleep(seconds)
    connection.execute("COMMIT")
    connection.execute("BEGIN IMMEDIATE")
time.sleep(seconds)
connection.execute("COMMIT")
"""


def _holder(db: Path, commits: int, seconds: float) -> subprocess.Popen[str]:
    """A process that holds the write lock, committing every ``seconds`` ``commits`` times
    and taking the lock again at once (as another writer at work does)."""
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(db), str(commits), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "holding\n"
    return process


def test_an_ingest_waits_for_a_writer_that_keeps_committing(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    _finish(_ingest(db, write_events(tmp_path / "seed.jsonl", _runs(50_000, 10))))
    holder = _holder(db, commits=7, seconds=1.0)  # longer than SQLite's usual 5 s timeout
    status, out, err = _finish(
        _ingest(db, write_events(tmp_path / "a.jsonl", _runs(0, 100)), "--wait", "3")
    )
    assert holder.wait(timeout=60) == 0
    assert (status, err) == (0, ""), out
    assert _counts(db) == (220, 110)


def test_a_lock_held_without_commits_is_given_up_on_with_one_line(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    _finish(_ingest(db, write_events(tmp_path / "seed.jsonl", _runs(50_000, 10))))
    holder = _holder(db, commits=0, seconds=60.0)
    try:
        status, _, err = _finish(
            _ingest(db, write_events(tmp_path / "a.jsonl", _runs(0, 100)), "--wait", "1")
        )
    finally:
        holder.kill()
        holder.wait()
    assert status == 2
    assert "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith(f"ol-subset lineage ingest: {db}: the database is locked by another")
    assert "committed nothing for 1 s" in line and "run this again" in line
    assert _counts(db) == (20, 10), "the events of the seed only"


def _view_only(connection: sqlite3.Connection) -> None:
    connection.execute("CREATE VIEW answer AS SELECT 42 AS value")


def _view_and_trigger(connection: sqlite3.Connection) -> None:
    connection.execute("CREATE VIEW answer AS SELECT 42 AS value")
    connection.execute(
        "CREATE TRIGGER no_insert INSTEAD OF INSERT ON answer BEGIN SELECT RAISE(IGNORE); END"
    )


def _user_version_only(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA user_version = 7")


def _application_id_only(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA application_id = 1234")


def _index_of_another_table(connection: sqlite3.Connection) -> None:
    connection.execute("CREATE TABLE notes (text TEXT)")
    connection.execute("CREATE INDEX notes_by_text ON notes (text)")


@pytest.mark.parametrize(
    "make",
    [
        _view_only,
        _view_and_trigger,
        _user_version_only,
        _application_id_only,
        _index_of_another_table,
    ],
)
def test_another_application_s_database_is_refused_unchanged(
    tmp_path: Path, make: Callable[[sqlite3.Connection], None], capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "theirs.db"
    connection = sqlite3.connect(db, isolation_level=None)
    make(connection)
    connection.close()
    os.utime(db, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    before = db.read_bytes(), db.stat().st_mtime_ns
    with pytest.raises(LineageDatabaseError, match=r"another application.*left unchanged"):
        LineageStore.open(db, create=True)
    source = write_events(tmp_path / "a.jsonl", _runs(0, 2))
    assert main(["lineage", "ingest", str(source), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"{db}: a SQLite database of another application" in err
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.jsonl", "theirs.db"]


def test_an_empty_database_is_taken(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("CREATE TABLE gone (x)")
    connection.execute("DROP TABLE gone")  # a SQLite file with nothing left in it
    connection.close()
    assert db.stat().st_size > 0
    with LineageStore.open(db, create=True) as store:
        assert store.connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def _another_process_reads(db: Path) -> int:
    """The runs another process sees in ``db``: it opens the file, reads and closes it."""
    script = (
        "import sqlite3, sys\n"
        "connection = sqlite3.connect(sys.argv[1])\n"
        "print(connection.execute('SELECT count(*) FROM runs').fetchone()[0])\n"
        "connection.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(db)], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def _commit_run(store: LineageStore, run_id: str) -> None:
    store.begin_write()
    store.connection.execute(
        "INSERT INTO runs VALUES (?, 'ns', 'job', 'COMPLETE', '2024-10-01T00:00:00Z', NULL, NULL,"
        " '2024-10-01T00:00:00Z', 'COMPLETE', '2024-10-01T00:00:00Z', NULL, 0)",
        (run_id,),
    )
    store.connection.execute("COMMIT")


def test_opening_the_database_keeps_the_locks_of_a_writer_in_the_same_process(
    tmp_path: Path,
) -> None:
    # lineage serve: its writer's connection stays open while each query opens and closes its
    # own. A process ending its last connection deletes the write-ahead log when it finds no
    # other user; if an open had dropped the writer's lock, what the writer committed after
    # that went to a deleted log: lost to every other process.
    db = tmp_path / "lineage.db"
    writer = LineageStore.open(db, create=True)
    try:
        assert writer.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        _commit_run(writer, "r1")
        LineageStore.open(db).close()  # a query, in the writer's process
        assert _another_process_reads(db) == 1  # a command-line query, ended
        assert (tmp_path / "lineage.db-wal").exists()
        _commit_run(writer, "r2")
        assert _another_process_reads(db) == 2
    finally:
        writer.close()
    assert _another_process_reads(db) == 2
