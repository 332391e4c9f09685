"""An exception that ends the program marks the open captures failed before they are closed.

A script using ``enable()`` that dies of an uncaught exception still has its captures closed
by ``atexit``; without this their application runs would end COMPLETE. The first ``enable()``
chains ``sys.excepthook`` (once per process): Python calls it for the uncaught exception,
before ``atexit``; it records the exception on every open capture, then hands over to the hook
that was there before (which prints the traceback as usual). ``SystemExit`` never reaches
``sys.excepthook``; ``ol-subset run`` handles it (see ``_run``).
"""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import Protocol


class Failable(Protocol):
    """A capture whose application run ends FAIL when ``failure`` is set at close."""

    failure: BaseException | None


_open: dict[int, Failable] = {}
_lock = threading.Lock()
_installed = threading.Event()


def watch(capture: Failable) -> None:
    """Mark ``capture`` failed if an exception ends the program while it is open.

    Example (``handle`` from ``enable``, which calls this)::

        watch(handle)
        raise RuntimeError("no input")   # handle.failure is this error when atexit closes it
    """
    with _lock:
        _open[id(capture)] = capture
        if not _installed.is_set():
            sys.excepthook = _chained(sys.excepthook)
            _installed.set()


def forget(capture: Failable) -> None:
    """``capture`` is closed: an exception from now on is none of its business."""
    with _lock:
        _open.pop(id(capture), None)


def _chained(previous: _Hook) -> _Hook:
    def mark_failed(
        kind: type[BaseException], error: BaseException, trace: TracebackType | None
    ) -> None:
        with _lock:
            captures = list(_open.values())
        for capture in captures:
            if capture.failure is None:
                capture.failure = error
        previous(kind, error, trace)

    return mark_failed


class _Hook(Protocol):
    def __call__(
        self, kind: type[BaseException], error: BaseException, trace: TracebackType | None, /
    ) -> object: ...
