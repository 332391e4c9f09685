"""The progress bar of a long ingest: drawn on a terminal only, ending where it started."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from openlineage_subset.lineage import ingest
from openlineage_subset.lineage.ingestion import _ingest
from tests.lineage.events import day, run, write_events


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _events(tmp_path: Path) -> Path:
    events = [
        item
        for number in range(1, 201)  # 400 lines: progress is told every 256
        for item in run(number, number, number + 0.5, writes=[("sales", day("2024-10-15"))])
    ]
    return write_events(tmp_path / "events.jsonl", events)


def test_a_terminal_gets_a_bar_that_clears_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _events(tmp_path)
    monkeypatch.setattr(_ingest, "_PROGRESS_BYTES", 1)  # any input is "large"
    terminal = _Terminal()
    report = ingest([source], tmp_path / "lineage.db", progress=terminal)
    drawn = terminal.getvalue()
    assert report.stored == 400
    assert drawn.startswith("\r[") and "event(s) stored" in drawn
    assert drawn.endswith("\r" + " " * 70 + "\r"), "the line is cleared at the end"


def test_no_bar_when_not_a_terminal_or_the_input_is_small(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _events(tmp_path)
    piped = io.StringIO()
    monkeypatch.setattr(_ingest, "_PROGRESS_BYTES", 1)
    ingest([source], tmp_path / "one.db", progress=piped)
    assert piped.getvalue() == ""
    monkeypatch.setattr(_ingest, "_PROGRESS_BYTES", source.stat().st_size + 1)
    terminal = _Terminal()
    ingest([source], tmp_path / "two.db", progress=terminal)
    assert terminal.getvalue() == ""
