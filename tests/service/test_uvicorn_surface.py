"""The part of uvicorn the service's connection limits lean on is the part they were read against.

``service/_connections.py`` subclasses uvicorn's private httptools protocol: it feeds the parser
as uvicorn's ``data_received`` does, extends its callbacks and calls private methods. Each of
those is fingerprinted here as read in each uvicorn release the serve extra allows (0.55, and
0.54 which Python 3.10 gets). When a uvicorn release changes one, this
fails and names it: read the change against ``_connections.py``, then update the fingerprint,
``UVICORN_READ`` and uvicorn's bound in ``pyproject.toml`` together.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import operator
import re
from collections.abc import Callable
from typing import Any

import pytest
import uvicorn
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from openlineage_subset.service._connections import UVICORN_READ

READ_55 = {
    # What _BoundedProtocol overrides, relying on what uvicorn's own does.
    "__init__": "4f08999410347141",
    "connection_made": "6efb565ff3d36b91",
    "connection_lost": "c91a4c9bf2e29c55",
    "data_received": "010a7ae59a5d3b1a",
    "on_message_begin": "96d377fdc7c2baef",
    "on_header": "1e86ebb6cea0458c",
    "on_headers_complete": "1ea8589acfad92d8",
    "on_message_complete": "1fbad42dc31fc01f",
    "on_response_complete": "64e254f28e389e76",
    # What it calls.
    "_unset_keepalive_if_required": "00a6a4e47214e68e",
    "_should_upgrade": "8fcad1ab8e096739",
    "_unsupported_upgrade_warning": "55bbd2762b189d9a",
    "handle_websocket_upgrade": "d5da377bfc77e588",
    "send_400_response": "ae5a4a3782b646fd",
}
"""Each method's source in 0.55, fingerprinted (the first 16 hex digits of its SHA-256)."""
READ = {
    "0.55": READ_55,
    # 0.55 strips a header value's trailing blanks before storing it and feeds the upgraded
    # protocol after adding it: neither changes what _BoundedProtocol relies on.
    "0.54": {
        **READ_55,
        "on_header": "65d62c044f61fdbd",
        "handle_websocket_upgrade": "179c4f769386ab89",
    },
}
"""The fingerprints of each release read."""
RELEASE = ".".join(uvicorn.__version__.split(".")[:2])
"""The release installed here (major.minor)."""
FLOW_CONTROL = "126debcdaa894c83"
"""``FlowControl``, whose ``read_paused`` says the application is not reading a body."""


def _fingerprint(code: Callable[..., Any] | type) -> str:
    return hashlib.sha256(inspect.getsource(code).encode("utf-8")).hexdigest()[:16]


def _changed(protocol: type, flow_control: type, release: str = RELEASE) -> list[str]:
    """The names of what differs from what was read of ``release`` (a method gone counts as
    changed)."""
    changed = [
        name
        for name, fingerprint in READ[release].items()
        if not callable(getattr(protocol, name, None))
        or _fingerprint(getattr(protocol, name)) != fingerprint
    ]
    if _fingerprint(flow_control) != FLOW_CONTROL:
        changed.append("FlowControl")
    return changed


def test_what_the_connection_limits_use_of_uvicorn_is_as_read() -> None:
    assert RELEASE in READ, f"uvicorn {uvicorn.__version__} was never read: see this module"
    assert _changed(HttpToolsProtocol, FlowControl) == [], (
        "uvicorn's protocol changed where service/_connections.py leans on it: read the change, "
        "then update READ, UVICORN_READ and pyproject.toml's uvicorn bound"
    )


class _OtherFlowControl:
    """A flow control unlike uvicorn's (its source is read, so it is written out here)."""

    read_paused = False


@pytest.mark.parametrize("name", ["data_received", "_should_upgrade"])
def test_a_changed_or_missing_method_is_named(name: str) -> None:
    """The check itself: uvicorn's protocol with one method rewritten, or gone."""

    def rewritten(self: Any, *args: Any) -> None:  # pragma: no cover - never called
        return None

    changed = type("Changed", (HttpToolsProtocol,), {name: rewritten})
    assert _changed(changed, FlowControl) == [name]
    gone = type("Gone", (), {n: getattr(HttpToolsProtocol, n) for n in READ_55 if n != name})
    assert _changed(gone, FlowControl) == [name]
    assert _changed(HttpToolsProtocol, _OtherFlowControl) == ["FlowControl"]


COMPARE = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


def _number(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _allows(clauses: list[str], version: str) -> bool:
    """Whether every clause (``>=0.55``, ``<0.56``: the only kinds the bound uses) allows
    ``version``."""
    number = tuple(int(part) for part in version.split("."))
    for clause in clauses:
        found = re.fullmatch(r"(>=|>|<=|<)([0-9.]+)", clause.strip())
        assert found, f"a clause this test cannot read: {clause!r}"
        bound = tuple(int(part) for part in found[2].split("."))
        if not COMPARE[found[1]](number, bound):
            return False
    return True


def test_the_serve_extra_holds_uvicorn_to_the_release_read() -> None:
    """A newer uvicorn cannot be installed with the serve extra before it has been read; the
    bound is read off the installed project's metadata, which pyproject.toml made."""
    (requirement,) = [
        text
        for text in importlib.metadata.requires("openlineage-subset") or []
        if re.match(r"uvicorn\b", text) and "extra == 'serve'" in text
    ]
    clauses = requirement.split(";")[0].removeprefix("uvicorn").strip().split(",")
    assert set(READ) == set(UVICORN_READ)
    for release in UVICORN_READ:
        assert _allows(clauses, f"{release}.0") and _allows(clauses, f"{release}.99"), release
    major, lowest = (int(part) for part in min(UVICORN_READ, key=_number).split("."))
    _, highest = (int(part) for part in max(UVICORN_READ, key=_number).split("."))
    assert not _allows(clauses, f"{major}.{highest + 1}.0"), requirement
    assert not _allows(clauses, f"{major}.{lowest - 1}.99"), requirement
    assert RELEASE in UVICORN_READ, uvicorn.__version__
