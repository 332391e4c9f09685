"""``lineage serve``'s connections are bounded: a request's head in size and time, idle time,
and how many are open, so that other clients are served throughout.

Hostile clients are raw sockets on 127.0.0.1, a bounded number of them for a few seconds; the
server's memory is read from /proc (its peak, VmHWM), its file descriptors limited as a
shared machine would (``ulimit -n``).
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from urllib.parse import urlsplit

import pytest

from openlineage_subset.cli import _serve
from openlineage_subset.service import _connections
from tests.service.conftest import Server
from tests.service.helpers import peak_memory

MIB = 1024 * 1024


def address(server: Server) -> tuple[str, int]:
    parts = urlsplit(server.url)
    return parts.hostname or "", parts.port or 0


def head(server: Server, *lines: bytes) -> bytes:
    host, port = address(server)
    return b"GET /api/v1/datasets HTTP/1.1\r\nHost: %s:%d\r\n" % (host.encode(), port) + b"".join(
        line + b"\r\n" for line in lines
    )


def answer_to(sock: socket.socket, seconds: float = 10.0) -> bytes:
    """What the server sends until it closes the connection (or ``seconds`` pass)."""
    sock.settimeout(seconds)
    parts = []
    with suppress(ConnectionResetError, TimeoutError):
        while part := sock.recv(65536):
            parts.append(part)
    return b"".join(parts)


def closed_by_server(sock: socket.socket, seconds: float = 20.0) -> bytes | None:
    """What the server still sends on ``sock`` until it closes it; None when it does not
    close it within ``seconds`` (far beyond the timeouts under test: never closed)."""
    sock.settimeout(seconds)
    parts = []
    try:
        while part := sock.recv(65536):
            parts.append(part)
    except ConnectionResetError:
        pass
    except TimeoutError:
        return None
    return b"".join(parts)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def endless_header(server: Server, most: int, statuses: list[int]) -> None:
    """One connection sending a header that never ends, ``most`` bytes at most."""
    with socket.create_connection(address(server), timeout=30) as sock:
        sock.sendall(head(server) + b"X-Endless: ")
        chunk = b"a" * 65536
        with suppress(ConnectionError):
            for _ in range(most // len(chunk)):
                sock.sendall(chunk)
        statuses.append(status_of(answer_to(sock)))


@pytest.mark.parametrize("keyed", [False, True])
def test_an_endless_header_is_431_before_the_key_and_memory_stays_flat(
    serve: Callable[..., Server], keyed: bool
) -> None:
    server = serve(*(["--api-key", "secret"] if keyed else []))
    assert server.get("/api/v1/datasets", {"Authorization": "Bearer secret"})[0] == 200
    before = peak_memory(server)
    statuses: list[int] = []
    senders = [
        threading.Thread(target=endless_header, args=(server, 64 * MIB, statuses)) for _ in range(6)
    ]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(timeout=120)
    assert statuses == [431] * 6, "refused before the key is looked at"
    grown = peak_memory(server) - before
    # Unbounded, each connection held what it sent: 6 x 64 MiB.
    assert grown < 16 * MIB, f"the server's peak memory grew by {grown / MIB:.0f} MiB"
    assert server.get("/api/v1/datasets", {"Authorization": "Bearer secret"})[0] == 200
    server.stop()
    _, err = server.process.communicate()
    refused = [line for line in err.splitlines() if line.startswith("refused a request")]
    assert len(refused) == 6 and all(
        line.endswith("the request line and headers are over 32768 bytes (431)") for line in refused
    ), err


def test_headers_are_bounded_in_count_and_size_and_a_large_one_within_is_served(
    serve: Callable[..., Server],
) -> None:
    server = serve("--max-header-bytes", "8192")
    cases = {
        "too many": head(server, *[b"X-%d: 1" % n for n in range(101)]),
        "a long line": b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n",
        "a long header": head(server, b"Cookie: " + b"c" * 9000),
    }
    for case, request in cases.items():
        with socket.create_connection(address(server), timeout=30) as sock:
            sock.sendall(request + b"\r\n")
            answer = answer_to(sock)
        assert status_of(answer) == 431, case
        error = json.loads(answer.partition(b"\r\n\r\n")[2])["error"]
        assert "over 100 headers" in error if case == "too many" else "over 8192 bytes" in error
    within = head(server, *[b"X-%d: 1" % n for n in range(90)], b"Cookie: " + b"c" * 6000)
    with socket.create_connection(address(server), timeout=30) as sock:
        sock.sendall(within + b"Connection: close\r\n\r\n")
        assert status_of(answer_to(sock)) == 200


class SlowClients:
    """Connections that send a request's head a line at a time, one line a round."""

    def __init__(self, server: Server, count: int) -> None:
        self.sockets: list[socket.socket] = []
        self.closed_after: list[float] = []
        self.statuses: list[int] = []
        for _ in range(count):
            sock = socket.create_connection(address(server), timeout=30)
            sock.sendall(head(server))
            sock.setblocking(False)
            self.sockets.append(sock)
        self.opened = time.monotonic()

    def round(self) -> None:
        """One more header line on each open connection; the closed ones noted."""
        for sock in list(self.sockets):
            try:  # what the server said first: a line sent after its close may reset it
                answer = sock.recv(65536)
            except BlockingIOError:
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                    continue  # still open, nothing said
                except OSError:
                    answer = b""
            except OSError:
                answer = b""
            self.closed_after.append(time.monotonic() - self.opened)
            self.statuses.append(status_of(answer))
            self.sockets.remove(sock)
            sock.close()

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


@contextmanager
def slow_clients(server: Server, count: int) -> Iterator[SlowClients]:
    found = SlowClients(server, count)
    try:
        yield found
    finally:
        found.close()


def asked(server: Server) -> float:
    """Seconds a plain client waits for the list of datasets (a new connection)."""
    start = time.monotonic()
    with urllib.request.urlopen(server.url + "/api/v1/datasets", timeout=10) as answer:
        assert answer.status == 200
        answer.read()
    return time.monotonic() - start


def test_slow_clients_beyond_the_file_limit_do_not_lock_others_out(
    serve: Callable[..., Server],
) -> None:
    # 256 files: at most 128 connections; 300 slow ones, a line every half second each
    server = serve("--header-timeout", "3", files=256)
    waits = []
    with slow_clients(server, 300) as slow:
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            slow.round()
            waits.append(asked(server))
            time.sleep(0.5)
        assert max(waits) < 2, f"a plain client waited up to {max(waits):.1f} s"
        assert len(slow.closed_after) >= 300 - 128, "the slow ones beyond the cap were closed"
        # Then each one left is closed by its header timeout: wait for that, not a clock, up to
        # the bound the assertion below holds the server to.
        while slow.sockets and time.monotonic() - slow.opened < 3 + 6 + 2:
            slow.round()
            time.sleep(0.5)  # a line every half second, as above
        assert slow.sockets == [], "every slow connection is closed after --header-timeout"
        assert slow.closed_after and max(slow.closed_after) < 3 + 6 + 2
    server.stop()
    _, err = server.process.communicate()
    closes = [line for line in err.splitlines() if line.startswith(("closed a", "refused a"))]
    assert len(closes) >= 300 and "Traceback" not in err and "accept" not in err, err[-2000:]


def test_a_slow_head_an_idle_connection_and_a_silent_one_are_closed_in_time(
    serve: Callable[..., Server],
) -> None:
    server = serve("--header-timeout", "2", "--keep-alive", "1")
    with slow_clients(server, 5) as slow:
        silent = socket.create_connection(address(server), timeout=30)
        idle = socket.create_connection(address(server), timeout=30)
        idle.sendall(head(server) + b"\r\n")
        idle.settimeout(10)
        assert status_of(idle.recv(65536)) == 200
        started = time.monotonic()
        while slow.sockets and time.monotonic() - started < 20:
            slow.round()
            time.sleep(0.2)
        # Not before the time given; how long after depends on the machine's load, so that
        # the server (not the client giving up) closed them is what the test holds to.
        assert slow.statuses == [408] * 5 and min(slow.closed_after) > 1.5
        # The idle one may still hold the end of its answer, never a second one.
        rest = closed_by_server(idle)
        assert rest is not None and b"HTTP/1.1 " not in rest, rest
        assert closed_by_server(silent) == b"", "closed without a word"
        idle.close()
        silent.close()
    server.stop()
    _, err = server.process.communicate()
    assert err.count("the request line and headers were not complete in 2 s (408)") == 5
    assert err.count("it sent no request in 2 s") == 1


def test_at_the_cap_with_every_connection_busy_a_new_one_is_503(
    serve: Callable[..., Server],
) -> None:
    server = serve("--max-connections", "2", "--header-timeout", "5")
    host, port = address(server)
    started = b"POST /api/v1/lineage HTTP/1.1\r\nHost: %s:%d\r\n" % (host.encode(), port)
    started += b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
    busy = [socket.create_connection((host, port), timeout=30) for _ in range(2)]
    for sock in busy:
        sock.sendall(started)  # a request under way: its body arrives
    time.sleep(0.5)
    with socket.create_connection((host, port), timeout=30) as third:
        answer = answer_to(third)
    assert status_of(answer) == 503 and b"2 connections are open" in answer
    for sock in busy:
        sock.close()
    assert server.get("/api/v1/datasets")[0] == 200, "served once one is free"


def test_the_command_line_defaults_are_the_service_defaults() -> None:
    assert (
        _serve.DEFAULT_HEADER_BYTES,
        _serve.DEFAULT_HEADER_TIMEOUT,
        _serve.DEFAULT_KEEP_ALIVE,
        _serve.DEFAULT_BODY_TIMEOUT,
        _serve.DEFAULT_CONNECTIONS,
    ) == (
        _connections.DEFAULT_HEADER_BYTES,
        _connections.DEFAULT_HEADER_TIMEOUT,
        _connections.DEFAULT_KEEP_ALIVE,
        _connections.DEFAULT_BODY_TIMEOUT,
        _connections.DEFAULT_CONNECTIONS,
    )


def _post_head(server: Server, *lines: bytes, length: int = 100_000) -> bytes:
    host, port = address(server)
    start = b"POST /api/v1/lineage HTTP/1.1\r\nHost: %s:%d\r\n" % (host.encode(), port)
    start += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % length
    return start + b"".join(line + b"\r\n" for line in lines) + b"\r\n"


def trickled(sock: socket.socket, every: float, seconds: float = 15.0) -> tuple[bytes, bool]:
    """A body sent a byte every ``every`` seconds until the server closes the connection:
    what it answered, and whether it closed it within ``seconds``."""
    sock.settimeout(every)
    answer = b""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            part = sock.recv(65536)
        except TimeoutError:
            with suppress(OSError):
                sock.sendall(b" ")
            continue
        except ConnectionResetError:
            return answer, True
        if not part:
            return answer, True
        answer += part
    return answer, False


@pytest.mark.parametrize(
    ("options", "lines", "status"),
    [
        (("--api-key-file", "KEYFILE"), (), 401),
        (("--max-body-bytes", "1000"), (), 413),
        ((), (b"Content-Encoding: br",), 415),
    ],
    ids=["401", "413", "415"],
)
def test_a_refused_post_closes_its_connection_though_its_body_is_unread(
    serve: Callable[..., Server],
    tmp_path_factory: pytest.TempPathFactory,
    options: tuple[str, ...],
    lines: tuple[bytes, ...],
    status: int,
) -> None:
    """A client refused before its body is read (no key, too large, an encoding not read)
    gets its answer and the connection closed: it cannot hold a slot by trickling the body
    it announced (a refused client held one for 75 s and more)."""
    if "KEYFILE" in options:
        key_file = tmp_path_factory.mktemp("key") / "key"
        key_file.write_text("s3cret-key-for-the-test\n")
        options = tuple(str(key_file) if item == "KEYFILE" else item for item in options)
    server = serve(*options)
    with socket.create_connection(address(server), timeout=30) as sock:
        sock.sendall(_post_head(server, *lines) + b"{")
        answer, closed = trickled(sock, every=1.0)
    assert status_of(answer) == status, answer
    assert closed, "the connection of a refused request stayed open"


def test_a_body_trickled_past_its_deadline_is_408_and_closed(
    serve: Callable[..., Server],
) -> None:
    """A body sent a byte at a time, never silent as long as ``--header-timeout``, is still
    bounded in all: ``--body-timeout`` after its headers it is answered 408 and closed."""
    server = serve("--header-timeout", "5", "--body-timeout", "2")
    with socket.create_connection(address(server), timeout=30) as sock:
        sock.sendall(_post_head(server) + b"{")
        answer, closed = trickled(sock, every=0.3)
    assert closed, "a trickled body was never closed"
    assert status_of(answer) == 408 and b"not complete in 2 s" in answer, answer
    assert server.get("/api/v1/datasets")[0] == 200, "the server serves others"
