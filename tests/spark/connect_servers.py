"""``ol-subset connect-server`` started as a user starts it, for the tests: a process of its own on
a free port of 127.0.0.1 (with ``--master`` on the test cluster), killed when the block ends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.spark.conftest import SUBPROCESS_MASTER

READY_SECONDS = 180.0


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    events: Path
    stderr: Path

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Signal the server and wait for it; its exit status."""
        self.process.send_signal(signum)
        return self.process.wait(timeout=180)

    def runs(self) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = {}
        for line in self.events.read_text().splitlines():
            event = json.loads(line)
            found.setdefault(event["run"]["runId"], []).append(event)
        return found


@contextmanager
def connect_server(work: Path, *options: str) -> Iterator[Server]:
    """``ol-subset connect-server`` on a free port of 127.0.0.1, until the block ends."""
    work.mkdir(parents=True, exist_ok=True)
    events, stderr = work / "events.jsonl", work / "server.log"
    command = [
        sys.executable,
        "-m",
        "openlineage_subset",
        "connect-server",
        "--port",
        "0",
        "--output",
        str(events),
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        f"spark.sql.warehouse.dir={work / 'warehouse'}",
        *options,
    ]
    if os.environ.get(SUBPROCESS_MASTER):
        command += ["--master", os.environ[SUBPROCESS_MASTER]]
    with stderr.open("w") as log:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, cwd=work)
    try:
        url = ready_url(process, stderr)
        yield Server(process, url, events, stderr)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)


def ready_url(process: subprocess.Popen[str], stderr: Path) -> str:
    found: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        found.append(process.stdout.readline())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(READY_SECONDS)
    line = found[0] if found else ""
    if not line.startswith("ready: sc://"):
        process.kill()
        raise AssertionError(f"no ready line ({line!r}); server log:\n{stderr.read_text()[-3000:]}")
    assert line.endswith("\n") and line.count("\n") == 1
    return line.removeprefix("ready: ").strip()
