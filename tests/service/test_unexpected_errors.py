"""An error the service does not expect is answered 500 with a JSON ``error`` (as every other
answer of the API, so that a client reading JSON reads it) and logged once, with its
traceback."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")

from openlineage_subset.service import (
    EventSink,
    _app,
)
from tests.lineage.events import pipeline_history
from tests.service.helpers import asgi_call


class Fault(Exception):
    pass


def _fails(*args: Any, **kwargs: Any) -> Any:
    raise Fault("the query broke")


@pytest.mark.parametrize(
    ("name", "path"),
    [("impact", "/api/v1/impact?dataset=raw"), ("runs", "/api/v1/runs")],
)
def test_a_query_failing_unexpectedly_is_a_json_500_logged_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    name: str,
    path: str,
) -> None:
    sink = EventSink(tmp_path / "lineage.db")
    try:
        app = _app.make_app(tmp_path / "lineage.db", sink, max_body=1_000_000)
        monkeypatch.setattr(_app.Lineage, name, _fails)
        with caplog.at_level(logging.ERROR):
            status, kind, body = asgi_call(app, "GET", path)
    finally:
        sink.close()
    assert (status, kind) == (500, "application/json")
    message = json.loads(body)["error"]
    assert f"GET {path.partition('?')[0]}" in message and "the query broke" in message
    # The package's log records carry their traceback as scrubbed text (producer._secrets).
    logged = [record for record in caplog.records if record.exc_text]
    assert len(logged) == 1 and "Fault: the query broke" in str(logged[0].exc_text)


def test_a_post_failing_unexpectedly_is_a_json_500_logged_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sink = EventSink(tmp_path / "lineage.db")

    async def broken(body: bytes, source: str) -> Any:
        raise Fault("the writer broke")

    try:
        app = _app.make_app(tmp_path / "lineage.db", sink, max_body=1_000_000)
        monkeypatch.setattr(sink, "store", broken)
        event = json.dumps(pipeline_history(days=1)[0]).encode()
        with caplog.at_level(logging.ERROR):
            status, kind, body = asgi_call(app, "POST", "/api/v1/lineage", event)
    finally:
        sink.close()
    assert (status, kind) == (500, "application/json")
    assert "the writer broke" in json.loads(body)["error"]
    logged = [record for record in caplog.records if record.exc_text]
    assert len(logged) == 1 and "Fault: the writer broke" in str(logged[0].exc_text)
