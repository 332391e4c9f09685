"""Whether a host is this machine's loopback: the one check behind each rule that holds only on
loopback (a server without an API key, a Connect server's own Spark, the Host names a server
answers to)."""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address, or ``localhost`` (a name no resolver may move).

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost")
    (True, True, True)
    >>> is_loopback("0.0.0.0"), is_loopback("192.0.2.1"), is_loopback("example.com")
    (False, False, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
