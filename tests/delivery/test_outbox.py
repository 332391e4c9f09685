"""The outbox and the files it shares, without Spark: whole lines, cursors, locks, crashes.

Expected contents are read back from the files themselves (``pending_on_disk`` is a reader
of its own, from the documented layout), never from the code under test.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openlineage_subset.delivery import Reason, Tally, _files
from openlineage_subset.delivery._fates import IN_OUTBOX
from openlineage_subset.delivery._files import append_line
from openlineage_subset.delivery._outbox import Outbox, event_line
from openlineage_subset.delivery._sending import (
    Delivery,
    JsonLinesTransport,
    Quarantine,
    resolve_transport,
)
from tests.delivery.helpers import pending_on_disk


def _event(number: int, pad: int = 0) -> dict[str, Any]:
    return {"eventType": "START", "run": {"runId": f"run-{number}"}, "pad": "x" * pad}


def _numbers(events: list[dict[str, Any]]) -> list[int]:
    return [int(event["run"]["runId"].split("-")[1]) for event in events]


def _send(outbox: Outbox, count: int | None = None) -> list[dict[str, Any]]:
    """Settle up to ``count`` events as a transport taking them would."""
    sent = []
    with outbox.lock:
        while count is None or len(sent) < count:
            record = outbox.peek()
            if record is None:
                break
            assert record.event is not None
            sent.append(record.event)
            outbox.settle(record)
    return sent


def _append(outbox: Outbox, *events: dict[str, Any]) -> None:
    with outbox.lock:
        for event in events:
            outbox.append(event_line(event))


# Whole lines -----------------------------------------------------------------------------------


def test_a_torn_last_line_is_cut_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2, "torn')
    append_line(path, b'{"n": 3}\n')
    assert path.read_bytes() == b'{"n": 1}\n{"n": 3}\n'


def test_files_are_created_private_and_never_through_a_symlink(tmp_path: Path) -> None:
    append_line(tmp_path / "new.jsonl", b"{}\n")
    assert (tmp_path / "new.jsonl").stat().st_mode & 0o777 == 0o600
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "existing").symlink_to(victim)
    (tmp_path / "dangling").symlink_to(tmp_path / "would-be-created")
    for link in ("existing", "dangling"):
        with pytest.raises(OSError) as refused:
            append_line(tmp_path / link, b"{}\n")
        assert refused.value.errno == errno.ELOOP
        with pytest.raises(OSError):
            JsonLinesTransport.create(tmp_path / link)
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "would-be-created").exists()


def test_a_write_cut_short_by_a_file_size_limit_leaves_no_partial_line(tmp_path: Path) -> None:
    """A real short write: RLIMIT_FSIZE makes write() stop at the limit, then fail (EFBIG)."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"n": 1}\n')
    script = textwrap.dedent(
        f"""
        import resource, sys
        from openlineage_subset.delivery._files import append_line
        resource.setrlimit(resource.RLIMIT_FSIZE, (20, resource.RLIM_INFINITY))
        try:
            append_line({str(path)!r}, b'{{"n": 2, "long enough to cross the limit"}}\\n')
        except OSError as error:
            sys.exit(error.errno)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, check=False)
    assert done.returncode == errno.EFBIG, done.stderr.decode()
    assert path.read_bytes() == b'{"n": 1}\n', "the part written before the limit is cut back"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_device_raises_instead_of_claiming_a_write() -> None:
    with pytest.raises(OSError) as full:
        JsonLinesTransport("/dev/full").emit({"eventType": "START"})
    assert full.value.errno == errno.ENOSPC


def test_an_append_is_synced_before_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[bytes] = []
    real_sync = _files._sync

    def recording_sync(fd: int) -> None:
        real_sync(fd)
        synced.append(os.pread(fd, 1 << 16, 0))

    monkeypatch.setattr(_files, "_sync", recording_sync)
    append_line(tmp_path / "events.jsonl", b'{"n": 1}\n')
    outbox = Outbox(tmp_path / "outbox")
    _append(outbox, _event(7))
    outbox.close(1.0)
    assert synced[0] == b'{"n": 1}\n'
    assert synced[1] == event_line(_event(7))


# The outbox ------------------------------------------------------------------------------------


def test_the_cursor_keeps_what_was_sent_across_opens(tmp_path: Path) -> None:
    path = tmp_path / "outbox"
    outbox = Outbox(path)
    _append(outbox, *(_event(n) for n in range(5)))
    assert _numbers(_send(outbox, 2)) == [0, 1]
    assert outbox.close(1.0)
    assert _numbers(pending_on_disk(path)) == [2, 3, 4]
    again = Outbox(path)
    assert again.earlier == 3
    assert _numbers(_send(again)) == [2, 3, 4]
    again.close(1.0)
    assert pending_on_disk(path) == []
    assert [p.stat().st_size for p in (path / "lane-0").glob("*.jsonl")] == [0], "emptied"
    assert path.stat().st_mode & 0o777 == 0o700
    assert {p.name: p.stat().st_mode & 0o777 for p in (path / "lane-0").iterdir()} == {
        "lock": 0o600,
        "cursor": 0o600,
        "000000000002.jsonl": 0o600,
    }


def test_a_torn_tail_is_cut_on_open(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "outbox"
    outbox = Outbox(path)
    _append(outbox, _event(1), _event(2))
    outbox._close_files()  # a crash: nothing saved
    (segment,) = (path / "lane-0").glob("*.jsonl")
    with segment.open("ab") as crashed_append:
        crashed_append.write(event_line(_event(3))[:-9])
    reopened = Outbox(path)
    assert "cut a torn last line" in caplog.text
    _append(reopened, _event(4))
    assert _numbers(_send(reopened)) == [1, 2, 4]
    reopened.close(1.0)


def test_an_unreadable_cursor_sends_everything_again(tmp_path: Path) -> None:
    path = tmp_path / "outbox"
    outbox = Outbox(path)
    _append(outbox, _event(1), _event(2))
    _send(outbox, 1)
    outbox.close(1.0)
    (path / "lane-0" / "cursor").write_text('{"segment": ')
    assert _numbers(_send(Outbox(path))) == [1, 2], "at least once: sent again, never skipped"


def test_symlinks_and_paths_under_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("")
    for unusable in (tmp_path / "link", tmp_path / "file" / "outbox", tmp_path / "file"):
        with pytest.raises(OSError):
            Outbox(unusable)
    assert list((tmp_path / "real").iterdir()) == []


HOLDER = textwrap.dedent(
    """
    import sys
    from openlineage_subset.delivery._outbox import Outbox, event_line
    outbox = Outbox(sys.argv[1])
    with outbox.lock:
        for n in (100, 101):
            outbox.append(event_line({"eventType": "START", "run": {"runId": f"run-{n}"}}))
    print(outbox.own.name, flush=True)
    sys.stdin.readline()
    """
)


def test_two_processes_write_two_lanes_and_a_free_lane_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "outbox"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "lane-0"
        mine = Outbox(path)
        assert mine.own is not None and mine.own.name == "lane-1", "the held lane is not shared"
        assert mine.in_use == {"lane-0": (2, str(holder.pid))}
        assert mine.earlier == 0 and _send(mine) == [], "a running process's events are its own"
        _append(mine, _event(1))
        mine.close(1.0)
    finally:
        holder.communicate("\n", timeout=30)
    after = Outbox(path)
    assert after.own is not None and after.own.name == "lane-0"
    assert after.earlier == 3
    assert sorted(_numbers(_send(after))) == [1, 100, 101]
    after.close(1.0)


def test_one_process_opening_an_outbox_twice_gets_two_lanes(tmp_path: Path) -> None:
    first, second = Outbox(tmp_path / "outbox"), Outbox(tmp_path / "outbox")
    assert first.own is not None and second.own is not None
    assert (first.own.name, second.own.name) == ("lane-0", "lane-1")
    first.close(1.0)
    second.close(1.0)


Operation = tuple[str, int]
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 4)),
        st.tuples(st.just("send"), st.integers(1, 6)),
        st.tuples(st.just("save"), st.just(0)),
        st.tuples(st.just("crash"), st.integers(1, 10_000)),
        st.tuples(st.just("close"), st.just(0)),
    ),
    max_size=14,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=OPERATIONS, big=st.booleans())
def test_no_sequence_of_appends_sends_and_crashes_loses_an_appended_event(
    operations: list[Operation], big: bool
) -> None:
    """A crash abandons the outbox unsaved, after tearing an append at a random byte and
    leaving a half-written cursor; every event whose append returned is sent at least once,
    first sends in the order appended, and no torn line is ever sent."""
    pad = 700 if big else 0
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "outbox"
        outbox = Outbox(path)
        appended: list[int] = []
        sent: list[int] = []
        for action, amount in operations:
            if action == "append":
                for _ in range(amount):
                    _append(outbox, _event(len(appended), pad))
                    appended.append(len(appended))
            elif action == "send":
                sent += _numbers(_send(outbox, amount))
            elif action == "save":
                with outbox.lock:
                    outbox.save()
            elif action == "crash":
                _crash(outbox, path, amount)
                outbox = Outbox(path)
            else:
                outbox.close(1.0)
                outbox = Outbox(path)
        sent += _numbers(_send(outbox))
        outbox.close(1.0)
        assert set(sent) == set(appended), "every appended event sent, none invented"
        first_sends = list(dict.fromkeys(sent))
        assert first_sends == sorted(first_sends), "in the order appended"


def _crash(outbox: Outbox, path: Path, at: int) -> None:
    outbox._close_files()
    lane = path / "lane-0"
    newest = max(lane.glob("[0-9]*.jsonl"))
    torn = event_line(_event(99_999, 300))
    with newest.open("ab") as interrupted:
        interrupted.write(torn[: 1 + at % (len(torn) - 1)])
    (lane / "cursor.tmp").write_bytes(b'{"segment": 9, "off'[: at % 20])


# Delivery and where events go ------------------------------------------------------------------


class _Hanging:
    def __init__(self) -> None:
        self.release = threading.Event()
        self.called = threading.Event()
        self.caller: threading.Thread | None = None

    def emit(self, event: Any) -> None:
        self.caller = threading.current_thread()
        self.called.set()
        self.release.wait(30)


class _Rejecting:
    class Response:
        status_code = 400

    def emit(self, event: Any) -> None:
        error = ConnectionError("400 Client Error: Bad Request")
        error.response = self.Response()  # type: ignore[attr-defined]
        raise error


def test_a_hanging_transport_cannot_hold_delivery_past_its_deadline(tmp_path: Path) -> None:
    path = tmp_path / "outbox"
    outbox = Outbox(path)
    _append(outbox, _event(1), _event(2))
    tally = Tally()
    tally.add(IN_OUTBOX, 2)
    transport = _Hanging()
    delivery = Delivery(outbox, transport, Quarantine(tmp_path / "q.jsonl"), tally, sink="hang")
    started = time.monotonic()
    assert delivery.drain(started + 0.3) is False
    delivery.stop()
    outbox.close(1.0)
    assert time.monotonic() - started < 5
    assert transport.called.is_set() and transport.caller is not None
    transport.release.set()  # the abandoned call returns: it must not touch the closed outbox
    transport.caller.join(5)  # the delivery thread, done with the event it was sending
    assert not transport.caller.is_alive()
    assert _numbers(pending_on_disk(path)) == [1, 2]
    assert tally.snapshot() == {"in outbox": 2}


def test_a_rejected_event_is_quarantined_and_an_unwritable_quarantine_logs_it_whole(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "file").write_text("")
    outbox = Outbox(tmp_path / "outbox")
    _append(outbox, _event(1), _event(2))
    tally = Tally()
    tally.add(IN_OUTBOX, 2)
    unwritable = Quarantine(tmp_path / "file" / "q.jsonl")
    delivery = Delivery(outbox, _Rejecting(), unwritable, tally, sink="rejecting")
    assert delivery.drain(time.monotonic() + 10)
    delivery.stop()
    outbox.close(1.0)
    assert tally.snapshot() == {"quarantined to the log (rejected)": 2}
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert sum("cannot be written" in message for message in errors) == 1
    logged = [m for m in errors if m.startswith("OpenLineage event not quarantined (rejected)")]
    assert [json.loads(m.split(": ", 1)[1])["event"] for m in logged] == [_event(1), _event(2)]
    assert pending_on_disk(tmp_path / "outbox") == []


@pytest.fixture
def no_lineage_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No lineage settings in the environment; what openlineage-python adds (it copies
    OPENLINEAGE_URL to OPENLINEAGE__TRANSPORT__... variables) is removed afterwards."""
    for name in [n for n in os.environ if n.startswith(("OPENLINEAGE", "OL_SUBSET"))]:
        monkeypatch.delenv(name)
    yield monkeypatch
    for name in [n for n in os.environ if n.startswith("OPENLINEAGE")]:
        del os.environ[name]


def test_a_bad_output_falls_back_to_the_default_file_and_then_to_none(
    tmp_path: Path, no_lineage_env: pytest.MonkeyPatch
) -> None:
    no_lineage_env.chdir(tmp_path)
    (tmp_path / "file").write_text("")
    sink = resolve_transport(tmp_path / "file" / "events.jsonl")
    assert sink.file == tmp_path / "openlineage-events.jsonl"
    (problem,) = sink.problems
    assert "cannot write events to" in problem and "OL_SUBSET_OUTPUT" in problem
    sink.file.unlink()
    sink.file.mkdir()  # now the default cannot be written either
    nothing = resolve_transport(tmp_path / "file" / "events.jsonl")
    assert nothing.transport is None and "ol-subset replay" in nothing.problems[-1]


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("OPENLINEAGE_URL", "not-a-url"),
        ("OPENLINEAGE__TRANSPORT__TYPE", "kafka"),
        ("OPENLINEAGE__TRANSPORT__URL", "http://127.0.0.1:9"),  # no type: console, not ours
    ],
)
def test_an_unusable_transport_configuration_falls_back_to_the_file(
    tmp_path: Path, no_lineage_env: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    pytest.importorskip("openlineage.client", reason="needs openlineage-python (the spark extra)")
    no_lineage_env.chdir(tmp_path)
    no_lineage_env.setenv(variable, value)
    sink = resolve_transport(None)
    assert isinstance(sink.transport, JsonLinesTransport)
    (problem,) = sink.problems
    assert variable in problem and "fix or unset" in problem


def test_a_disabled_or_usable_configuration_is_used_as_it_is(
    tmp_path: Path, no_lineage_env: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openlineage.client", reason="needs openlineage-python (the spark extra)")
    no_lineage_env.chdir(tmp_path)
    no_lineage_env.setenv("OPENLINEAGE_DISABLED", "false")
    assert isinstance(resolve_transport(None).transport, JsonLinesTransport), "not a setting"
    no_lineage_env.setenv("OPENLINEAGE_URL", "http://127.0.0.1:9")
    http = resolve_transport(None)
    assert type(http.transport).__name__ == "HttpTransport" and http.problems == ()
    no_lineage_env.setenv("OPENLINEAGE_DISABLED", "true")
    assert type(resolve_transport(None).transport).__name__ == "NoopTransport"


def test_ol_subset_replay_sends_what_an_outbox_holds(tmp_path: Path) -> None:
    """The command line, as a user types it after a capture's close() ran out of time."""
    import subprocess
    import sys

    from openlineage_subset.delivery._outbox import Outbox, event_line

    outbox_path = tmp_path / "events.jsonl.outbox"
    outbox = Outbox(outbox_path)
    sent = [{"eventType": "START", "run": {"runId": f"r{i}"}} for i in range(3)]
    for event in sent:
        outbox.append(event_line(event))
    outbox.close(timeout=1)
    assert len(pending_on_disk(outbox_path)) == 3, "nothing was sent: the events stay"
    output = tmp_path / "events.jsonl"
    command = [sys.executable, "-m", "openlineage_subset", "replay", str(outbox_path)]
    done = subprocess.run(
        [*command, "--output", str(output)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in output.read_text().splitlines()] == sent
    assert pending_on_disk(outbox_path) == []
    again = subprocess.run([*command, "--output", str(output)], capture_output=True, check=False)
    assert again.returncode == 0 and len(output.read_text().splitlines()) == 3, "nothing twice"
    missing = subprocess.run(
        [*command[:-1], str(tmp_path / "none")], capture_output=True, check=False
    )
    assert missing.returncode == 2


def test_quarantine_reasons_carry_no_secrets(tmp_path: Path) -> None:
    from openlineage_subset.delivery._sending import Quarantine

    quarantine = Quarantine(tmp_path / "q.jsonl")
    error = "ConnectionError: http://lineage:hunter2@backend:5000/api/v1/lineage?api_key=abc123"
    where = quarantine.keep({"eventType": "START"}, Reason.UNDELIVERED, error=error)
    assert str(where) == "quarantined (undelivered)"
    kept = (tmp_path / "q.jsonl").read_text()
    assert "hunter2" not in kept and "abc123" not in kept
    assert "backend:5000" in kept, "the rest stays readable"
