"""Who may ask the service at all: a known ``Host``, no other site's ``Origin``, JSON posted.

A browser lets any page it shows send requests to the service: a page of another site can post
(``fetch(url, {mode: "no-cors", body})`` takes any body and sends it as ``text/plain``), and
one whose name is made to resolve to 127.0.0.1 (DNS rebinding) can also read the answers. So,
before the API key is checked or anything is read, every request is refused that

- names a ``Host`` the server does not answer to (400): by default its address and, on
  loopback, ``localhost``, ``127.0.0.1`` and ``[::1]``, each with its port; on a wildcard
  address (``0.0.0.0``, ``::``) any IP address with its port and the machine's own names;
  ``--allowed-host NAME`` (any port, or ``NAME:PORT``) for a name behind a proxy;
- comes from a page of another origin (403): an ``Origin`` that is not one of those hosts
  (``null`` included; a request without ``Origin`` comes from no page, or from the server's own);
- posts to the API what is not JSON (415): a ``Content-Type`` other than ``application/json``
  (parameters such as ``charset`` allowed), which no page can send without the server's
  consent. openlineage-python and openlineage-java (Spark) send ``application/json``, with
  ``Content-Encoding: gzip`` when compressing.

Each refusal is one line of the log (values shown as escapes where not printable) and a JSON
``error``.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from openlineage_subset import printable
from openlineage_subset.producer import is_loopback, scrubbed_logger

_LOG = scrubbed_logger(__name__)
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_SHOWN = 200
"""Characters of a refused header value a log line or an answer shows at most."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_JSON_TYPE = b"application/json"


@dataclass(frozen=True)
class AllowedHosts:
    """The ``Host`` values (and ``Origin`` hosts) the server answers to.

    >>> hosts = AllowedHosts.serving(["127.0.0.1"], 5000, ["lineage.example.com"])
    >>> [hosts.allows(h) for h in ("localhost:5000", "[::1]:5000", "localhost:5001")]
    [True, True, False]
    >>> hosts.allows("lineage.example.com"), hosts.allows("attacker.example:5000")
    (True, False)
    """

    exact: frozenset[str]
    """``host:port`` values, lower case (a host without a port: port 80 only)."""
    any_port: frozenset[str]
    """Host names taken with any port or none (``--allowed-host NAME``)."""
    port: int
    ip_literals: bool = False
    """Any IP address with :attr:`port` (a wildcard address: the machine's addresses)."""

    @classmethod
    def serving(
        cls, listening: Iterable[str], port: int, allowed: Iterable[str] = ()
    ) -> AllowedHosts:
        """The hosts of a server listening on ``listening`` (the address, and the name it was
        given) and ``port``, and the names ``allowed`` (``NAME`` or ``NAME:PORT``)."""
        names: set[str] = set()
        ip_literals = False
        for host in listening:
            names.add(_bracketed(host))
            try:
                address = ipaddress.ip_address(host)
            except ValueError:
                address = None
            if is_loopback(host):
                names.update(_LOOPBACK_NAMES)
            if address is not None and address.is_unspecified:
                ip_literals = True
                names.update({socket.gethostname(), socket.getfqdn(), *_LOOPBACK_NAMES})
        exact = {f"{name.lower()}:{port}" for name in names}
        if port == 80:
            exact.update(name.lower() for name in names)
        any_port = set()
        for given in allowed:
            if _port_of(given) is None:
                any_port.add(given.lower())
            else:
                exact.add(given.lower())
        return cls(frozenset(exact), frozenset(any_port), port, ip_literals)

    def allows(self, host: str) -> bool:
        """Whether ``host`` (a ``Host`` header's value: ``NAME[:PORT]``) is one of these."""
        value = host.lower()
        if value in self.exact:
            return True
        name, port = _split(value)
        if name in self.any_port:
            return True
        if self.ip_literals and port == self.port:
            try:
                ipaddress.ip_address(name.strip("[]"))
            except ValueError:
                return False
            return True
        return False

    def allows_origin(self, origin: str) -> bool:
        """Whether ``origin`` (an ``Origin`` header's value) is a page of one of these hosts."""
        try:
            parts = urlsplit(origin)
            port = parts.port
        except ValueError:
            return False
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path:
            return False
        host = _bracketed(parts.hostname)
        if self.allows(f"{host}:{port or _DEFAULT_PORTS[parts.scheme]}"):
            return True
        return port is None and self.allows(host)


class RequestGuard:
    """Refuses, before ``app`` sees it, a request with a ``Host`` not in ``hosts``, an
    ``Origin`` of another site, or a POST to the API that is not JSON."""

    def __init__(self, app: ASGIApp, hosts: AllowedHosts) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message = refusal
        client = scope.get("client")
        source = f" from {client[0]}" if client else ""
        _LOG.warning(
            "refused %s %s%s: %s (%d)",
            scope["method"],
            printable(scope["path"][:_SHOWN]),
            source,
            message,
            status,
        )
        content = json.dumps({"error": message}).encode("utf-8")
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-length", str(len(content)).encode()),
                    (b"content-type", b"application/json"),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": content})

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        hosts: list[bytes] = []
        origin = kind = None
        for name, value in scope["headers"]:
            if name == b"host":
                hosts.append(value)
            elif name == b"origin":
                origin = value
            elif name == b"content-type":
                kind = value
        if len(hosts) != 1 or not self.hosts.allows(hosts[0].decode("latin-1")):
            given = f"Host {_shown(hosts[0])}" if len(hosts) == 1 else f"{len(hosts)} Host headers"
            return 400, (
                f"{given} is not a name this server answers to; a name behind a proxy needs "
                "--allowed-host NAME"
            )
        if origin is not None and not self.hosts.allows_origin(origin.decode("latin-1")):
            return 403, f"a page of another origin ({_shown(origin)}) may not use this server"
        if (
            scope["method"] == "POST"
            and scope["path"].startswith("/api/")
            and (kind is None or kind.partition(b";")[0].strip().lower() != _JSON_TYPE)
        ):
            given = "no Content-Type" if kind is None else f"Content-Type {_shown(kind)}"
            return 415, f"{given}: the API takes application/json (send that Content-Type)"
        return None


def _shown(value: bytes) -> str:
    """A header's value in a message: as UTF-8, quoted, escapes for what does not print
    (``repr`` writes them as :func:`~openlineage_subset._printable.printable` does), cut."""
    text = value[:_SHOWN].decode("utf-8", "backslashreplace")
    return repr(text) + ("..." if len(value) > _SHOWN else "")


def _bracketed(host: str) -> str:
    """An IPv6 address as a ``Host`` header writes it (``[::1]``), any other host as is."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _split(host: str) -> tuple[str, int | None]:
    """``NAME[:PORT]`` (``[V6]:PORT`` too) as its name and port (None: none, or not a port)."""
    port = _port_of(host)
    return (host if port is None else host.rpartition(":")[0]), port


def _port_of(host: str) -> int | None:
    name, colon, digits = host.rpartition(":")
    if not colon or (":" in name and not name.endswith("]")):
        return None  # no port, or a bare IPv6 address
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 5):
        return None
    return int(digits)
