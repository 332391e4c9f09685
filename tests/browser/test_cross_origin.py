"""A page of another origin, in a real headless Chromium, cannot write into ``lineage serve``.

The attacker's page is served from another port of 127.0.0.1 (another origin on the same
machine, as any local web server or a page a browser was sent to is): it posts an event with
``fetch(..., {mode: "no-cors"})`` (sent as ``text/plain``, which a browser lets any page send
anywhere) and with a form whose ``enctype`` is ``text/plain`` (a body that parses as JSON),
and reads the API with a plain ``fetch``. None of it is stored or read; the same ``fetch`` from
the server's own page, with ``Content-Type: application/json``, is stored.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lineage.events import run

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")

from tests.service.conftest import Server, start  # after the check: needs the serve extra

ATTACK = run(666, 0, 1, writes=[("planted", None)], job="planted")[1]
OWN = run(667, 0, 1, writes=[("own", None)], job="own")[1]

PAGE = """<!DOCTYPE html>
<html><head><title>waiting</title></head><body>
<form id="planted" method="POST" enctype="text/plain" action="{target}/api/v1/lineage">
<input type="hidden" name='{form_name}' value='{form_value}'>
</form>
<script>
const target = {target_json};
const event = {event_json};
const said = [];
fetch(target + "/api/v1/lineage", {{method: "POST", mode: "no-cors", body: JSON.stringify(event)}})
  .then(() => said.push("posted"), (error) => said.push("post failed: " + error))
  .then(() => fetch(target + "/api/v1/runs"))
  .then((answer) => answer.text().then((text) => said.push("read: " + text)),
        (error) => said.push("read failed"))
  .then(() => {{ document.title = said.join(" | "); }});
</script></body></html>
"""


def attacker_page(target: str) -> str:
    body = json.dumps(ATTACK)
    cut = body.index(":") + 1  # the form sends NAME=VALUE: together, the event's JSON
    return PAGE.format(
        target=target,
        target_json=json.dumps(target),
        event_json=body,
        form_name=body[:cut].replace("'", "&#39;"),
        form_value=body[cut + 1 :].replace("'", "&#39;"),
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    started = start(str(tmp_path / "lineage.db"))
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def attacker(server: Server) -> Iterator[str]:
    """The URL of the attacker's page, served from another port of 127.0.0.1."""
    page = attacker_page(server.url).encode("utf-8")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{other.server_address[1]}/"
    finally:
        other.shutdown()
        other.server_close()


def stored_jobs(server: Server) -> list[str]:
    status, answer = server.get("/api/v1/runs")
    assert status == 200
    return [item["job"]["name"] for item in answer["runs"]]


def test_a_page_of_another_origin_can_neither_post_nor_read(
    browser: Any, server: Server, attacker: str
) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(attacker, wait_until="load")
        page.wait_for_function("document.title !== 'waiting'", timeout=30_000)
        said = page.title()
        assert "posted" in said, "the browser sent it (no-cors hides the answer from the page)"
        assert "read failed" in said, "the answer is not the page's to read"
        assert stored_jobs(server) == [], "the no-cors post was refused"
        with page.expect_navigation():
            page.evaluate("document.getElementById('planted').submit()")
        refusal = json.loads(page.inner_text("body"))
        assert "a page of another origin" in refusal["error"]
        assert stored_jobs(server) == [], "the form's post was refused"

        own = context.new_page()
        own.goto(server.url + "/", wait_until="load")
        status = own.evaluate(
            """async (event) => (await fetch("/api/v1/lineage", {
                method: "POST", headers: {"Content-Type": "application/json"},
                body: JSON.stringify(event)})).status""",
            OWN,
        )
        assert status == 201, "the server's own page posts JSON"
        assert stored_jobs(server) == ["own"]
    finally:
        context.close()
    assert server.stop() == 0
    _, err = server.process.communicate()
    refused = [line for line in err.splitlines() if line.startswith("refused")]
    assert len(refused) == 3, err
    assert all("a page of another origin ('http://127.0.0.1:" in line for line in refused)
