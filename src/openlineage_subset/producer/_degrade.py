"""Saying once that a dataset lost its precision or its place in an event, and why.

Lineage degrades one dataset at a time: a dataset whose condition cannot be worked out is
reported whole (no subset facet, which is sound), and one that cannot even be named is left out.
Neither may happen silently, and neither may flood the log when a job repeats the same read
thousands of times: each (dataset, reason) is logged once per process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from openlineage_subset.producer._secrets import scrubbed_logger

log = scrubbed_logger("openlineage_subset.producer")

Report = Callable[[str, str], None]
"""``report(dataset, what happened)``: how a pure function tells its caller it degraded."""

_SAID: set[tuple[str, str]] = set()
_LOCK = threading.Lock()


def warn_once(dataset: str, what: str) -> None:
    """Log a warning for this dataset and reason, the first time only.

    >>> warn_once("file:/lake/events", "read without a subset facet: example")
    """
    key = (dataset, what)
    with _LOCK:
        if key in _SAID:
            return
        _SAID.add(key)
    log.warning("lineage of %s degraded: %s", dataset, what)
