"""Delivery on real Spark under faults: nothing vanishes, close() keeps to its budget.

Each fault is real where it can be: a local HTTP endpoint that answers 500, hangs, answers
after 5 s, rejects, or a closed port; a quarantine or outbox path under a regular file (which
even root cannot create); ``/dev/full``; a file size limit (RLIMIT_FSIZE) that cuts a write
short. Every test counts: events delivered (what the endpoint or the file received) + in the
outbox (read from its files) + quarantined = events produced (two per action, two for the
application), and the capture's counts say the same.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import socket
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from openlineage_subset.delivery import replay_command
from openlineage_subset.spark import LineageSettingsWarning, enable
from tests.delivery.helpers import pending_on_disk
from tests.spark.conftest import MemoryTransport, ol_subset

pytestmark = pytest.mark.spark

BUDGET = 2.0
MARGIN = 20.0
"""Loose: close() also waits for Spark's listener bus; the old behaviour took 60 s."""
ACTIONS = 6
PRODUCED = 2 * ACTIONS + 2


Key = tuple[str, str]


def _keys(events: list[dict[str, Any]]) -> set[Key]:
    return {(event["run"]["runId"], event["eventType"]) for event in events}


def _complete_runs(keys: set[Key]) -> bool:
    """The keys of whole runs: each run id with a START and a COMPLETE or FAIL."""
    runs: dict[str, set[str]] = {}
    for run_id, event_type in keys:
        runs.setdefault(run_id, set()).add(event_type)
    return all(types in ({"START", "COMPLETE"}, {"START", "FAIL"}) for types in runs.values())


def _quarantined(counts: Any) -> int:
    return sum(n for key, n in counts.items() if key.startswith("quarantined"))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("delivery") / "numbers"
    spark.range(60).withColumn("part", F.col("id") % ACTIONS).write.partitionBy("part").parquet(
        str(path)
    )
    return path


def _run_actions(spark: SparkSession, table: Path, count: int = ACTIONS) -> None:
    for part in range(count):
        assert spark.read.parquet(str(table)).where(F.col("part") == part).count() == 10


class Endpoint:
    """An OpenLineage HTTP endpoint on 127.0.0.1 whose ``mode`` says how it answers:
    ``ok`` (200), ``500``, ``reject`` (400), ``hang`` (no answer until released), ``slow``
    (200 after 5 s). ``acknowledged`` holds the events it answered 200 to."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.acknowledged: list[dict[str, Any]] = []
        self.released = threading.Event()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                mode = endpoint.mode
                if mode == "hang":
                    endpoint.released.wait(60)
                    mode = "500"
                elif mode == "slow":
                    time.sleep(5)
                status = {"ok": 200, "slow": 200, "500": 500, "reject": 400}[mode]
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if status == 200:
                    endpoint.acknowledged.append(json.loads(body))

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    yield server
    server.stop()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """No lineage settings from the environment; ``point(url)`` configures the HTTP transport
    the way users do. openlineage-python adds OPENLINEAGE__ aliases: removed afterwards."""
    for name in [n for n in os.environ if n.startswith(("OPENLINEAGE", "OL_SUBSET"))]:
        monkeypatch.delenv(name)

    def point(url: str) -> None:
        monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "http")
        monkeypatch.setenv("OPENLINEAGE__TRANSPORT__URL", url)

    yield point
    for name in [n for n in os.environ if n.startswith("OPENLINEAGE")]:
        del os.environ[name]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _timed_close(handle: Any) -> bool:
    started = time.monotonic()
    closed = bool(handle.close())
    assert time.monotonic() - started < BUDGET + MARGIN, "close() keeps to its budget"
    return closed


# 1. An endpoint that fails ----------------------------------------------------------------------


_FAILURES = [("500", "capture"), ("hang", "capture"), ("slow", "replay"), ("refused", "replay")]


@pytest.mark.parametrize("failure", _FAILURES, ids="-".join)
def test_a_failing_endpoint_loses_nothing(
    spark: SparkSession,
    table: Path,
    tmp_path: Path,
    *,
    endpoint: Endpoint,
    clean_env: Callable[[str], None],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    failure: tuple[str, str],
) -> None:
    """The endpoint fails as ``mode`` says; what it did not take is recovered by ``recovery``:
    the next application's capture, or ``ol-subset replay``."""
    mode, recovery = failure
    outbox, quarantine = tmp_path / "outbox", tmp_path / "q.jsonl"
    endpoint.mode = mode
    clean_env(f"http://127.0.0.1:{_closed_port()}" if mode == "refused" else endpoint.url)
    handle = enable(spark, outbox=outbox, quarantine=quarantine, close_timeout=BUDGET)
    _run_actions(spark, table)
    assert _timed_close(handle) is False
    delivered = list(endpoint.acknowledged)
    pending = pending_on_disk(outbox)
    counts = handle.counts
    assert counts["emitted"] + counts["in outbox"] + _quarantined(counts) == PRODUCED
    assert counts["in outbox"] == len(pending) > 0
    assert counts["emitted"] <= len(_keys(delivered))
    produced = _keys(delivered) | _keys(pending)
    assert len(produced) == PRODUCED and _complete_runs(produced), "each event somewhere"
    assert not quarantine.exists()
    (said,) = [r.getMessage() for r in caplog.records if "stay in the outbox" in r.getMessage()]
    assert f"{len(pending)} event(s) stay in the outbox {outbox}" in said
    assert f"ol-subset replay {outbox}" in said

    endpoint.released.set()  # a hung request may now end; its capture gave up on it
    endpoint.mode = "ok"
    if recovery == "capture":
        second = enable(spark, outbox=outbox, quarantine=quarantine, close_timeout=BUDGET)
        assert second.flush() and _timed_close(second)
        assert second.counts["replayed"] == len(pending)
        assert second.counts["emitted"] == 2, "the second application's START and COMPLETE"
    else:
        clean_env(endpoint.url)
        assert replay_command(str(outbox)) == 0
        assert f"sent {len(pending)} of {len(pending)} event(s)" in capsys.readouterr().out
    assert pending_on_disk(outbox) == []
    assert produced <= _keys(endpoint.acknowledged), "the leftovers reached the endpoint"


def test_rejected_events_are_quarantined_not_retried(
    spark: SparkSession,
    table: Path,
    tmp_path: Path,
    endpoint: Endpoint,
    clean_env: Callable[[str], None],
) -> None:
    endpoint.mode = "reject"
    clean_env(endpoint.url)
    quarantine = tmp_path / "q.jsonl"
    handle = enable(spark, outbox=tmp_path / "outbox", quarantine=quarantine, close_timeout=BUDGET)
    _run_actions(spark, table, 1)
    assert _timed_close(handle) is True
    kept = _lines(quarantine)
    assert {record["reason"] for record in kept} == {"rejected"}
    assert len(_keys([record["event"] for record in kept])) == 4
    assert handle.counts["quarantined (rejected)"] == 4
    assert pending_on_disk(tmp_path / "outbox") == []
    assert quarantine.stat().st_mode & 0o777 == 0o600


# 2. A quarantine or an outbox that cannot be written ----------------------------------------


def test_an_unwritable_quarantine_kills_nothing_and_counts_the_truth(
    spark: SparkSession, table: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The quarantine's folder would be a regular file: not even root can create it."""
    (tmp_path / "file").write_text("")
    transport = MemoryTransport()
    handle = enable(
        spark,
        transport=transport,
        outbox=tmp_path / "outbox",
        quarantine=tmp_path / "file" / "q.jsonl",
        close_timeout=BUDGET,
    )
    invalid = {"eventType": "START", "eventTime": "not a time"}
    handle.emitter.submit([invalid])
    _run_actions(spark, table, 1)
    started = time.monotonic()
    assert handle.flush() is True, "flush() does not hang on a dead thread"
    assert time.monotonic() - started < BUDGET + MARGIN
    _run_actions(spark, table, 1)  # delivery goes on after the failure
    assert _timed_close(handle) is True
    counts = handle.counts
    assert counts["quarantined to the log (invalid)"] == 1
    assert counts["emitted"] == len(_keys(transport.events)) == 2 + 2 * 2
    assert counts["emitted"] + counts["in outbox"] + _quarantined(counts) == 2 + 2 * 2 + 1
    assert not (tmp_path / "file").is_dir()
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert sum("cannot be written" in message for message in errors) == 1
    (logged,) = [m for m in errors if m.startswith("OpenLineage event not quarantined")]
    assert json.loads(logged.split(": ", 1)[1])["event"] == invalid, "logged whole"


class _Down:
    def emit(self, event: Any) -> None:
        raise ConnectionError("the lineage backend is down")


def test_an_unusable_outbox_degrades_to_memory_then_to_the_quarantine(
    spark: SparkSession, table: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "file").write_text("")
    quarantine = tmp_path / "q.jsonl"
    handle = enable(
        spark,
        transport=_Down(),
        outbox=tmp_path / "file" / "outbox",
        quarantine=quarantine,
        close_timeout=BUDGET,
    )
    _run_actions(spark, table, 2)
    assert _timed_close(handle) is False
    kept = _lines(quarantine)
    assert {record["reason"] for record in kept} == {"undelivered"}
    assert all("the lineage backend is down" in record["error"] for record in kept)
    assert len(_keys([record["event"] for record in kept])) == 6
    assert handle.counts["quarantined (undelivered)"] == 6 == _quarantined(handle.counts)
    warned = [r for r in caplog.records if "cannot be used" in r.getMessage()]
    assert len(warned) == 1 and warned[0].levelno == logging.WARNING
    assert str(tmp_path / "file" / "outbox") in warned[0].getMessage()


# 3. A full disk ------------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_events_file_on_a_full_disk_stays_in_the_outbox_and_replays(
    spark: SparkSession,
    table: Path,
    tmp_path: Path,
    clean_env: Callable[[str], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    outbox = tmp_path / "outbox"
    handle = enable(
        spark, output="/dev/full", outbox=outbox, quarantine=tmp_path / "q.jsonl", close_timeout=1
    )
    _run_actions(spark, table, 2)
    assert _timed_close(handle) is False
    assert handle.counts["in outbox"] == len(pending_on_disk(outbox)) == 6
    assert handle.counts["emitted"] == 0
    events = tmp_path / "events.jsonl"
    assert replay_command(str(outbox), output=str(events)) == 0
    assert "sent 6 of 6" in capsys.readouterr().out
    assert len(_keys(_lines(events))) == 6 and _complete_runs(_keys(_lines(events)))


@pytest.fixture
def file_size_limit() -> Iterator[Callable[[int], None]]:
    """``limit(n)``: no file of this process may grow past n bytes (writes are cut short,
    then fail with EFBIG) until the test ends. Spark's JVM is another process: unaffected."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def limit(size: int) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))

    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


PADDING = b'{"eventType": "OTHER", "padding": "' + b"x" * 200 + b'"}\n'


def test_a_write_cut_short_leaves_no_torn_line_and_is_sent_later(
    spark: SparkSession,
    table: Path,
    tmp_path: Path,
    clean_env: Callable[[str], None],
    file_size_limit: Callable[[int], None],
) -> None:
    """The events file is far larger than the outbox; a limit just past its size cuts an
    event's write short, as a full disk does."""
    events, outbox = tmp_path / "events.jsonl", tmp_path / "outbox"
    events.write_bytes(PADDING * 1200)
    before = len(_lines(events))
    quarantine = tmp_path / "q.jsonl"
    handle = enable(spark, output=events, outbox=outbox, quarantine=quarantine, close_timeout=1)
    file_size_limit(events.stat().st_size + 2500)
    _run_actions(spark, table, 3)
    closed = _timed_close(handle)
    file_size_limit(resource.RLIM_INFINITY)
    written = _lines(events)[before:]  # every line parses: none is torn
    pending = pending_on_disk(outbox)
    counts = handle.counts
    assert closed is False and pending, "the limit was hit"
    assert counts["emitted"] == len(written) and counts["in outbox"] == len(pending)
    assert counts["emitted"] + counts["in outbox"] + _quarantined(counts) == 8
    assert len(_keys(written) | _keys(pending)) == 8

    second = enable(spark, output=events, outbox=outbox, quarantine=quarantine, close_timeout=5)
    assert _timed_close(second) is True
    assert second.counts["replayed"] == len(pending)
    after = _keys(_lines(events)[before:])
    assert len(after) == 10 and _complete_runs(after)


def test_an_outbox_on_a_full_disk_falls_back_to_memory(
    spark: SparkSession,
    table: Path,
    tmp_path: Path,
    file_size_limit: Callable[[int], None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Events an earlier capture left make the outbox's segment large; a limit just past its
    size makes the next appends fail part way."""
    outbox = tmp_path / "outbox"
    (outbox / "lane-0").mkdir(mode=0o700, parents=True)
    outbox.chmod(0o700)  # as the adapter makes it, whatever the umask: others' would be refused
    left = [
        {"eventType": "START", "run": {"runId": f"earlier-{n}"}, "padding": "x" * 1000}
        for n in range(60)
    ]
    segment = outbox / "lane-0" / "000000000001.jsonl"
    segment.write_text("".join(json.dumps(event) + "\n" for event in left))
    segment.chmod(0o600)
    transport = MemoryTransport()
    file_size_limit(segment.stat().st_size + 300)
    handle = enable(
        spark, transport=transport, outbox=outbox, quarantine=tmp_path / "q.jsonl", close_timeout=5
    )
    _run_actions(spark, table, 2)
    closed = _timed_close(handle)
    file_size_limit(resource.RLIM_INFINITY)
    assert closed is True
    counts = handle.counts
    assert counts["replayed"] == 60 and counts["emitted"] == 6
    assert counts["emitted"] + counts["in outbox"] + _quarantined(counts) == 6
    assert len(_keys(transport.events)) == 66
    assert pending_on_disk(outbox) == [], "read whole: no torn line left behind"
    said = [r.getMessage() for r in caplog.records if "cannot be written" in r.getMessage()]
    assert len(said) == 1 and "File too large" in said[0]


# 4. Bad lineage settings --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        (None, None, "cannot write events to"),
        ("OPENLINEAGE_URL", "not-a-url", "OPENLINEAGE_URL"),
        ("OPENLINEAGE__TRANSPORT__TYPE", "kafka", "OPENLINEAGE__TRANSPORT__TYPE"),
    ],
)
def test_bad_lineage_settings_warn_once_and_write_the_default_file(
    spark: SparkSession,
    table: Path,
    tmp_path: Path,
    *,
    monkeypatch: pytest.MonkeyPatch,
    clean_env: Callable[[str], None],
    variable: str | None,
    value: str,
    named: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("")
    output = tmp_path / "file" / "events.jsonl" if variable is None else None
    if variable is not None:
        monkeypatch.setenv(variable, value)
    with pytest.warns(LineageSettingsWarning) as said:
        handle = enable(spark, output=output, close_timeout=BUDGET)
    (warning,) = said
    assert named in str(warning.message)
    _run_actions(spark, table, 1)
    assert _timed_close(handle) is True
    assert len(_keys(_lines(tmp_path / "openlineage-events.jsonl"))) == 4


def test_with_nowhere_to_write_events_stay_in_the_outbox(
    spark: SparkSession,
    table: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    clean_env: Callable[[str], None],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "openlineage-events.jsonl").mkdir()  # the default file cannot be written
    with pytest.warns(LineageSettingsWarning) as said:
        handle = enable(spark, close_timeout=BUDGET)
    assert "no transport" in str(said[-1].message)
    _run_actions(spark, table, 1)
    assert _timed_close(handle) is False
    assert handle.counts["in outbox"] == len(pending_on_disk(tmp_path / "openlineage-outbox")) == 4
    events = tmp_path / "events.jsonl"
    assert replay_command(str(tmp_path / "openlineage-outbox"), output=str(events)) == 0
    assert len(_keys(_lines(events))) == 4


SCRIPT = textwrap.dedent(
    """
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[1]").appName("bad_settings")
             .config("spark.ui.enabled", "false").getOrCreate())
    print("rows", spark.range(5).write.mode("overwrite").parquet("out") or "written")
    spark.stop()
    """
)


def test_ol_subset_run_with_a_bad_output_runs_the_script(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    (tmp_path / "file").write_text("")
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENLINEAGE", "OL_SUBSET"))
    }
    done = ol_subset(
        "run",
        "--output",
        str(tmp_path / "file" / "events.jsonl"),
        str(script),
        cwd=tmp_path,
        env=environment,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.count("LineageSettingsWarning") == 1
    assert "rows written" in done.stdout
    events = _lines(tmp_path / "openlineage-events.jsonl")
    assert {event["job"]["name"] for event in events} >= {"bad_settings"}
    assert len(events) == 4 and _complete_runs(_keys(events))
