"""Running the service: listen, say so, serve until SIGTERM or SIGINT, stop cleanly.

The socket is bound here (port 0: a free one), so that an address in use is one clear line,
and ``ready: http://HOST:PORT`` (the real port) is printed once uvicorn accepts connections. On
SIGTERM or SIGINT, uvicorn stops accepting, finishes the requests under way, and the writer
commits what it was handed and closes the database: nothing is left half-written.
"""

from __future__ import annotations

import signal
import socket
import sys
from typing import Any, TextIO

import uvicorn

from openlineage_subset.service._app import make_app
from openlineage_subset.service._sink import EventSink


class ServiceError(Exception):
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


def serve(
    db: str,
    sock: socket.socket,
    *,
    api_key: str | None,
    max_body: int,
    out: TextIO | None = None,
) -> None:
    """Serve the database ``db`` on the listening socket until SIGTERM or SIGINT."""
    sink = EventSink(db)  # raises LineageDatabaseError before anything listens
    stream = sys.stdout if out is None else out
    try:
        config = uvicorn.Config(
            make_app(db, sink, api_key=api_key, max_body=max_body),
            lifespan="off",
            access_log=False,
            log_level="warning",
            server_header=False,
        )
        server = _Server(config, lambda: print(f"ready: {url(sock)}", file=stream, flush=True))
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
        sink.close()
        sock.close()


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
