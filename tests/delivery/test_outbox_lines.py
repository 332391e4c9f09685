"""The outbox reads its lines as every reader does: never more than the line limit of one line
(``$OL_SUBSET_MAX_LINE_BYTES``, :mod:`openlineage_subset._lines`). A longer line, which this
package never writes at its default ``max_event_bytes``, is quarantined as unreadable with its
size and the limit, and its first bytes; the events after it are sent.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from openlineage_subset.delivery._outbox import Outbox, event_line

CAP = 512 << 20


def _events(count: int) -> list[dict[str, object]]:
    return [{"eventType": "START", "run": {"runId": f"r{number}"}} for number in range(count)]


def test_a_line_over_the_limit_is_not_held_and_the_next_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The outbox's limit never goes below the default (its lines are the capture's own):
    # a lower one in the environment leaves it at 16 MiB.
    monkeypatch.setenv("OL_SUBSET_MAX_LINE_BYTES", "10000")
    first, last = _events(2)
    outbox = Outbox(tmp_path / "outbox")
    with outbox.lock:
        outbox.append(event_line(first))
        outbox.append(b'{"pad": "' + b"x" * 17_000_000 + b'"}\n')
        outbox.append(event_line(last))
        seen = []
        while (record := outbox.peek()) is not None:
            seen.append(record)
            outbox.settle(record)
    assert [record.event for record in seen] == [first, None, last]
    long_line = seen[1]
    assert long_line.problem is not None
    assert long_line.problem.startswith(
        "a line of 17000011 bytes, over the limit of 16777216 bytes "
        "($OL_SUBSET_MAX_LINE_BYTES raises it)"
    )
    assert len(long_line.line) < 10_000 and long_line.line.startswith(b'{"pad": "xxx')
    outbox.close(timeout=1)


def test_replay_sends_around_a_line_larger_than_its_memory(tmp_path: Path) -> None:
    """A 300 MB line in a segment (a hole of zeros), replayed in 512 MiB of address space."""
    first, last = _events(2)
    outbox_path = tmp_path / "outbox"
    outbox = Outbox(outbox_path)
    with outbox.lock:
        outbox.append(event_line(first))
    outbox.close(timeout=1)
    (segment,) = outbox_path.glob("lane-*/*.jsonl")
    with segment.open("r+b") as data:
        end = data.seek(0, 2)
        data.truncate(end + (300 << 20))
        data.seek(end + (300 << 20))
        data.write(b"\n" + event_line(last))

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))

    output, quarantine = tmp_path / "events.jsonl", tmp_path / "quarantine.jsonl"
    command = [sys.executable, "-m", "openlineage_subset", "replay", str(outbox_path)]
    done = subprocess.run(
        [*command, "--output", str(output), "--quarantine", str(quarantine)],
        capture_output=True,
        text=True,
        preexec_fn=capped,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert [json.loads(line) for line in output.read_text().splitlines()] == [first, last]
    (kept,) = [json.loads(line) for line in quarantine.read_text().splitlines()]
    assert kept["reason"] == "unreadable"
    assert kept["error"].startswith(f"a line of {300 << 20} bytes, over the limit of")
    assert kept["event"] == "\0" * 4096


def test_no_capture_writes_events_its_readers_cannot_read_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An event over the readers' line limit would come back from the outbox as its first 4 KiB
    # only: a budget over the limit is refused where it is set.
    from openlineage_subset.spark import SubsetConfig

    monkeypatch.setenv("OL_SUBSET_MAX_LINE_BYTES", "20000000")
    assert SubsetConfig(max_event_bytes=20_000_000).max_event_bytes == 20_000_000
    with pytest.raises(ValueError, match=r"over the 20000000 bytes.*OL_SUBSET_MAX_LINE_BYTES"):
        SubsetConfig(max_event_bytes=20_000_001)
    # A lower limit, set for validate or ingest, leaves the capture's own lines alone.
    monkeypatch.setenv("OL_SUBSET_MAX_LINE_BYTES", "1000")
    assert SubsetConfig().max_event_bytes == 1_000_000
    monkeypatch.delenv("OL_SUBSET_MAX_LINE_BYTES")
    with pytest.raises(ValueError, match="max_event_bytes is 20000000, over the 16777216 bytes"):
        SubsetConfig(max_event_bytes=20_000_000)
