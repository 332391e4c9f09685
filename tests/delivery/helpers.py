"""What the delivery tests share: an outbox's pending events read from its files alone.

``pending_on_disk`` is a reader of its own, from the documented layout of an outbox (lanes,
segments, cursors), never the code under test: expected contents come from the files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def pending_on_disk(outbox: Path) -> list[dict[str, Any]]:
    """The events an outbox still holds, read from its files: each lane's segments from its
    cursor on, complete lines only."""
    events = []
    for lane in sorted(outbox.glob("lane-*")):
        cursor = lane / "cursor"
        at = json.loads(cursor.read_text()) if cursor.exists() else {"segment": 0, "offset": 0}
        for segment in sorted(lane.glob("[0-9]*.jsonl")):
            number = int(segment.stem)
            if number < at["segment"]:
                continue
            data = segment.read_bytes()[at["offset"] if number == at["segment"] else 0 :]
            lines = data.splitlines(keepends=True)
            events += [json.loads(line) for line in lines if line.endswith(b"\n")]
    return events
