"""``ol-subset lineage serve`` started for real: a subprocess on 127.0.0.1, a free port."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.helpers import ROOT

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")
pytest.importorskip("uvicorn", reason="the serve extra: pip install 'openlineage-subset[serve]'")

_STARTUP_SECONDS = 30
_LIMITED = (
    "import resource, runpy; resource.setrlimit(resource.RLIMIT_NOFILE, ({files}, {files})); "
    "runpy.run_module('openlineage_subset', run_name='__main__', alter_sys=True)"
)


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "openlineage_subset", *args]


def environment(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "OL_SUBSET_API_KEY"}
    paths = [str(ROOT / "src"), str(ROOT / "generated"), str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


class Server:
    """A running ``lineage serve``: its URL, its process, and a way to ask it."""

    def __init__(self, process: subprocess.Popen[str], url: str, db: str) -> None:
        self.process = process
        self.url = url
        self.db = db

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, Any]:
        """Status and JSON answer of one request (a body is sent as JSON unless ``headers``
        say otherwise: urllib would call it a form)."""
        given = dict(headers or {})
        if body is not None and not any(name.lower() == "content-type" for name in given):
            given["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=body, method=method, headers=given)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            with error:
                return error.code, json.loads(error.read())

    def get(self, path: str, headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
        return self.request("GET", path, headers=headers)

    def stop(self) -> int:
        """SIGTERM, and the exit status."""
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(timeout=30)


def start(
    db: str, *args: str, env: Mapping[str, str] | None = None, files: int | None = None
) -> Server:
    """Start ``lineage serve --db DB --port 0 ARGS`` and wait for its ready line; ``files``:
    its limit of open files (``ulimit -n``)."""

    started = command("lineage", "serve", "--db", db, "--port", "0", *args)
    if files is not None:  # set by the new process itself: no preexec_fn in a threaded one
        started[1:3] = ["-c", _LIMITED.format(files=files)]
    process = subprocess.Popen(
        started,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env or environment()),
    )
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    stdout = process.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        first = lines.get(timeout=_STARTUP_SECONDS)
    except queue.Empty:
        process.kill()
        process.wait()
        raise AssertionError("lineage serve printed no ready line") from None
    if not first.startswith("ready: http://127.0.0.1:"):
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"lineage serve did not start: {first!r} {err!r}")
    return Server(process, first.removeprefix("ready: ").strip(), db)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start servers (over ``tmp_path/lineage.db`` unless told); each stopped by its pid at
    the end."""
    started: list[Server] = []

    def starter(
        *args: str,
        db: str | None = None,
        env: Mapping[str, str] | None = None,
        files: int | None = None,
    ) -> Server:
        server = start(db or str(tmp_path / "lineage.db"), *args, env=env, files=files)
        started.append(server)
        return server

    yield starter
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
        server.process.communicate()


T = TypeVar("T")


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` in a thread of its own: the test process may already run an event loop
    in its main thread (Playwright's, when the browser tests run in the same pytest)."""
    results: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            results.append(asyncio.run(coroutine))
        except BaseException as error:  # handed to the caller
            errors.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]
