"""The service's HTTP connections, bounded: the size of a request's head, the time it may take,
idle time, and how many connections are open.

uvicorn's own HTTP protocol (``httptools``, the serve extra's) reads a request's line and headers
without a limit, keeps a connection that never completes them open for ever, and accepts
connections until the process runs out of file descriptors: one client sending an endless header
held hundreds of megabytes, and a few hundred sending a header line every few seconds locked
every other client out. :class:`ConnectionLimits` bounds each, in the protocol, before the
application (the Host check, the API key) sees anything:

- a request's line and headers over ``header_bytes`` bytes, or over ``header_count`` headers,
  are answered 431 and the connection closed, having held no more than the limit;
- a request whose line and headers are not complete ``header_timeout`` seconds after its first
  byte (or after the connection opened), or whose body stops arriving for as long, is answered
  408 (when it sent something) and closed;
- a request whose body is not complete ``body_timeout`` seconds after its headers, however it
  trickles in, is answered 408 (its answer not begun) and closed;
- a connection idle between requests is closed after ``keep_alive`` seconds (uvicorn's own
  ``timeout_keep_alive``);
- at most ``connections`` are open: one more closes the connection that has waited longest
  without a request under way (idle, or still sending its headers), so that a client with a
  request to make is served while slow ones wait their turn; when every connection has a
  request under way, the new one is answered 503.

Each refusal or close is one line of the log.

uvicorn has no public way to bound these: :class:`_BoundedProtocol` subclasses its httptools
protocol, feeds the parser as uvicorn's ``data_received`` does, and calls a few of its private
methods. The serve extra holds uvicorn to the minor releases this was read against
(:data:`UVICORN_READ`), and ``tests/service/test_uvicorn_surface.py`` fails when any of what is
used here differs from it.
"""

from __future__ import annotations

import json
import resource
from dataclasses import dataclass
from typing import Any, ClassVar

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from openlineage_subset.producer import scrubbed_logger

_LOG = scrubbed_logger(__name__)

UVICORN_READ = ("0.54", "0.55")
"""The uvicorn releases whose protocol :class:`_BoundedProtocol` was read against (0.55 needs
Python 3.11: Python 3.10 gets 0.54)."""
DEFAULT_CONNECTIONS = 1000
DEFAULT_HEADER_BYTES = 32 * 1024
DEFAULT_HEADER_COUNT = 100
DEFAULT_HEADER_TIMEOUT = 10
DEFAULT_KEEP_ALIVE = 5
DEFAULT_BODY_TIMEOUT = 120
_REASONS = {
    408: b"Request Timeout",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}


@dataclass(frozen=True)
class ConnectionLimits:
    """What the service's connections are bounded by (see the module's description)."""

    header_bytes: int = DEFAULT_HEADER_BYTES
    header_count: int = DEFAULT_HEADER_COUNT
    header_timeout: int = DEFAULT_HEADER_TIMEOUT
    """Seconds; also the longest silence while a request's body arrives."""
    keep_alive: int = DEFAULT_KEEP_ALIVE
    """Seconds an idle connection is kept between requests."""
    body_timeout: int = DEFAULT_BODY_TIMEOUT
    """Seconds a request's body may take in all, from the end of its headers."""
    connections: int = DEFAULT_CONNECTIONS


def connection_cap(asked: int) -> int:
    """``asked`` connections, but at most half the open-file limit (``ulimit -n``): the
    database, the query threads and the log need descriptors too, and a server out of them
    accepts no one.

    >>> connection_cap(10) <= 10
    True
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return asked
    return max(1, min(asked, soft // 2))


def bounded_protocol(limits: ConnectionLimits) -> type[HttpToolsProtocol]:
    """uvicorn's HTTP protocol (``http=`` of its ``Config``) with ``limits``."""

    class BoundedHttpProtocol(_BoundedProtocol):
        pass

    BoundedHttpProtocol.limits = limits
    return BoundedHttpProtocol


class _HeadRefused(Exception):
    """Raised in a parser callback to stop reading: the head broke a limit."""


class _BoundedProtocol(HttpToolsProtocol):
    limits: ClassVar[ConnectionLimits]

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self.head_bytes = 0
        """Bytes of the current request's line and headers read so far."""
        self.head_open = True
        """Whether the next bytes are a request's line and headers (not its body)."""
        self.header_count = 0
        self.refusal: tuple[int, str] | None = None
        self.waiting_since: float | None = self.loop.time()
        """Since when the connection has had no request under way (None: it has one)."""
        self.timer: Any = None
        self.body_deadline = 0.0
        """When the current request's body must be complete (once its headers are)."""
        self._arm()
        self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._unset_keepalive_if_required()
        while data and not self.transport.is_closing():
            if not self.head_open:  # a body: its silence and its whole time are bounded
                if self.loop.time() > self.body_deadline:
                    self._too_long()
                    return
                piece, data = data, b""
                self._arm()
            else:
                if self.timer is None:  # the first byte of a request after an idle time
                    self._arm()
                room = self.limits.header_bytes - self.head_bytes
                if room <= 0:
                    self._refuse(
                        431,
                        f"the request line and headers are over {self.limits.header_bytes} bytes",
                    )
                    return
                piece, data = data[:room], data[room:]
                self.head_bytes += len(piece)
            if not self._feed(piece):
                return

    def _feed(self, piece: bytes) -> bool:
        """Whether the parser took ``piece`` (as uvicorn's protocol feeds it)."""
        try:
            self.parser.feed_data(piece)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return False
        except httptools.HttpParserError:
            if self.refusal is not None:
                self._refuse(*self.refusal)
            else:
                message = "Invalid HTTP request received."
                self.logger.warning(message)
                self.send_400_response(message)
            return False
        return True

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.header_count = 0

    def on_header(self, name: bytes, value: bytes) -> None:
        self.header_count += 1
        if self.header_count > self.limits.header_count:
            self.refusal = (431, f"the request has over {self.limits.header_count} headers")
            raise _HeadRefused
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self.head_open = False
        self.waiting_since = None
        self.body_deadline = self.loop.time() + self.limits.body_timeout
        self._disarm()
        self._arm()  # the body's silence, if one follows
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self.head_open = True
        self.head_bytes = 0
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.head_open:
            self.waiting_since = self.loop.time()  # idle: uvicorn's keep-alive time runs

    def _arm(self) -> None:
        self._disarm()
        self.timer = self.loop.call_later(self.limits.header_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _too_slow(self) -> None:
        self.timer = None
        if self.transport.is_closing():
            return
        seconds = self.limits.header_timeout
        if not self.head_open:
            if self.flow.read_paused:  # the application is not reading it: not the client's
                self._arm()
                return
            self._close(f"its request's body stopped arriving for {seconds} s")
        elif self.head_bytes:
            self._refuse(408, f"the request line and headers were not complete in {seconds} s")
        else:
            self._close(f"it sent no request in {seconds} s")

    def _too_long(self) -> None:
        why = f"its request's body was not complete in {self.limits.body_timeout} s"
        if self.cycle is not None and self.cycle.response_started:
            self._close(why)  # answered already (a refusal that left the body unread)
        else:
            self._refuse(408, why)

    def _make_room(self) -> None:
        """At the cap, close the connection waiting longest without a request under way, or
        (none waiting) refuse this one."""
        open_now = [
            other
            for other in self.connections
            if isinstance(other, _BoundedProtocol) and not other.transport.is_closing()
        ]
        if len(open_now) <= self.limits.connections:
            return
        waiting = [
            other for other in open_now if other is not self and other.waiting_since is not None
        ]
        if waiting:
            oldest = min(waiting, key=lambda other: other.waiting_since or 0.0)
            oldest._close(f"{self.limits.connections} connections are open, a new one came")
        else:
            self._refuse(
                503,
                f"{self.limits.connections} connections are open, each with a request "
                "under way; try again",
            )

    def _close(self, why: str) -> None:
        _LOG.warning("closed a connection%s: %s", self._from(), why)
        self._disarm()
        self.transport.close()

    def _refuse(self, status: int, message: str) -> None:
        _LOG.warning("refused a request%s: %s (%d)", self._from(), message, status)
        self._disarm()
        content = json.dumps({"error": message}).encode("utf-8")
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (status, _REASONS[status], len(content), content)
        )
        self.transport.close()

    def _from(self) -> str:
        return f" from {self.client[0]}" if self.client else ""
