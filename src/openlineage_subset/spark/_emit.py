"""Sending events: validated strictly, delivered by openlineage-python, never lost.

Events go through a queue to one background thread, so delivery (an HTTP endpoint, a file)
never runs on Spark's listener thread. Each event is validated with the strict validator
first. An invalid event, or one the transport fails to deliver, is appended to a quarantine
file (JSON Lines, with the reason) and logged once per kind of problem: nothing is dropped.

The transport and its settings come from openlineage-python's configuration (``openlineage.yml``,
``OPENLINEAGE_URL``, ``OPENLINEAGE__TRANSPORT__...``, ``OPENLINEAGE_CONFIG``). With none of
those, events are appended as JSON Lines to a file (``openlineage-events.jsonl`` unless set).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
from collections import Counter
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from openlineage_subset._validate import validate

log = logging.getLogger("openlineage_subset.spark")

DEFAULT_OUTPUT = "openlineage-events.jsonl"
DEFAULT_QUARANTINE = "openlineage-quarantine.jsonl"
_STOP = object()


class Transport(Protocol):
    """What the emitter needs of an openlineage-python transport."""

    def emit(self, event: Any) -> Any: ...


def configured_in_environment() -> bool:
    """Whether openlineage-python finds a transport configuration of the user's.

    The places openlineage-python documents: ``OPENLINEAGE_DISABLED``, ``OPENLINEAGE_URL``,
    ``OPENLINEAGE__TRANSPORT__*`` variables, ``OPENLINEAGE_CONFIG``, and ``openlineage.yml`` in
    the working directory or ``~/.openlineage``.
    """
    if any(
        os.environ.get(name)
        for name in ("OPENLINEAGE_DISABLED", "OPENLINEAGE_URL", "OPENLINEAGE_CONFIG")
    ):
        return True
    if any(name.startswith("OPENLINEAGE__TRANSPORT") for name in os.environ):
        return True
    candidates = (Path.cwd() / "openlineage.yml", Path.home() / ".openlineage" / "openlineage.yml")
    return any(path.is_file() for path in candidates)


def resolve_transport(output: str | os.PathLike[str] | None) -> Any:
    """The user's configured transport, else JSON Lines appended to ``output``."""
    from openlineage.client import OpenLineageClient  # noqa: PLC0415  (the spark extra)
    from openlineage.client.transport.file import FileConfig, FileTransport  # noqa: PLC0415

    if configured_in_environment():
        return OpenLineageClient().transport
    path = Path(output or os.environ.get("OL_SUBSET_OUTPUT") or DEFAULT_OUTPUT)
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileTransport(FileConfig(log_file_path=str(path), append=True))


class Emitter:
    """Validates and delivers events on a background thread; quarantines failures."""

    def __init__(self, transport: Transport, quarantine: str | os.PathLike[str]) -> None:
        self.transport = transport
        self.quarantine_path = Path(quarantine)
        self.counts: Counter[str] = Counter()
        self._logged: set[str] = set()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="ol-subset-emitter", daemon=True)
        self._thread.start()

    def submit(self, events: list[dict[str, Any]]) -> None:
        """Queue events for validation and delivery, in order."""
        for event in events:
            self._queue.put(event)

    def flush(self) -> None:
        """Wait until every queued event is delivered or quarantined."""
        self._queue.join()

    def close(self, timeout: float | None = None) -> bool:
        """Deliver what is queued, then stop; False if ``timeout`` ran out first."""
        self._queue.put(_STOP)
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            try:
                if event is _STOP:
                    return
                self._deliver(event)
            except Exception as error:  # never lose the thread: count, keep the event
                self._quarantine(event, "internal error", error=repr(error))
            finally:
                self._queue.task_done()

    def _deliver(self, event: dict[str, Any]) -> None:
        issues = validate(event, strict=True)
        if issues:
            self._quarantine(
                event, "invalid", issues=[{"path": i.path, "message": i.message} for i in issues]
            )
            return
        try:
            self.transport.emit(_serializable(event))
        except Exception as error:
            self._quarantine(event, "undelivered", error=f"{type(error).__name__}: {error}")
            return
        self.counts["emitted"] += 1

    def _quarantine(self, event: dict[str, Any], reason: str, **details: Any) -> None:
        self.counts[f"quarantined ({reason})"] += 1
        if reason not in self._logged:
            self._logged.add(reason)
            log.error(
                "OpenLineage event %s (%s run %s): kept in %s; later ones like it are counted",
                reason,
                event.get("eventType"),
                event.get("run", {}).get("runId"),
                self.quarantine_path,
            )
        record = {"reason": reason, **details, "event": event}
        self.quarantine_path.parent.mkdir(parents=True, exist_ok=True)
        with self.quarantine_path.open("a", encoding="utf-8") as quarantine:
            quarantine.write(json.dumps(record) + "\n")


def _serializable(event: dict[str, Any]) -> dict[str, Any]:
    """The event for openlineage-python's transports, with its JSON nulls intact.

    Their serializer drops every None, which would erase the null partition (a dimension whose
    value is JSON null). It passes an Enum member's value through untouched, so the dataset
    lists, where those nulls live, travel as the values of one-off Enum members.
    """
    wrapped = dict(event)
    for key in ("inputs", "outputs"):
        if key in wrapped:
            Verbatim: Any = Enum("Verbatim", {"value": wrapped[key]})
            wrapped[key] = Verbatim["value"]
    return wrapped
