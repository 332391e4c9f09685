"""``validate``, ``lineage ingest`` and ``POST /api/v1/lineage`` read the same bytes by one strict
JSON reader (:mod:`openlineage_subset._json`): hostile bytes get the same verdict, in the same
words, from all three; bytes that are a usable event are taken by all three."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import ingest
from openlineage_subset.service import EventSink, _app
from tests.lineage.events import event
from tests.service.conftest import run_async

BOM = b"\xef\xbb\xbf"
EVENT = json.dumps(event(1, "START", 0, reads=[("/data/lake/sales", None)]))
LINE = EVENT.encode()
PRETTY = json.dumps(json.loads(EVENT), indent=2).encode()


def _with(extra: str) -> bytes:
    """The event on one line, with one more top-level member."""
    return (EVENT[:-1] + f', "x": {extra}}}').encode()


def _pretty_with(extra: str) -> bytes:
    """The event over several lines, with one more top-level member."""
    return PRETTY[:-2] + f',\n  "x": {extra}\n}}'.encode()


NOT_UTF8 = LINE[:20] + b"\xff" + LINE[21:]
# (the bytes, what every reader says of them: None when they are a usable event)
CASES: dict[str, tuple[bytes, str | None]] = {
    "an event": (LINE, None),
    "an event over lines": (PRETTY, None),
    "a byte order mark, then an event": (BOM + LINE, None),
    "a surrogate pair": (LINE.replace(b'"name": "job"', b'"name": "\\ud83d\\ude00job"'), None),
    "NaN": (_with("NaN"), "not usable JSON at $.x: NaN is not JSON (JSON has no NaN or Infinity)"),
    "-Infinity over lines": (
        _pretty_with("[1, -Infinity]"),
        "not usable JSON at $.x[1]: -Infinity is not JSON (JSON has no NaN or Infinity)",
    ),
    "a repeated key": (
        _with('{"a": 1, "a": 2}'),
        "not usable JSON at $.x: the key 'a' appears more than once in one object, and JSON "
        "readers disagree on which value counts",
    ),
    "a big integer": (
        _with("7" * 4301),
        "not usable JSON at $.x: an integer of 4301 digits; this version reads at most 4300 "
        "(Python's limit)",
    ),
    "a lone surrogate": (
        LINE.replace(b'"name": "job"', b'"name": "\\ud800job"'),
        "not usable JSON at $.job.name: a lone surrogate (a \\ud800-\\udfff escape without its "
        "pair): no UTF-8 text can hold it",
    ),
    "nesting past the limit": (
        _with("[" * 600 + "]" * 600),
        "not usable JSON at $.x" + "[0]" * 511 + ": nested too deeply: more than 512 levels of "
        "objects and arrays, the most this version reads; write long AND/OR chains as balanced "
        "trees (openlineage_subset.all_of / any_of)",
    ),
    "nesting past Python's stack": (
        _with("[" * 100_000 + "]" * 100_000),
        "not usable JSON: nested too deeply: more than 512 levels of objects and arrays, the "
        "most this version reads",
    ),
    "not UTF-8": (NOT_UTF8, "not UTF-8 text (invalid start byte at byte 20)"),
    "a byte order mark, then not UTF-8": (
        BOM + NOT_UTF8,
        "not UTF-8 text (invalid start byte at byte 23)",  # the mark counts
    ),
    "two byte order marks": (
        BOM + BOM + LINE,
        "not valid JSON: a byte order mark (U+FEFF) only starts an input",
    ),
    "not JSON": (
        b"{oops",
        "not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)",
    ),
    "not JSON on its third line": (
        PRETTY.replace(b'"eventType"', b"eventType"),
        "not valid JSON: Expecting property name enclosed in double quotes (line 2, column 3)",
    ),
    "a form feed": (  # no JSON whitespace: not a blank input
        b"\x0c",
        "not valid JSON: the text is cut short: it ends at line 1, column 1, inside its JSON value",
    ),
}


def _validated(path: Path, capsys: pytest.CaptureFixture[str]) -> str | None:
    main(["validate", "--format", "json", str(path)])
    (result,) = json.loads(capsys.readouterr().out)["results"]
    error: str | None = result["error"]
    return error


def _ingested(path: Path, db: Path) -> str | None:
    report = ingest([path], db)
    assert report.stored + report.invalid == 1, report.summary()
    return None if report.stored else report.problems[0].message


def _posted(body: bytes, db: Path) -> tuple[int, dict[str, Any]]:
    sink = EventSink(db)
    sent: list[dict[str, Any]] = []
    try:
        app = _app.make_app(db, sink, max_body=10_000_000)
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/api/v1/lineage",
            "headers": [],
            "client": ("127.0.0.1", 50000),
        }
        requested = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            return requested.pop(0) if requested else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        run_async(app(scope, receive, send))
    finally:
        sink.close()
    start, answer = sent
    return start["status"], json.loads(answer["body"])


@pytest.mark.parametrize("name", list(CASES))
def test_validate_ingest_and_the_service_give_one_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    data, expected = CASES[name]
    path = tmp_path / "event.json"  # one document, or JSON Lines: as its first line tells
    path.write_bytes(data)
    validated = _validated(path, capsys)
    ingested = _ingested(path, tmp_path / "ingested.db")
    status, answer = _posted(data, tmp_path / "posted.db")
    posted = answer.get("error")
    assert (validated, ingested, posted) == (expected, expected, expected)
    assert status == (201 if expected is None else 400)
    if expected is not None:
        assert answer["issues"] == [expected]


def test_an_invalid_posted_event_is_parsed_and_validated_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openlineage_subset.lineage.ingestion import _checker

    calls: list[str] = []

    def counted(name: str, kind: str) -> None:
        original = getattr(_checker, name)

        def counting(*args: Any, **kwargs: Any) -> Any:
            calls.append(kind)
            return original(*args, **kwargs)

        monkeypatch.setattr(_checker, name, counting)

    for name in ("parse_json", "read_json"):
        counted(name, "parse")
    for name in ("validate", "validate_within"):
        counted(name, "validate")
    broken = json.loads(EVENT)
    broken["run"]["runId"] = 7
    broken["job"]["name"] = "\U0001f600job"  # spelled with escapes: the strict reader reads it
    body = json.dumps(broken).encode()
    assert b"\\ud83d" in body
    status, answer = _posted(body, tmp_path / "lineage.db")
    assert status == 400
    assert answer["issues"] == ["$.run.runId: expected a string, got integer 7"]
    assert calls == ["parse", "validate"]
