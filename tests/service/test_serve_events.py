"""POST /api/v1/lineage: events from openlineage-python's HttpTransport stored as ingest stores
them, answered once committed; invalid, oversized and unauthorised requests refused."""

from __future__ import annotations

import gzip
import json
import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import ingest
from tests.lineage.events import day, pipeline_history, run, write_events
from tests.service.conftest import Server
from tests.service.helpers import peak_memory

http = pytest.importorskip("openlineage.client.transport.http", reason="openlineage-python")
requests = pytest.importorskip("requests", reason="openlineage-python's HTTP client")

EVENTS = [
    *run(1, 0, 1, writes=[("raw/sales", day("2024-10-15"))]),
    *run(2, 2, 3, reads=[("raw/sales", day("2024-10-15"))], writes=[("daily", day("2024-10-15"))]),
]


def transport(server: Server, **config: Any) -> Any:
    return http.HttpTransport(http.HttpConfig.from_dict({"url": server.url, **config}))


def zip_bomb(size: int) -> bytes:
    """One gzip member of ``size`` zero bytes, made a megabyte at a time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1024 * 1024)
    parts = [packer.compress(zeros) for _ in range(size // len(zeros))]
    return b"".join([*parts, packer.flush()])


def stored(db: str) -> tuple[int, int]:
    """(events, runs) the database holds."""
    with sqlite3.connect(db) as connection:
        events = connection.execute("SELECT count(*) FROM events").fetchone()[0]
        runs = connection.execute("SELECT count(*) FROM runs").fetchone()[0]
    connection.close()
    return events, runs


def test_http_transport_events_are_stored_once_and_answered_after_commit(
    serve: Callable[..., Server],
) -> None:
    server = serve()
    sender = transport(server)
    for event in EVENTS:
        assert sender.emit(event).status_code == 201
        # Answered: committed, so another connection sees it at once.
        assert stored(server.db)[0] == EVENTS.index(event) + 1
    for event in EVENTS:  # the same events again: 2xx, nothing stored twice
        answer = sender.emit(event)
        assert answer.status_code == 200
        assert answer.json()["outcome"] == "duplicate"
    assert stored(server.db) == (4, 2)


def test_gzip_bodies_are_read(serve: Callable[..., Server]) -> None:
    server = serve()
    sender = transport(server, compression="gzip")
    for event in EVENTS[:3]:
        assert sender.emit(event).status_code == 201
    # Pretty-printed, after a byte order mark, as ingest reads a .json file.
    body = b"\xef\xbb\xbf" + json.dumps(EVENTS[3], indent=2).encode()
    assert server.request("POST", "/api/v1/lineage", body)[0] == 201
    assert stored(server.db) == (4, 2)


def test_the_server_stores_what_ingest_stores(serve: Callable[..., Server], tmp_path: Path) -> None:
    events = pipeline_history(days=3)
    server = serve()
    sender = transport(server, compression="gzip")
    for event in events:
        sender.emit(event)
    reference = str(tmp_path / "ingested.db")
    report = ingest([write_events(tmp_path / "events.jsonl", events)], reference)
    assert report.stored == len(events)

    def tables(db: str) -> dict[str, list[Any]]:
        with sqlite3.connect(db) as connection:
            found = {
                table: sorted(connection.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
                for table in ("runs", "datasets", "accesses", "partitions", "access_partitions")
            }
            found["digests"] = sorted(connection.execute("SELECT digest FROM events").fetchall())
        connection.close()
        return found

    assert tables(server.db) == tables(reference)


def test_an_invalid_event_is_400_with_its_issues_and_stores_nothing(
    serve: Callable[..., Server],
) -> None:
    server = serve()
    broken = {**EVENTS[0], "eventTime": "yesterday"}
    status, answer = server.request("POST", "/api/v1/lineage", json.dumps(broken).encode())
    assert status == 400
    assert answer["outcome"] == "invalid"
    assert answer["issues"] == [answer["error"]]  # the check lineage adds to the schema's
    assert "$.eventTime: 'yesterday' is not an ISO-8601 time" in answer["error"]
    twice = {key: value for key, value in EVENTS[0].items() if key != "producer"}
    twice["run"] = {}  # two issues: ingest names the first, the answer lists both
    status, answer = server.request("POST", "/api/v1/lineage", json.dumps(twice).encode())
    assert status == 400 and "(and 1 more)" in answer["error"]
    assert answer["issues"] == [
        "$: missing required property 'producer' (as RunEvent)",
        "$.run: missing required property 'runId'",
    ]
    status, answer = server.request("POST", "/api/v1/lineage", b'{"run": {')
    assert status == 400 and "not valid JSON" in answer["issues"][0]
    status, answer = server.request("POST", "/api/v1/lineage", b"\xef\xbb\xbf  ")
    assert status == 400 and "empty" in answer["error"]
    with pytest.raises(requests.HTTPError, match="400"):
        transport(server).emit(broken)  # the transport sees the refusal
    assert stored(server.db) == (0, 0)


def test_a_body_over_the_limit_is_413_before_and_after_decompression(
    serve: Callable[..., Server],
) -> None:
    server = serve("--max-body-bytes", "4096")
    small = json.dumps(EVENTS[0]).encode()
    assert len(small) < 4096
    assert server.request("POST", "/api/v1/lineage", small)[0] == 201
    padded = {**EVENTS[1], "run": {**EVENTS[1]["run"], "facets": {}}, "padding": "x" * 5000}
    status, answer = server.request("POST", "/api/v1/lineage", json.dumps(padded).encode())
    assert status == 413 and "4096" in answer["error"]
    # A zip bomb: 50 MB of spaces in about 50 KB of gzip, well under the limit compressed...
    bomb = gzip.compress(small + b" " * 50_000_000, compresslevel=9)
    assert len(bomb) < 4096 * 20
    server_big = serve("--max-body-bytes", str(len(bomb) + 1), db=server.db + "2")
    status, answer = server_big.request(
        "POST", "/api/v1/lineage", bomb, {"Content-Encoding": "gzip"}
    )
    assert status == 413 and "decompresses" in answer["error"]
    # ...while the same event gzipped, under the limit, is read.
    status, _ = server_big.request(
        "POST", "/api/v1/lineage", gzip.compress(small), {"Content-Encoding": "gzip"}
    )
    assert status == 201
    status, answer = server.request(
        "POST", "/api/v1/lineage", b"not gzip", {"Content-Encoding": "gzip"}
    )
    assert status == 400 and "gzip" in answer["error"]
    assert stored(server.db) == (1, 1)


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc (Linux)")
def test_a_zip_bomb_is_never_inflated_in_memory(serve: Callable[..., Server]) -> None:
    bomb = zip_bomb(768 * 1024 * 1024)  # 768 MB of zeros in under a megabyte
    assert len(bomb) < 1024 * 1024
    server = serve("--max-body-bytes", str(1024 * 1024))
    before = peak_memory(server)
    status, answer = server.request("POST", "/api/v1/lineage", bomb, {"Content-Encoding": "gzip"})
    assert status == 413 and "decompresses" in answer["error"]
    grown = peak_memory(server) - before
    assert grown < 64 * 1024 * 1024, f"the server's peak memory grew by {grown} bytes"


def test_with_an_api_key_every_request_needs_it(serve: Callable[..., Server]) -> None:
    server = serve("--api-key", "s3cret-key")
    body = json.dumps(EVENTS[0]).encode()
    assert server.request("POST", "/api/v1/lineage", body)[0] == 401
    wrong = {"Authorization": "Bearer s3cret-kez"}
    assert server.request("POST", "/api/v1/lineage", body, wrong)[0] == 401
    assert server.get("/api/v1/datasets")[0] == 401
    assert stored(server.db) == (0, 0)
    sender = transport(server, auth={"type": "api_key", "apiKey": "s3cret-key"})
    assert sender.emit(EVENTS[0]).status_code == 201
    status, answer = server.get("/api/v1/datasets", {"Authorization": "Bearer s3cret-key"})
    assert status == 200 and len(answer["datasets"]) == 1


def test_the_api_key_comes_from_a_file_or_the_environment(
    serve: Callable[..., Server], tmp_path: Path
) -> None:
    from tests.service.conftest import environment

    key_file = tmp_path / "key"
    key_file.write_text("from-a-file\n", encoding="utf-8")
    server = serve("--api-key-file", str(key_file))
    assert server.get("/api/v1/datasets")[0] == 401
    assert server.get("/api/v1/datasets", {"Authorization": "Bearer from-a-file"})[0] == 200
    server = serve(db=str(tmp_path / "other.db"), env=environment(OL_SUBSET_API_KEY="from-env"))
    assert server.get("/api/v1/datasets")[0] == 401
    assert server.get("/api/v1/datasets", {"Authorization": "Bearer from-env"})[0] == 200


def test_dataset_and_job_events_are_acknowledged_not_stored(serve: Callable[..., Server]) -> None:
    server = serve()
    job_event = {
        "eventTime": EVENTS[0]["eventTime"],
        "producer": EVENTS[0]["producer"],
        "schemaURL": EVENTS[0]["schemaURL"].replace("RunEvent", "JobEvent"),
        "job": {"namespace": "tests", "name": "job1"},
    }
    status, answer = server.request("POST", "/api/v1/lineage", json.dumps(job_event).encode())
    assert status == 200 and answer["outcome"] == "skipped"
    assert stored(server.db) == (0, 0)


def test_a_write_the_database_refuses_is_503_and_the_next_one_is_stored(
    serve: Callable[..., Server],
) -> None:
    server = serve()
    assert server.request("POST", "/api/v1/lineage", json.dumps(EVENTS[0]).encode())[0] == 201
    blocker = sqlite3.connect(server.db, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another process holding the write lock too long
    try:
        status, answer = server.request("POST", "/api/v1/lineage", json.dumps(EVENTS[1]).encode())
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert status == 503 and answer["outcome"] == "failed"
    assert "locked" in answer["error"]
    assert stored(server.db) == (1, 1)
    for event in EVENTS[1:]:  # sent again (as a producer's retry would): stored
        assert server.request("POST", "/api/v1/lineage", json.dumps(event).encode())[0] == 201
    assert stored(server.db) == (4, 2)
