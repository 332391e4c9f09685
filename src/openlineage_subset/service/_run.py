"""Running the service: listen, say so, serve until SIGTERM or SIGINT, stop cleanly.

The socket is bound here (port 0: a free one), so that an address in use is one clear line,
and ``ready: http://HOST:PORT`` (the real port) is printed once uvicorn accepts connections. On
SIGTERM or SIGINT, uvicorn stops accepting, finishes the requests under way, and the writer
commits what it was handed and closes the database: nothing is left half-written.

uvicorn serves with the bounded protocol of :mod:`._connections` (heads, time, connections),
without WebSockets, and every request passes :mod:`._guard` (Host, Origin, JSON) first.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from typing import Any, TextIO

import uvicorn

from openlineage_subset import OpenLineageSubsetError
from openlineage_subset.lineage import LineageDatabaseError, prune
from openlineage_subset.service._app import make_app
from openlineage_subset.service._connections import (
    ConnectionLimits,
    bounded_protocol,
    connection_cap,
)
from openlineage_subset.service._guard import AllowedHosts, RequestGuard
from openlineage_subset.service._sink import EventSink

DEFAULT_LIMITS = ConnectionLimits()


class ServiceError(OpenLineageSubsetError):
    """The service cannot start: an address it cannot listen on."""


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening; raises :class:`ServiceError`."""
    try:
        family, kind, protocol, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        raise ServiceError(f"cannot listen on {host!r}: {error.strerror}") from None
    # The protocol named (TCP), not left 0: asyncio turns Nagle's algorithm off only on
    # connections whose socket says TCP, and with it on, each answer's body waited for the
    # client's delayed acknowledgement of its headers (40 ms a request).
    sock = socket.socket(family, kind, protocol)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        sock.close()
        raise ServiceError(
            f"cannot listen on {host} port {port}: {error.strerror or error}; "
            "choose another --port or --host"
        ) from None
    sock.setblocking(False)
    return sock


def url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def serve(  # noqa: PLR0913  (keyword-only: one per option of the serve command)
    db: str,
    sock: socket.socket,
    *,
    api_key: str | None,
    max_body: int,
    host: str | None = None,
    allowed_hosts: Sequence[str] = (),
    limits: ConnectionLimits = DEFAULT_LIMITS,
    out: TextIO | None = None,
    retain_days: int | None = None,
    max_whole: int | None = None,
) -> None:
    """Serve the database ``db`` on the listening socket until SIGTERM or SIGINT.

    ``host``: the name it was asked to listen on (else the socket's address), which requests
    may name, as the names ``allowed_hosts`` (see :class:`~._guard.AllowedHosts`).
    ``retain_days``: prune the runs that ended more than that many days ago (but the last
    writers of partitions) once ready, then every hour, without VACUUM (see
    :func:`~openlineage_subset.lineage.prune`), a line on ``out`` each time. ``max_whole``:
    the most of a dataset a question about the whole of it may start from (see
    :func:`~._app.make_app`)."""
    sink = EventSink(db)  # raises LineageDatabaseError before anything listens
    stream = sys.stdout if out is None else out
    stop = threading.Event()
    address, port = sock.getsockname()[:2]
    hosts = AllowedHosts.serving([address, *([host] if host else [])], port, allowed_hosts)
    limits = dataclasses.replace(limits, connections=connection_cap(limits.connections))
    try:
        config = uvicorn.Config(
            RequestGuard(
                make_app(db, sink, api_key=api_key, max_body=max_body, max_whole=max_whole), hosts
            ),
            http=bounded_protocol(limits),
            ws="none",
            timeout_keep_alive=limits.keep_alive,
            lifespan="off",
            access_log=False,
            log_level="warning",
            server_header=False,
        )

        def ready() -> None:
            print(f"ready: {url(sock)}", file=stream, flush=True)
            if retain_days is not None:
                keeping = (db, retain_days, stream, stop)
                threading.Thread(target=_retention, args=keeping, daemon=True).start()

        server = _Server(config, ready)
        # uvicorn raises the signal again once stopped; these handlers take it then, so that the
        # command ends with status 0 (it handles the signal itself while serving).
        previous = {
            number: signal.signal(number, _stopped) for number in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            server.run(sockets=[sock])
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
    finally:
        stop.set()
        sink.close()
        sock.close()


RETENTION_EVERY = 3600.0
"""Seconds between two prunes of a service with ``retain_days``."""


def _retention(db: str, days: int, stream: TextIO, stop: threading.Event) -> None:
    """Prune what ended more than ``days`` days ago, now and every :data:`RETENTION_EVERY`
    seconds until ``stop``; a line each time (an error is said, and tried again next time)."""
    while not stop.is_set():
        before = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(days=days)
        try:
            said = prune(db, before, vacuum=False).summary()
        except LineageDatabaseError as error:
            said = f"{error}; tried again in {RETENTION_EVERY:g} s"
        print(f"retention ({days} days): {said}", file=stream, flush=True)
        stop.wait(RETENTION_EVERY)


def _stopped(number: int, frame: Any) -> None:
    """The signal uvicorn raises again after a clean stop: nothing more to do."""


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, ready: Any) -> None:
        super().__init__(config)
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if not self.should_exit:
            self.ready()
