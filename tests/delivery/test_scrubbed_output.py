"""No credential leaves through a log line, a warning or a printed summary, whatever delivery meets.

The endpoint is a real HTTP server on 127.0.0.1 answering 401, reached through a URL with user
information, as users configure openlineage-python; the settings are real environment variables.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.delivery._emitter import open_emitter
from openlineage_subset.delivery._replay import replay_command
from openlineage_subset.producer import LineageSettingsWarning
from tests.delivery.helpers import pending_on_disk

TOKEN = "T0KEN-d41d8cd98f00b204"
API_KEY = "K3Y-9e107d9d372bb682"
EVENT = json.loads(
    (Path(__file__).parents[2] / "examples" / "daily_sales_events.jsonl")
    .read_text()
    .splitlines()[0]
)


def _unauthorized_endpoint() -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def no_lineage_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No lineage settings in the environment, and none of those openlineage-python adds."""
    for name in [n for n in os.environ if n.startswith(("OPENLINEAGE", "OL_SUBSET"))]:
        monkeypatch.delenv(name)
    yield monkeypatch
    for name in [n for n in os.environ if n.startswith("OPENLINEAGE")]:
        del os.environ[name]


@pytest.fixture
def unauthorized_url() -> Iterator[str]:
    """An endpoint answering 401, its URL carrying a user and a token."""
    server = _unauthorized_endpoint()
    yield f"http://lineage:{TOKEN}@127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_401_endpoint_leaves_its_token_out_of_logs_and_summaries(
    tmp_path: Path,
    no_lineage_env: pytest.MonkeyPatch,
    unauthorized_url: str,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("openlineage.client", reason="needs openlineage-python (the spark extra)")
    no_lineage_env.chdir(tmp_path)
    no_lineage_env.setenv("OPENLINEAGE_URL", unauthorized_url)
    outbox = tmp_path / "outbox"
    emitter = open_emitter(
        transport=None, output=None, quarantine=None, outbox=outbox, close_timeout=1.0
    )
    emitter.submit([EVENT])
    assert emitter.close() is False
    assert emitter.counts == {"in outbox": 1} and len(pending_on_disk(outbox)) == 1
    said = [record for record in caplog.records if record.name.startswith("openlineage_subset")]
    assert any("401" in record.getMessage() for record in said), "the failure is still said"
    assert TOKEN not in caplog.text
    assert TOKEN not in str(emitter.delivery.last_error)

    status = replay_command(str(outbox), output=None, quarantine=None, timeout=1.0)
    printed = capsys.readouterr()
    assert status == 1 and "401" in printed.out, "replay names the error, without the token"
    assert TOKEN not in printed.out + printed.err + caplog.text


@pytest.mark.parametrize(
    "url",
    [
        f"http://lineage:{TOKEN}@lineage host:5000/?api_key={API_KEY}",
        f"http://lineage:{TOKEN}@lineage:port/api?api_key={API_KEY}",
        f"lineage:{TOKEN}@lineage:5000?api_key={API_KEY}",  # no scheme
    ],
)
def test_a_malformed_url_is_warned_about_without_its_token_or_api_key(
    tmp_path: Path,
    no_lineage_env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    url: str,
) -> None:
    pytest.importorskip("openlineage.client", reason="needs openlineage-python (the spark extra)")
    no_lineage_env.chdir(tmp_path)
    no_lineage_env.setenv("OPENLINEAGE_URL", url)
    no_lineage_env.setenv("OPENLINEAGE_API_KEY", API_KEY)
    with pytest.warns(LineageSettingsWarning) as warned:
        emitter = open_emitter(
            transport=None, output=None, quarantine=None, outbox="outbox", close_timeout=0.5
        )
    emitter.close()
    (message,) = [str(warning.message) for warning in warned]
    assert "OPENLINEAGE_URL" in message and "fix or unset" in message, "still says what to do"
    assert TOKEN not in message and API_KEY not in message

    replay_command(str(tmp_path / "outbox"), output=None, quarantine=None, timeout=0.5)
    printed = capsys.readouterr()
    assert "OPENLINEAGE_URL" in printed.err
    assert TOKEN not in printed.err + printed.out and API_KEY not in printed.err + printed.out


def test_openlineage_python_logs_its_configuration_scrubbed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # openlineage-python itself logs the URL whole: when it cannot read the value as JSON (a
    # "{" or "[" in it), and when it builds its HTTP transport (at DEBUG).
    pytest.importorskip("openlineage.client", reason="openlineage-python is not installed")
    from openlineage_subset.delivery._openlineage_client import configured_transport

    url = f"http://etl:{TOKEN}{{x}}@127.0.0.1:9/api?api_key={API_KEY}["
    monkeypatch.setenv("OPENLINEAGE_URL", url)
    with caplog.at_level(logging.DEBUG):
        configured_transport()
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "127.0.0.1:9" in logged  # it did log the configuration...
    assert TOKEN not in logged and API_KEY not in logged  # ...without the credentials
