"""Who may ask ``lineage serve``: a Host it answers to, no page of another origin, JSON posted.

Real clients against the real server: openlineage-python's ``HttpTransport`` (plain and gzip),
curl (``--resolve`` gives the shape of a DNS rebinding: a foreign name on 127.0.0.1), and raw
requests spelled as openlineage-java (Spark) sends them. Each refusal is one line of the
server's log. The page of another origin in a real browser: tests/browser/test_cross_origin.py.
"""

from __future__ import annotations

import gzip
import http.client
import json
import subprocess
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.lineage.events import pipeline_history
from tests.service.conftest import Server

http_transport = pytest.importorskip("openlineage.client.transport.http", reason="openlineage")


def raw(
    server: Server,
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: bytes | None = None,
    *,
    host: str | None = None,
) -> tuple[int, dict[str, Any]]:
    """One request with exactly these headers (``host``: the Host header, else the server's
    address), its status and JSON answer."""
    address = urlsplit(server.url)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", address.netloc if host is None else host)
        for name, value in headers.items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def curl(*args: str) -> tuple[int, str]:
    done = subprocess.run(
        ["curl", "--silent", "--max-time", "30", "--write-out", "\n%{http_code}", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    body, _, status = done.stdout.rpartition("\n")
    return int(status), body


def stored_runs(server: Server) -> int:
    status, answer = server.get("/api/v1/runs")
    assert status == 200, answer
    return int(answer["total"])


def log_lines(server: Server) -> list[str]:
    """The server's log, once stopped."""
    assert server.stop() == 0
    _, err = server.process.communicate()
    return err.splitlines()


def test_producers_keep_working(serve: Callable[..., Server]) -> None:
    server = serve()
    events = pipeline_history(days=2)
    for compression in (None, "gzip"):
        transport = http_transport.HttpTransport(
            http_transport.HttpConfig.from_dict({"url": server.url, "compression": compression})
        )
        for item in events[:2] if compression is None else events[2:4]:
            assert transport.emit(item).status_code == 201
    # as openlineage-java (the Spark integration) sends: its ContentType.APPLICATION_JSON
    spark_like = {
        "Content-Type": "application/json; charset=UTF-8",
        "Accept": "application/json; charset=UTF-8",
        "Content-Encoding": "gzip",
    }
    status, answer = raw(
        server, "POST", "/api/v1/lineage", spark_like, gzip.compress(json.dumps(events[4]).encode())
    )
    assert status == 201, answer
    status, body = curl(
        "-H", "Content-Type: application/json", "--data-binary", json.dumps(events[5]),
        f"{server.url}/api/v1/lineage",
    )  # fmt: skip
    assert status == 201, body
    status, answer = server.get("/api/v1/runs")
    assert answer["total"] == len({item["run"]["runId"] for item in events[:6]})
    assert [line for line in log_lines(server) if "refused" in line] == []


def test_a_foreign_host_is_refused_as_dns_rebinding_would_send_it(
    serve: Callable[..., Server],
) -> None:
    server = serve()
    port = urlsplit(server.url).port
    rebound = ["--resolve", f"attacker.example:{port}:127.0.0.1"]
    for path in ("/api/v1/runs", "/", "/runs", "/static/ui.css"):
        status, body = curl(*rebound, f"http://attacker.example:{port}{path}")
        assert status == 400, (path, body)
        assert "Host 'attacker.example:" in json.loads(body)["error"]
    event = json.dumps(pipeline_history(days=1)[0])
    status, _ = curl(
        *rebound, "-H", "Content-Type: application/json", "--data-binary", event,
        f"http://attacker.example:{port}/api/v1/lineage",
    )  # fmt: skip
    assert status == 400
    assert stored_runs(server) == 0
    # the names of loopback, with the port listened on, are the server's own
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        assert raw(server, "GET", "/api/v1/runs", {}, host=host)[0] == 200, host
    for host in (f"localhost:{port + 1}", "localhost", "", f"127.0.0.2:{port}"):
        assert raw(server, "GET", "/api/v1/runs", {}, host=host)[0] == 400, host
    lines = [line for line in log_lines(server) if line.startswith("refused")]
    assert len(lines) == 4 + 1 + 4, lines
    assert all("is not a name this server answers to" in line for line in lines)


def test_a_page_of_another_origin_may_not_post_or_read(serve: Callable[..., Server]) -> None:
    server = serve()
    event = json.dumps(pipeline_history(days=1)[0]).encode()
    for origin in ("http://attacker.example", "http://127.0.0.1:1", "null", "file://"):
        for method, path, body in (
            ("POST", "/api/v1/lineage", event),
            ("GET", "/api/v1/runs", None),
            ("POST", "/logout", b""),
        ):
            headers = {"Origin": origin, "Content-Type": "application/json"}
            status, answer = raw(server, method, path, headers, body)
            assert status == 403, (origin, path, answer)
            assert "a page of another origin" in answer["error"]
    assert stored_runs(server) == 0
    status, answer = raw(
        server,
        "POST",
        "/api/v1/lineage",
        {"Origin": server.url, "Content-Type": "application/json"},
        event,
    )
    assert status == 201, "a page of the server's own origin posts"
    refused = [line for line in log_lines(server) if line.startswith("refused")]
    assert len(refused) == 12 and all("(403)" in line for line in refused)


@pytest.mark.parametrize(
    "kind",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
     "application/jsonx", "text/json"],
)  # fmt: skip
def test_a_post_that_is_not_json_is_refused(serve: Callable[..., Server], kind: str | None) -> None:
    server = serve()
    event = json.dumps(pipeline_history(days=1)[0]).encode()
    status, answer = raw(
        server, "POST", "/api/v1/lineage", {} if kind is None else {"Content-Type": kind}, event
    )
    assert status == 415, answer
    assert "the API takes application/json" in answer["error"]
    assert stored_runs(server) == 0
    (line,) = [line for line in log_lines(server) if line.startswith("refused")]
    assert line.startswith("refused POST /api/v1/lineage from 127.0.0.1: ") and "(415)" in line


def test_allowed_hosts_are_answered_and_refusals_are_escaped(
    serve: Callable[..., Server],
) -> None:
    server = serve("--allowed-host", "lineage.example.com", "--allowed-host", "other.example:8443")
    port = urlsplit(server.url).port
    for host in ("lineage.example.com", "lineage.example.com:443", "other.example:8443"):
        assert raw(server, "GET", "/api/v1/runs", {}, host=host)[0] == 200, host
    proxied = {"Origin": "https://lineage.example.com", "Content-Type": "application/json"}
    event = json.dumps(pipeline_history(days=1)[0]).encode()
    assert (
        raw(server, "POST", "/api/v1/lineage", proxied, event, host="lineage.example.com")[0] == 201
    )
    assert raw(server, "GET", "/api/v1/runs", {}, host="other.example:8444")[0] == 400
    hostile = "\u202eevil\x85\x9b.example"
    status, _ = raw(
        server, "GET", "/api/v1/runs", {}, host=f"{hostile}:{port}".encode().decode("latin-1")
    )
    assert status == 400
    lines = log_lines(server)
    (line,) = [line for line in lines if "evil" in line]
    assert line.isprintable() and "Host '\\u202eevil\\x85\\x9b.example:" in line, line
