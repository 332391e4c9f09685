"""How fast ingest could be at best, on this layout: the work no ingest of these events avoids.

Makes the history of ``benchmarks/lineage.py`` (by default its 1,095 dates x 30 countries:
about 11,000 events of 4.4 KB, most of their bytes partition lists) and measures, from one run,
the CPU time of this process per event of:

- **read**: ``json.loads`` of each line (the C parser, which the checker's quick path uses);
- **spell**: the canonical JSON of each document (``json.dumps`` with sorted keys and no
  spaces, what an event's digest is taken of: an event sent again with its keys in another
  order must be known) and its SHA-256;
- **rows**: the rows the writer inserted and updated for the history (recorded from a real
  store, through a connection that notes each ``executemany`` and commit), written again into a
  new database of the same layout, statement by statement, with nothing else: no lookup, no
  row made, no Python between the statements;
- then, for comparison, what ingest's two steps take of the same events: ``check_chunk`` (the
  checks, the spellings, the conditions' partitions) and ``Writer.store`` (lookups, rows made,
  the same statements), and ``ingest(jobs=CPUs)``'s rate, timed alone.

The floor is read + spell + rows: however the work were spread over the machine's CPUs, ingest
of these events could not go faster than CPUs / floor events a second, and only if nothing but
those three were done. It prints that rate, in MB/s of the events' lines too, beside the one
measured and the target (50 MB/s).

    python benchmarks/ingest_floor.py [--days 1095] [--countries 30]
"""

from __future__ import annotations

import argparse
import functools
import gc
import hashlib
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import lineage as pipeline  # benchmarks/lineage.py: the synthetic history

from openlineage_subset.lineage import (
    Line,
    LineageStore,
    Writer,
    check_chunk,
    ingest,
)

TARGET_MB = 50.0
CHUNK = 800  # events a chunk: about what ingest checks and stores at a time


class _Noting:
    """A connection that notes the rows of each ``executemany`` and each commit, in order,
    and passes every call on."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.noted: list[tuple[str, list[Any]] | None] = []  # None: a commit

    def executemany(self, statement: str, rows: Iterable[Any]) -> Any:
        rows = list(rows)
        self.noted.append((statement, rows))
        return self.connection.executemany(statement, rows)

    def execute(self, statement: str, *arguments: Any) -> Any:
        if statement == "COMMIT":
            self.noted.append(None)
        return self.connection.execute(statement, *arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)


def _cpu(function: Callable[[], Any]) -> float:
    """CPU seconds of ``function()``, Python's cyclic collector paused (as the checker pauses
    it: parsed JSON holds no cycle, its passes would be work ingest does not do)."""
    gc.disable()
    try:
        start = time.process_time()
        function()
        return time.process_time() - start
    finally:
        gc.enable()


def _new_store(path: Path) -> LineageStore:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return LineageStore.open(path, create=True)


def _read_and_spell(lines: list[bytes]) -> tuple[float, float]:
    """CPU seconds of reading the lines, and of spelling what was read (a chunk at a time, as
    ingest holds them)."""
    encoder = json.JSONEncoder(
        sort_keys=True, separators=(",", ":"), ensure_ascii=False, check_circular=False
    )
    read = spell = 0.0
    for start in range(0, len(lines), CHUNK):
        part = lines[start : start + CHUNK]
        documents: list[Any] = []
        read += _cpu(functools.partial(documents.extend, map(json.loads, part)))
        spell += _cpu(
            functools.partial(
                list, (hashlib.sha256(encoder.encode(d).encode()).digest() for d in documents)
            )
        )
    return read, spell


def _check_and_store(
    events_file: Path, lines: list[bytes], database: Path
) -> tuple[float, float, list[tuple[str, list[Any]] | None]]:
    """CPU seconds of ``check_chunk`` and of ``Writer.store`` over the lines, and the rows the
    writer sent (None: a commit)."""
    items = [Line(str(events_file), number, raw, 0) for number, raw in enumerate(lines, 1)]
    chunks = [items[start : start + CHUNK] for start in range(0, len(items), CHUNK)]
    checked: list[Any] = []
    check = _cpu(lambda: checked.extend(check_chunk(chunk) for chunk in chunks))
    with _new_store(database) as store:
        writer = Writer(store)
        noting = _Noting(store.connection)
        writer.db = noting  # type: ignore[assignment]

        def stored() -> None:
            for outcomes, conditions in checked:
                writer.store(outcomes, conditions, lambda outcome: None)
            writer.commit()

        write = _cpu(stored)
    return check, write, noting.noted


def _rows_alone(noted: list[tuple[str, list[Any]] | None], database: Path) -> float:
    """CPU seconds of sending the noted rows again, into a new database, with nothing else."""
    with _new_store(database) as store:
        connection = store.connection
        connection.execute("PRAGMA foreign_keys = OFF")  # as the writer runs

        def replayed() -> None:
            connection.execute("BEGIN IMMEDIATE")
            for entry in noted:
                if entry is None:
                    connection.execute("COMMIT")
                    connection.execute("BEGIN IMMEDIATE")
                else:
                    connection.executemany(*entry)
            connection.execute("COMMIT")

        return _cpu(replayed)


def _ingest_rate(events_file: Path, database: Path, cpus: int) -> tuple[float, float]:
    """Events/s of ``ingest(jobs=cpus)`` into a new database, and its CPU seconds an event
    (this process and its workers)."""
    database.unlink(missing_ok=True)
    children = _children_cpu()
    start, cpu = time.perf_counter(), time.process_time()
    report = ingest([events_file], database, jobs=cpus)
    wall = time.perf_counter() - start
    used = time.process_time() - cpu + _children_cpu() - children
    return report.stored / wall, used / report.stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--days", type=int, default=1095, help="business dates (default 1095)")
    parser.add_argument("--countries", type=int, default=30, help="countries (default 30)")
    args = parser.parse_args()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpus = cpus or 1
    with tempfile.TemporaryDirectory(prefix="ol-floor-") as folder:
        events_file = Path(folder) / "events.jsonl"
        count, _ = pipeline.write_history(
            events_file, pipeline.history(args.days, args.countries, seed=10)
        )
        lines = events_file.read_bytes().splitlines()
        per_event = (sum(map(len, lines)) + count) / count
        print(f"machine: {cpus} CPUs; python {sys.version.split()[0]}")
        print(
            f"history: {count:,} events, {per_event * count / 1e6:.1f} MB"
            f" ({per_event:,.0f} bytes an event)"
        )
        read, spell = _read_and_spell(lines)
        database = Path(folder) / "lineage.db"
        check, write, noted = _check_and_store(events_file, lines, database)
        rows = _rows_alone(noted, database)
        rate, used = _ingest_rate(events_file, database, cpus)

    floor = (read + spell + rows) / count
    best = cpus / floor
    written = sum(len(entry[1]) for entry in noted if entry is not None) / count
    print(f"per event, CPU of one process (us); {written:.1f} rows written an event:")
    for label, seconds in (
        ("read (json.loads)", read),
        ("spell (canonical JSON and its SHA-256)", spell),
        ("rows (the writer's statements alone)", rows),
    ):
        print(f"  {label:<42} {seconds / count * 1e6:7.1f}")
    print(f"  {'floor: the three':<42} {floor * 1e6:7.1f}")
    print(f"  {'check_chunk':<42} {check / count * 1e6:7.1f}")
    print(f"  {'Writer.store':<42} {write / count * 1e6:7.1f}")
    ours = (check + write) / count
    print(f"  {'ours: both':<42} {ours * 1e6:7.1f}   ({ours / floor:.2f} x the floor)")
    print(
        f"at the floor, on {cpus} CPUs: at most {best:,.0f} events/s = "
        f"{best * per_event / 1e6:.1f} MB/s (target {TARGET_MB:.0f} MB/s: "
        f"{TARGET_MB * 1e6 / per_event:,.0f} events/s, at most "
        f"{cpus * per_event / TARGET_MB:.0f} us of CPU an event)"
    )
    print(
        f"ingest(jobs={cpus}): {rate:,.0f} events/s = {rate * per_event / 1e6:.1f} MB/s"
        f" ({rate / best:.2f} of the floor's rate); {used * 1e6:.0f} us of CPU an event"
        f" in all its processes ({used / floor:.2f} x the floor)"
    )


def _children_cpu() -> float:
    """CPU seconds of this process's ended children (ingest's worker processes)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


if __name__ == "__main__":
    main()
