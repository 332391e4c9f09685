"""What keeps ``lineage serve`` fast under load without weakening "2xx only after commit": its
connections send at once (no Nagle delay), and a WAL database commits without an fsync each
time (``synchronous = NORMAL``), which a killed process does not lose (test_serve_faults.py)."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import LineageStore
from openlineage_subset.service import _sink
from openlineage_subset.service._run import listen
from tests.service.conftest import run_async


def test_accepted_connections_send_without_waiting_for_an_acknowledgement() -> None:
    """Nagle's algorithm held each answer's body until the client acknowledged its headers:
    40 ms a request with a client's delayed acknowledgements."""
    listening = listen("127.0.0.1", 0)
    port = listening.getsockname()[1]

    async def accept_one() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Protocol(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Protocol, sock=listening)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                return await asyncio.wait_for(accepted, timeout=10)
            finally:
                writer.close()

    assert run_async(accept_one()) != 0


def _synchronous(db: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """The ``synchronous`` setting of the writer thread's connection to ``db``."""
    seen: list[int] = []
    real = _sink.LineageStore.open

    def spying(*args: Any, **kwargs: Any) -> LineageStore:
        store = real(*args, **kwargs)
        original = store.close

        def close() -> None:
            seen.append(store.connection.execute("PRAGMA synchronous").fetchone()[0])
            original()

        store.close = close  # type: ignore[method-assign]
        return store

    monkeypatch.setattr(_sink.LineageStore, "open", spying)
    _sink.EventSink(db).close()
    return seen[0]


def test_a_wal_database_commits_without_an_fsync_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _synchronous(tmp_path / "new.db", monkeypatch) == 1  # NORMAL


def test_a_database_without_wal_keeps_full_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``NORMAL`` without WAL could corrupt the file on a power loss."""
    db = tmp_path / "old.db"
    LineageStore.open(db, create=True).close()
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA journal_mode = DELETE")
    connection.close()
    assert _synchronous(db, monkeypatch) == 2  # FULL
