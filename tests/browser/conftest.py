"""A headless Chromium for the report tests, from Debian's ``chromium`` package.

The page is opened from a file: Chromium never listens on a port and reaches no network (the
flags turn off its own background connections). Playwright drives it through a pipe; the
browser it starts is closed at the end of the session, also when a test fails. Screenshots go
to ``$OL_SUBSET_ARTIFACTS/browser`` (nox's ``browser`` session sets it to ``artifacts``,
the folder CI keeps), else to a temporary folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.service.conftest import Server

CHROMIUM_FLAGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    given = os.environ.get("OL_SUBSET_CHROMIUM")
    return given or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed: run `nox -s browser`"
    )
    executable = chromium_path()
    if executable is None:
        missing = (
            "no Chromium: install Debian's package (apt-get install -y chromium) or set "
            "OL_SUBSET_CHROMIUM to a Chromium binary"
        )
        if os.environ.get("OL_SUBSET_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{missing}; CI requires it (OL_SUBSET_REQUIRE_BROWSER=1)")
        pytest.skip(missing)
    # Playwright gives each launch a new empty profile of its own, removed at close.
    with playwright_api.sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield launched
        finally:
            launched.close()


def artifact_folder(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``$OL_SUBSET_ARTIFACTS/NAME`` (made if missing), where CI keeps screenshots for people to
    look at; a temporary folder when the variable is not set."""
    given = os.environ.get("OL_SUBSET_ARTIFACTS")
    folder = Path(given) / name if given else tmp_path_factory.mktemp(name)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the report tests' screenshots are saved in."""
    return artifact_folder("browser", tmp_path_factory)


PLAN_JSON = re.compile(r'^\{\s*"backfill"')
"""What an answer's backfill plan as JSON starts with, among its blocks to copy (the plan as
text and the tasks to re-run are blocks too)."""


@contextlib.contextmanager
def serving(db: str, events: Iterable[dict[str, Any]]) -> Iterator[Server]:
    """``lineage serve`` on ``db`` holding ``events`` (each POSTed as a producer sends it),
    stopped by its process id at the end."""
    from tests.service.conftest import start  # needs the serve extra: imported when used

    started = start(db)
    try:
        for item in events:
            status, answer = started.request(
                "POST", "/api/v1/lineage", json.dumps(item).encode("utf-8")
            )
            assert status == 201, answer
        yield started
    finally:
        assert started.stop() == 0
