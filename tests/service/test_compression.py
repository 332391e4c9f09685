"""Pages and JSON answers are sent gzip-compressed to a client that accepts it, byte for byte
the same once inflated and with the same headers (the Content-Security-Policy first); the
answers to posted events are never compressed."""

from __future__ import annotations

import gzip
import json
import urllib.request
from collections.abc import Callable, Mapping

from tests.lineage.events import LAKE, pipeline_history
from tests.service.conftest import Server
from tests.service.helpers import page_path, post_events


def _raw(
    server: Server, path: str, headers: Mapping[str, str], data: bytes | None = None
) -> tuple[int, Mapping[str, str], bytes]:
    """Status, headers and body as sent (urllib does not inflate)."""
    request = urllib.request.Request(server.url + path, data=data, headers=dict(headers))
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, answer.headers, answer.read()


def test_reads_are_compressed_for_a_client_that_accepts_gzip(
    serve: Callable[..., Server],
) -> None:
    server = serve()
    post_events(server, pipeline_history(20))
    for path in (
        page_path("/dataset", namespace="file", name=f"{LAKE}/raw"),
        "/api/v1/runs",
        "/static/ui.js",
    ):
        _, plain_headers, plain = _raw(server, path, {})
        status, headers, body = _raw(server, path, {"Accept-Encoding": "gzip"})
        assert status == 200, path
        assert plain_headers.get("Content-Encoding") is None, path
        assert headers["Content-Encoding"] == "gzip", path
        assert len(body) < len(plain) / 2, path
        assert gzip.decompress(body) == plain, path
        assert headers.get("Content-Security-Policy") == plain_headers.get(
            "Content-Security-Policy"
        ), path


def test_the_answer_to_a_posted_event_is_not_compressed(serve: Callable[..., Server]) -> None:
    server = serve()
    event = json.dumps(pipeline_history(1)[0]).encode()
    status, headers, body = _raw(
        server,
        "/api/v1/lineage",
        {"Accept-Encoding": "gzip", "Content-Type": "application/json"},
        data=event,
    )
    assert status == 201
    assert headers.get("Content-Encoding") is None
    assert json.loads(body)  # plain JSON, readable as is
