"""What the service tests share: requests to the running server or to its ASGI application,
its pages' paths, events posted, its peak memory. The server itself is started by the fixtures
of conftest.py.
"""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.service.conftest import Server, run_async


def dataset_names(db: str) -> set[str]:
    """The names of the datasets a server's database holds."""
    with sqlite3.connect(db) as connection:
        found = {name for (name,) in connection.execute("SELECT name FROM datasets")}
    connection.close()
    return found


def peak_memory(server: Server) -> int:
    """The most memory (resident, bytes) the server's process has held."""
    status = Path(f"/proc/{server.process.pid}/status").read_text(encoding="utf-8")
    (line,) = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) * 1024


class _Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a redirect is the answer looked at, not followed


_OPENER = urllib.request.build_opener(_Stay)


def fetch(
    server: Server,
    path: str,
    *,
    data: bytes | None = None,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, Any, str]:
    """Status, headers and text of one request, a redirect not followed."""
    request = urllib.request.Request(server.url + path, data=data, headers=dict(headers or {}))
    try:
        with _OPENER.open(request, timeout=30) as answer:
            return answer.status, answer.headers, answer.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers, error.read().decode("utf-8")


def page_path(route: str, **params: Any) -> str:
    return f"{route}?{urllib.parse.urlencode(params, doseq=True)}"


def post_events(server: Server, events: list[dict[str, Any]]) -> None:
    for item in events:
        status, _ = server.request("POST", "/api/v1/lineage", json.dumps(item).encode())
        assert status in (200, 201)


def asgi_call(app: Any, method: str, path: str, body: bytes = b"") -> tuple[int, str, bytes]:
    """Status, content type and body of one request to the ASGI application ``app``."""
    target, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": target,
        "raw_path": target.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8080),
    }
    sent: list[dict[str, Any]] = []
    requested = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return requested.pop(0) if requested else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        await app(scope, receive, send)

    run_async(run())
    start = next(message for message in sent if message["type"] == "http.response.start")
    headers = dict(start["headers"])
    content = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], headers[b"content-type"].decode(), content
