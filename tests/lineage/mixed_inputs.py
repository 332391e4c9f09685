"""Ingest's inputs of every kind in a few files, and a database's every table: for tests that
compare two ways of ingesting the same (workers, checkpoints)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from openlineage_subset.lineage import ingest
from tests.lineage.events import both, compare, day, event, parts, pipeline_history, run


def tables(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        names = [
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        return {
            name: sorted(connection.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
            for name in names
        }


def inputs(folder: Path) -> list[Path]:
    """Events of every kind ingest meets: valid ones, a run spread over files, conditions an
    access gets several of, invalid lines, duplicates spelled otherwise, skipped events, a
    multi-line .json file, a file that is not there."""
    folder.mkdir()
    history = pipeline_history(days=6)
    late = [
        event(900, "START", 1, reads=[("raw", day("2024-10-01"))]),
        event(900, "RUNNING", 2, reads=[("raw", day("2024-10-02")), ("clean", None)]),
        event(900, "COMPLETE", 3, reads=[("raw", day("2024-10-03"))], writes=[("x", day("d"))]),
        *run(901, 4, 5, reads=[("raw", both(day("2024-10-01"), "OR", day("2024-10-09")))]),
        *run(902, 6, 7, writes=[("raw", parts({"day": "2024-10-01", "country": None}))]),
        *run(903, 8, 9, reads=[("clean", compare("amount", "GREATER_THAN", "1"))]),
    ]
    lines = [json.dumps(item) for item in history[:40]]
    lines += [
        "{not json",
        '{"eventType": "START", "eventType": "COMPLETE"}',
        json.dumps({**history[0], "eventTime": "yesterday"}),
        json.dumps(history[3], indent=1).replace("\n", " "),  # a duplicate, spelled otherwise
        json.dumps(dict(reversed(list(history[5].items())))),  # another, keys reversed
        json.dumps({"eventTime": history[0]["eventTime"], "dataset": {"name": "d"}}),
        "",
        json.dumps(late[0]),
        json.dumps(event(904, "START", 1, reads=[("\ud800", None)])),  # no UTF-8 for it
    ]
    first = folder / "a.jsonl"
    first.write_bytes("\n".join(lines).encode("utf-8") + b"\n\xff\xfe\n")
    second = folder / "b.jsonl"
    second.write_text("\n".join(json.dumps(item) for item in history[40:] + late[1:]) + "\n")
    whole = folder / "c.json"
    whole.write_text(json.dumps([late[2], history[7], {"eventType": "START"}], indent=2))
    return [first, second, whole, folder / "missing.jsonl", first]


def ingest_all(paths: list[Path], db: Path, **options: Any) -> tuple[Any, Any]:
    report = ingest(paths, db, **options)
    return report.as_json(), tables(db)
