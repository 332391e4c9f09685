"""``ol-subset lineage serve`` as a command: what it refuses before listening (one line, exit
2), the ready line, and a clean stop on SIGTERM or SIGINT (exit 0, nothing half-written)."""

from __future__ import annotations

import http.client
import importlib.util
import json
import signal
import socket
import sqlite3
import subprocess
import threading
import time
import urllib.error
from collections.abc import Callable
from pathlib import Path

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import ingest
from tests.lineage.events import event as made_event
from tests.lineage.events import pipeline_history, write_events
from tests.service.conftest import Server, command, environment


def refused(*args: str, env: dict[str, str] | None = None) -> str:
    """The one line ``lineage serve ARGS`` ends with, exit status 2, nothing listening."""
    done = subprocess.run(
        command("lineage", "serve", *args),
        capture_output=True,
        text=True,
        env=env or environment(),
        check=False,
        timeout=60,
    )
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "example.com"])
def test_an_address_beyond_loopback_needs_a_key(tmp_path: Path, host: str) -> None:
    line = refused("--db", str(tmp_path / "l.db"), "--host", host, "--port", "0")
    assert f"--host {host} is reachable from other machines" in line
    assert "--insecure" in line
    assert not (tmp_path / "l.db").exists(), "refused before the database is made"


def test_insecure_or_a_key_lets_it_past_the_address_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from openlineage_subset import service

    def no_listening(host: str, port: int) -> socket.socket:
        raise service.ServiceError(f"stopped before listening on {host}")

    monkeypatch.setattr(service, "listen", no_listening)
    db = str(tmp_path / "l.db")
    for extra in (["--insecure"], ["--api-key", "k"]):
        assert main(["lineage", "serve", "--db", db, "--host", "0.0.0.0", *extra]) == 2
        assert "stopped before listening on 0.0.0.0" in capsys.readouterr().err


def test_without_the_serve_extra_it_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "starlette" else real(name, *rest),
    )
    assert main(["lineage", "serve", "--db", str(tmp_path / "l.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "needs starlette: pip install 'openlineage-subset[serve]'" in err


def test_unusable_settings_are_one_line_each(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    assert "--max-body-bytes must be between 1 and" in refused("--db", db, "--max-body-bytes", "0")
    assert "cannot read the key" in refused("--db", db, "--api-key-file", str(tmp_path / "no"))
    assert "must be printable ASCII text, not empty" in refused(
        "--db", db, env=environment(OL_SUBSET_API_KEY="")
    )
    foreign = tmp_path / "foreign.db"
    foreign.write_text("not a database", encoding="utf-8")
    assert "not a SQLite database" in refused("--db", str(foreign), "--port", "0")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        line = refused("--db", db, "--port", port)
    assert f"cannot listen on 127.0.0.1 port {port}" in line


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_it_cleanly_with_every_acknowledged_event_stored(
    serve: Callable[..., Server], stop: signal.Signals
) -> None:
    server = serve()
    assert server.url.rsplit(":", 1)[1] != "0", "the ready line names the real port"
    events = pipeline_history(days=40)
    acknowledged = []

    def post() -> None:
        for event in events:
            try:
                status, _ = server.request("POST", "/api/v1/lineage", json.dumps(event).encode())
            except (urllib.error.URLError, ConnectionError, http.client.HTTPException):
                return  # the server stopped listening
            if status == 201:
                acknowledged.append(event)

    sender = threading.Thread(target=post)
    sender.start()
    while len(acknowledged) < 20:
        assert sender.is_alive()
        time.sleep(0.01)
    server.process.send_signal(stop)
    assert server.process.wait(timeout=30) == 0
    sender.join()
    assert len(acknowledged) < len(events), "stopped while events were arriving"
    with sqlite3.connect(server.db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        count = connection.execute("SELECT count(*) FROM events").fetchone()[0]
    connection.close()
    assert len(acknowledged) <= count <= len(acknowledged) + 1
    _, err = server.process.communicate()
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("option", "low", "high"),
    [
        ("--port", 0, 65535),
        ("--max-body-bytes", 1, 1 << 30),
        ("--max-header-bytes", 1024, 1 << 20),
        ("--header-timeout", 1, 3600),
        ("--keep-alive", 0, 3600),
        ("--body-timeout", 1, 86_400),
        ("--max-connections", 1, 100_000),
        ("--retain-days", 1, 36_500),
    ],
)
def test_every_number_option_is_bounded_in_one_line(
    tmp_path: Path, option: str, low: int, high: int
) -> None:
    db = str(tmp_path / "l.db")
    for value in (low - 1, high + 1, 10**23):
        line = refused("--db", db, option, str(value))
        assert line == (
            f"ol-subset lineage serve: {option} must be between {low} and {high}, got {value}"
        )
    assert not Path(db).exists(), "refused before the database is made"


@pytest.mark.parametrize("name", ["", "a b", "http://x", "x/y", "x:99999999", "\u202ex"])
def test_an_allowed_host_that_is_no_host_name_is_refused(tmp_path: Path, name: str) -> None:
    line = refused("--db", str(tmp_path / "l.db"), "--allowed-host", name)
    assert "--allowed-host takes a host name or address" in line


def test_a_service_that_retains_days_prunes_once_ready_and_takes_events_still(
    serve: Callable[..., Server], tmp_path: Path
) -> None:
    """October 2024's runs, more than 30 days before now: pruned once the service is ready
    (but the last writers of partitions), a line said; answers say so; events are stored."""
    db = str(tmp_path / "lineage.db")
    ingest([write_events(tmp_path / "old.jsonl", pipeline_history(4))], db)
    server = serve("--retain-days", "30", db=db)
    assert server.process.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(server.process.stdout.readline()))
    reader.start()
    reader.join(timeout=60)
    assert lines and lines[0].startswith("retention (30 days): "), lines
    removed = int(lines[0].split(": ", 1)[1].split()[0])
    assert removed > 0, lines[0]
    status, answer = server.get("/api/v1/history?dataset=raw&partition=day%3D2024-10-02")
    assert status == 200 and "were pruned" in answer["notes"][0], answer
    posted = made_event(500, "START", 10, job="late", reads=[("raw", None)])
    assert server.request("POST", "/api/v1/lineage", json.dumps(posted).encode())[0] == 201
    assert server.stop() == 0
    with sqlite3.connect(db) as connection:
        (runs,) = connection.execute("SELECT count(*) FROM runs").fetchone()
    assert runs == 4 * 5 - removed + 1
