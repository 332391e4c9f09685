"""``lineage serve`` killed with SIGKILL while producers send: every event it acknowledged is
in the database, and the producers' outboxes, sent again by ``ol-subset replay`` once it is
back, store every event exactly once (``benchmarks/serve.py`` does the same at 20,000 events)."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.delivery import Emitter
from tests.lineage.events import pipeline_history
from tests.service.conftest import Server, command, environment

http = pytest.importorskip("openlineage.client.transport.http", reason="the spark extra")

Key = tuple[str, str]


def stored(db: str) -> Counter[Key]:
    """(runId, eventType) of every event in the database, with how often each is there."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT run_id, event_type FROM events").fetchall()
    finally:
        connection.close()
    return Counter((run_id, kind) for run_id, kind in rows)


class Recording(http.HttpTransport):  # type: ignore[misc,name-defined]
    """openlineage-python's HttpTransport, noting each event the server answered 2xx."""

    def __init__(self, url: str) -> None:
        retry = {"total": 0, "status_forcelist": [], "allowed_methods": ["POST"]}
        super().__init__(http.HttpConfig(url=url, timeout=10, retry=retry))
        self.acknowledged: list[Key] = []

    def emit(self, event: Any) -> Any:
        answer = super().emit(event)  # raises for anything but a 2xx
        self.acknowledged.append((event["run"]["runId"], event["eventType"]))
        return answer


def test_a_killed_server_loses_no_acknowledged_event_and_the_outboxes_send_the_rest(
    serve: Callable[..., Server], tmp_path: Path
) -> None:
    events = pipeline_history(days=30)
    sent = Counter((event["run"]["runId"], event["eventType"]) for event in events)
    assert len(events) >= 250 and max(sent.values()) == 1
    server = serve()
    port = server.url.rsplit(":", 1)[1]
    producers = []
    for number in range(2):  # each producer sends its runs' events in order
        transport = Recording(server.url)
        outbox = tmp_path / f"outbox-{number}"
        emitter = Emitter(transport, tmp_path / f"quarantine-{number}", outbox, close_timeout=1)
        producers.append((transport, emitter, outbox))
    for number, (_, emitter, _) in enumerate(producers):
        emitter.submit([event for index, event in enumerate(events) if index // 2 % 2 == number])

    deadline = time.monotonic() + 120
    while sum(stored(server.db).values()) < len(events) // 3:
        assert time.monotonic() < deadline, "the server stored too few events in 2 minutes"
        time.sleep(0.01)
    server.process.kill()  # SIGKILL, mid-stream
    server.process.wait(timeout=30)
    for _, emitter, _ in producers:
        emitter.close(timeout=1)

    after_kill = stored(server.db)
    acknowledged = [key for transport, _, _ in producers for key in transport.acknowledged]
    assert acknowledged, "nothing was acknowledged before the kill"
    assert len(acknowledged) < len(events), "the kill came after everything was sent"
    assert set(acknowledged) <= set(after_kill), "an acknowledged event was lost"
    assert max(after_kill.values()) == 1

    again = serve("--port", port)  # the same file, the same address the producers know
    env = environment(OPENLINEAGE_URL=again.url)
    env.pop("OPENLINEAGE_CONFIG", None)
    for _, _, outbox in producers:
        replay = subprocess.run(
            command("replay", str(outbox)),
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=120,
            cwd=tmp_path,
        )
        assert replay.returncode == 0, (replay.stdout, replay.stderr)
    assert again.stop() == 0
    assert stored(server.db) == sent, "not every event stored exactly once"
