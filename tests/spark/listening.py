"""The TCP sockets a process and its children (Spark's JVM) listen on, read from /proc."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

_LISTEN = "0A"
"""A socket's state in /proc/net/tcp when it listens."""


def descendants(pid: int) -> set[int]:
    """``pid`` and every process below it."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text(encoding="utf-8")
            except OSError:
                continue  # gone since listed
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found = {pid}
    while grown := {child for child, parent in parents.items() if parent in found} - found:
        found |= grown
    return found


def _socket_inodes(pids: set[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for descriptor in descriptors:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{descriptor}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    return inodes


def _address(hexadecimal: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address as /proc/net/tcp{,6} writes it: 32-bit words in the host's byte order."""
    raw = bytes.fromhex(hexadecimal)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    found = ipaddress.ip_address(words)
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket ``pid`` or a process below it listens on."""
    inodes = _socket_inodes(descendants(pid))
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text(encoding="utf-8").splitlines()[1:]:
            fields = line.split()
            if fields[3] == _LISTEN and fields[9] in inodes:
                address, port = fields[1].split(":")
                found.add((str(_address(address)), int(port, 16)))
    return found


def beyond_loopback(sockets: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """The sockets of ``sockets`` another machine could reach."""
    return {item for item in sockets if not ipaddress.ip_address(item[0]).is_loopback}
