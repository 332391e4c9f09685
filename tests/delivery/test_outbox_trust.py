"""An outbox another user could have written is refused; a cursor past the data is reported.

What an outbox holds is sent as the user's own events, so events planted in it by another user
would reach the user's endpoint. These tests plant them as another user would (a folder or file
left writable, a folder someone else owns) and check that nothing of it is read or sent, with
one line saying which path and what to do. A cursor that cannot be where sending stopped
(past the end of a segment, inside a line, naming a segment that is not there) must never make
events look sent: the lane is sent again from its start and it is said.

Expected events are read back from the files (``pending_on_disk``), never from the code under
test.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.delivery._emitter import Emitter
from openlineage_subset.delivery._outbox import Outbox, event_line
from openlineage_subset.delivery._trust import UnsafeOutbox, trust_problem
from tests.delivery.helpers import pending_on_disk
from tests.helpers import CORE_URL, PRODUCER

PLANTED = {"eventType": "COMPLETE", "run": {"runId": "planted"}, "job": {"name": "forged"}}


def _left_by_an_earlier_capture(path: Path, count: int = 3) -> list[dict[str, Any]]:
    """An outbox as this project leaves it when close() ran out of time: ``count`` events."""
    events = [{"eventType": "START", "run": {"runId": f"r{n}"}} for n in range(count)]
    outbox = Outbox(path)
    with outbox.lock:
        for event in events:
            outbox.append(event_line(event))
    assert outbox.close(1.0)
    assert pending_on_disk(path) == events
    return events


def _segment(path: Path) -> Path:
    (segment,) = (path / "lane-0").glob("*.jsonl")
    return segment


def _send_all(outbox: Outbox) -> list[dict[str, Any]]:
    sent = []
    with outbox.lock:
        while (record := outbox.peek()) is not None:
            assert record.event is not None
            sent.append(record.event)
            outbox.settle(record)
    return sent


class _Recording:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)


# Refused: modes --------------------------------------------------------------------------------


def test_a_world_writable_outbox_folder_is_refused_by_capture_and_replay(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl.outbox"
    _left_by_an_earlier_capture(path)
    os.chmod(path, 0o777)  # as a folder another user made in advance with mkdir -m 777
    for create in (True, False):
        with pytest.raises(UnsafeOutbox) as refused:
            Outbox(path, create=create)
        message = str(refused.value)
        assert "\n" not in message
        assert str(path) in message and "0777" in message and f"chmod 700 {path}" in message
    assert list(path.iterdir()) == [path / "lane-0"], "nothing created in it"


def test_a_planted_group_writable_segment_is_never_sent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "outbox"
    _left_by_an_earlier_capture(path, count=1)
    segment = _segment(path)
    with segment.open("ab") as planted:
        planted.write(event_line(PLANTED))
    os.chmod(segment, 0o664)
    with pytest.raises(UnsafeOutbox) as refused:
        Outbox(path, create=False)
    assert str(segment) in str(refused.value) and "0664" in str(refused.value)
    assert f"chmod 600 {segment}" in str(refused.value)

    transport = _Recording()
    emitter = Emitter(transport, tmp_path / "q.jsonl", path, close_timeout=2)
    assert emitter.outbox is None, "capture falls back as for any unusable outbox"
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("cannot be used" in m and str(segment) in m for m in warned)
    mine = {
        "eventType": "START",
        "eventTime": "2024-10-15T10:00:00Z",
        "producer": PRODUCER,
        "schemaURL": CORE_URL,
        "run": {"runId": "0192a0c3-0000-7000-8000-000000000001"},
        "job": {"namespace": "spark", "name": "mine"},
    }
    emitter.submit([mine])
    emitter.close()
    assert transport.events == [mine], "this run's event is sent from memory, nothing planted"
    assert PLANTED in pending_on_disk(path), "the planted event is left where it is, unread"


def test_a_world_writable_lane_is_refused_even_beside_a_sound_one(tmp_path: Path) -> None:
    path = tmp_path / "outbox"
    _left_by_an_earlier_capture(path)
    planted = path / "lane-7"
    planted.mkdir(mode=0o700)
    os.chmod(planted, 0o777)
    (planted / "000000000001.jsonl").write_bytes(event_line(PLANTED))
    with pytest.raises(UnsafeOutbox) as refused:
        Outbox(path, create=False)
    assert str(planted) in str(refused.value) and "0777" in str(refused.value)


def test_what_the_project_creates_passes_whatever_the_umask(tmp_path: Path) -> None:
    before = os.umask(0)
    try:
        path = tmp_path / "outbox"
        events = _left_by_an_earlier_capture(path)
        again = Outbox(path)
        assert _send_all(again) == events
        again.close(1.0)
        modes = {p.relative_to(path): stat.S_IMODE(p.stat().st_mode) for p in path.rglob("*")}
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
        assert set(modes.values()) == {0o700, 0o600}
        assert [name for name, mode in modes.items() if mode == 0o700] == [Path("lane-0")]
        assert {Path("lane-0/lock"), Path("lane-0/cursor")} < set(modes), "all files were made"
        assert Outbox(path, create=False).earlier == 0, "and it opens again"
    finally:
        os.umask(before)


# Refused: owners ------------------------------------------------------------------------------


def _status(mode: int, uid: int) -> os.stat_result:
    """What ``os.stat`` gives for a folder: mode, inode, device, links, uid, gid, then sizes."""
    return os.stat_result((stat.S_IFDIR | mode, 0, 0, 2, uid, uid, 0, 0, 0, 0))


def test_the_owner_rule_trusts_the_user_and_root_only() -> None:
    me = 1000
    assert trust_problem(_status(0o700, me), me) is None
    assert trust_problem(_status(0o755, 0), me) is None, "root's folders are trusted, as by ssh"
    problem = trust_problem(_status(0o700, 1001), me)
    assert problem is not None and "uid 1001" in problem and "uid 1000" in problem
    assert trust_problem(_status(0o700, me), 0) is not None, "root does not take others' either"
    assert trust_problem(_status(0o1777, me), me) is not None, "the sticky bit does not help"
    assert trust_problem(_status(0o720, me), me) is not None, "group-writable"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user takes root")
def test_a_folder_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "outbox"
    _left_by_an_earlier_capture(path)
    os.chown(path / "lane-0", 4242, 4242)
    with pytest.raises(UnsafeOutbox) as refused:
        Outbox(path)
    message = str(refused.value)
    assert str(path / "lane-0") in message and "uid 4242" in message and "remove it" in message
    os.chown(path / "lane-0", 0, 0)
    os.chown(path, 4242, 4242)
    with pytest.raises(UnsafeOutbox, match="uid 4242"):
        Outbox(path, create=False)


# Cursors that point past the data ---------------------------------------------------------------


def _with_cursor(path: Path, segment: int, offset: int) -> None:
    (path / "lane-0" / "cursor").write_text(json.dumps({"segment": segment, "offset": offset}))


def test_a_cursor_past_the_end_of_a_segment_sends_the_lane_again_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "outbox"
    events = _left_by_an_earlier_capture(path)
    segment = _segment(path)
    _with_cursor(path, int(segment.stem), segment.stat().st_size + 1000)
    outbox = Outbox(path, create=False)
    assert outbox.earlier == len(events), "never a silent 'nothing to send'"
    assert _send_all(outbox) == events
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(f"lane-0/{segment.name}" in m and "past the end" in m for m in said)
    assert "lane-0" in outbox.distrusted


def test_a_cursor_inside_a_line_sends_the_whole_lane_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "outbox"
    events = _left_by_an_earlier_capture(path)
    segment = _segment(path)
    inside_second_line = segment.read_bytes().index(b"\n") + 10
    _with_cursor(path, int(segment.stem), inside_second_line)
    outbox = Outbox(path, create=False)
    assert _send_all(outbox) == events, "what came before a damaged cursor is not taken as sent"
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("inside a line" in m and f"lane-0/{segment.name}" in m for m in said)


def test_a_cursor_naming_a_later_segment_removes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "outbox"
    events = _left_by_an_earlier_capture(path)
    segment = _segment(path)
    _with_cursor(path, int(segment.stem) + 50, 0)
    outbox = Outbox(path, create=False)
    assert segment.exists(), "a segment the cursor does not reach is not deleted as sent"
    assert "past the newest" in outbox.distrusted["lane-0"]
    assert _send_all(outbox) == events
