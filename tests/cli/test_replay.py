"""ol-subset replay on an outbox another user could have written, or with a damaged cursor.

A planted outbox is refused whole with exit 2 and one line saying which path and what to do;
a cursor past the data sends its lane again and the summary says so, never "nothing to send".
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.cli import main
from openlineage_subset.cli._output import EXIT_OK, EXIT_UNUSABLE
from openlineage_subset.delivery import Outbox, event_line
from tests.delivery.helpers import pending_on_disk


@pytest.fixture(autouse=True)
def _no_lineage_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith(("OPENLINEAGE", "OL_SUBSET"))]:
        monkeypatch.delenv(name)


def _left_in(path: Path) -> list[dict[str, Any]]:
    events = [{"eventType": "START", "run": {"runId": f"r{n}"}} for n in range(3)]
    outbox = Outbox(path)
    with outbox.lock:
        for event in events:
            outbox.append(event_line(event))
    assert outbox.close(1.0)
    return events


def _replay(capsys: pytest.CaptureFixture[str], outbox: Path, output: Path) -> tuple[int, str, str]:
    status = main(["replay", str(outbox), "--output", str(output), "--timeout", "5"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return status, captured.out, captured.err


@pytest.mark.parametrize("planted", ["outbox folder", "lane", "segment"])
def test_replay_refuses_an_outbox_others_could_write_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], planted: str
) -> None:
    outbox, output = tmp_path / "events.jsonl.outbox", tmp_path / "events.jsonl"
    events = _left_in(outbox)
    (segment,) = (outbox / "lane-0").glob("*.jsonl")
    target, mode, fix = {
        "outbox folder": (outbox, 0o777, "chmod 700"),
        "lane": (outbox / "lane-0", 0o770, "chmod 700"),
        "segment": (segment, 0o666, "chmod 600"),
    }[planted]
    os.chmod(target, mode)
    status, out, err = _replay(capsys, outbox, output)
    assert status == EXIT_UNUSABLE
    assert out == "" and err.count("\n") == 1, "one line"
    assert str(target) in err and f"{mode:04o}" in err and f"{fix} {target}" in err
    assert not output.exists(), "nothing sent"
    os.chmod(target, 0o700 if target.is_dir() else 0o600)
    assert pending_on_disk(outbox) == events, "nothing touched"


@pytest.mark.parametrize("where", ["past the end", "inside a line", "past the newest"])
def test_replay_says_a_damaged_cursor_was_not_trusted_and_sends_the_lane(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    where: str,
) -> None:
    outbox, output = tmp_path / "events.jsonl.outbox", tmp_path / "events.jsonl"
    events = _left_in(outbox)
    (segment,) = (outbox / "lane-0").glob("*.jsonl")
    number, data = int(segment.stem), segment.read_bytes()
    cursor = {
        "past the end": {"segment": number, "offset": len(data) + 4096},
        "inside a line": {"segment": number, "offset": data.index(b"\n") + 5},
        "past the newest": {"segment": number + 9, "offset": 0},
    }[where]
    (outbox / "lane-0" / "cursor").write_text(json.dumps(cursor))
    status, out, _ = _replay(capsys, outbox, output)
    assert status == EXIT_OK, "every event is sent: none stays, none is lost"
    assert [json.loads(line) for line in output.read_text().splitlines()] == events
    assert "nothing to send" not in out
    assert where in out and "lane-0" in out and segment.name in out
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(where in message for message in warned), "and warned"


def test_replay_writes_names_as_escapes_and_credentials_never(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder name holding a terminal's escape codes and a URL with credentials in it.
    outbox = tmp_path / "x\x1b]0;owned\x07\u202eeht.outbox"
    output = tmp_path / "events.jsonl"
    _left_in(outbox)
    status, out, err = _replay(capsys, outbox, output)
    assert status == EXIT_OK
    assert "\\x1b]0;owned\\x07\\u202eeht.outbox" in out
    missing = tmp_path / "jdbc;password=s3cr3tT0ken"
    status, out, err = _replay(capsys, missing, output)
    assert status == EXIT_UNUSABLE
    for text in (out, err):
        assert not any(c in text for c in "\x1b\x07\u202e")
    assert "s3cr3tT0ken" not in err
