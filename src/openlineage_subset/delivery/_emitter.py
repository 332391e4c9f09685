"""Sending events: validated strictly, kept on local disk first, delivered at least once.

``submit`` only queues (Spark's listener thread never waits for a disk or a network). A
writer thread validates each event with the strict validator and appends it to the outbox (one
fsync'd JSON line; ``openlineage_subset.delivery._outbox`` has the layout); a delivery thread
(``openlineage_subset.delivery._sending``) sends the outbox's events, in order, through the
transport, retrying with backoff (0.1 s doubling to 5 s, jittered). An invalid event goes to the
quarantine (JSON Lines, with the reason and the validation issues), and so does one the
receiver rejects (HTTP 400, 413 or 422).

What is promised, and its limits:

- **Nothing vanishes.** Once ``flush()`` returned True, or after ``close()``, every event
  produced is counted in exactly one outcome (``_fates``): ``emitted`` (a transport took it),
  ``in outbox`` (on disk, sent by the next capture on the same outbox or by ``ol-subset replay
  OUTBOX``), ``quarantined (<reason>)``, or ``quarantined to the log (<reason>)`` when the
  quarantine file cannot be written (the event is then logged whole). Events earlier captures
  left in the outbox are sent first and counted apart (``replayed``, ``earlier in outbox``).
- **At least once.** An event sent just before a crash, or by a hanging call that ``close()``
  gave up on, may be sent again: receivers deduplicate by ``runId`` and ``eventType``.
- **Bounded close.** ``close()`` sends for at most its budget (``close_timeout``, else
  ``$OL_SUBSET_CLOSE_TIMEOUT``, else 5 s), then leaves the rest in the outbox and says so in
  one log line naming the outbox and the command that sends it. The exit of the program is
  delayed by that budget at most.
- **A broken outbox degrades.** When the outbox cannot be created or written (no permission,
  a full disk, a symlink in its place), one warning says so; events are then sent from memory
  and those not sent by ``close()`` go to the quarantine as ``undelivered``.
- The disk is trusted to keep what ``fsync`` confirmed; a program killed while an event is
  still queued in memory (before the writer appended it) loses that event.

The transport comes from openlineage-python's configuration (``openlineage.yml``,
``OPENLINEAGE_URL``, ``OPENLINEAGE__TRANSPORT__...``, ``OPENLINEAGE_CONFIG``); with none, events
are appended as JSON Lines to a file (``openlineage-events.jsonl`` unless set), fsync'd, created
0600, never through a symlink. A setting that cannot be used is one ``LineageSettingsWarning``
and a fallback to that file, never an exception.
"""

from __future__ import annotations

import math
import os
import queue
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openlineage_subset import validate
from openlineage_subset.delivery._fates import (
    EARLIER_IN_OUTBOX,
    IN_MEMORY,
    IN_OUTBOX,
    Counts,
    Places,
    Reason,
    Tally,
)
from openlineage_subset.delivery._outbox import Outbox, event_line
from openlineage_subset.delivery._sending import (
    DEFAULT_CLOSE_TIMEOUT,
    Delivery,
    Quarantine,
    Transport,
    local_paths,
    resolve_transport,
)
from openlineage_subset.producer import LineageSettingsWarning, scrubbed_logger

log = scrubbed_logger("openlineage_subset.delivery")

_STOP = object()
_WRITE_GRACE = 0.5
"""Seconds ``close()`` lets the writer finish appending to the outbox, even with no budget."""

__all__ = ["EXIT_BUDGET", "Emitter", "ExitBudget", "Transport", "close_budget", "open_emitter"]


MAX_CLOSE_TIMEOUT = 86_400.0
"""The longest close budget taken (a day): beyond it a wait is a mistake, and beyond about 9e9 s
Python's waits raise ``OverflowError``."""


_BUDGET_PROBLEMS_SAID: set[str] = set()


def close_budget(seconds: float | None) -> tuple[float, str | None]:
    """How long ``close()`` sends: ``seconds``, else ``$OL_SUBSET_CLOSE_TIMEOUT``, else 5 s.

    Returns the budget and, for an unusable environment value (not a number, infinite, NaN,
    negative, or over :data:`MAX_CLOSE_TIMEOUT`), the warning to give. An invalid ``seconds``
    is a ``ValueError``.

    >>> close_budget(2)
    (2.0, None)
    """
    if seconds is not None:
        problem = _budget_problem(seconds)
        if problem is not None:
            raise ValueError(f"close_timeout {problem}, got {seconds!r}")
        return float(seconds), None
    text = os.environ.get("OL_SUBSET_CLOSE_TIMEOUT", "").strip()
    if not text:
        return DEFAULT_CLOSE_TIMEOUT, None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    problem = _budget_problem(value)
    if problem is not None:
        return DEFAULT_CLOSE_TIMEOUT, (
            f"OL_SUBSET_CLOSE_TIMEOUT={text!r} is not usable (it {problem}): close() sends for "
            f"{DEFAULT_CLOSE_TIMEOUT:g} s; set it to a number such as 10, or unset it"
        )
    return value, None


def _budget_problem(seconds: object) -> str | None:
    """What is wrong with ``seconds`` as a close budget, None if nothing."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return "must be a number of seconds"
    if not math.isfinite(seconds) or not 0 <= seconds <= MAX_CLOSE_TIMEOUT:
        return f"must be finite, >= 0 and <= {MAX_CLOSE_TIMEOUT:g} (a day)"
    return None


class ExitBudget:
    """One close budget for the exit of the process, however many captures close at it.

    The first :meth:`remaining` starts the clock; each capture closing at exit gets what is left
    of its own budget since then, so the exit is delayed by the longest budget, not their sum.

    >>> ticks = iter([100.0, 103.0])
    >>> budget = ExitBudget(clock=lambda: next(ticks))
    >>> budget.remaining(5.0), budget.remaining(5.0)
    (5.0, 2.0)
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._started: float | None = None
        self._lock = threading.Lock()

    def remaining(self, budget: float) -> float:
        """Seconds left of ``budget`` counted from the first call."""
        with self._lock:
            now = self._clock()
            if self._started is None:
                self._started = now
            return max(0.0, self._started + budget - now)


EXIT_BUDGET = ExitBudget()
"""The close budget of this process's exit (``atexit``, the end of ``ol-subset run``)."""


def open_emitter(
    *,
    transport: Transport | None,
    output: str | os.PathLike[str] | None,
    quarantine: str | os.PathLike[str] | None,
    outbox: str | os.PathLike[str] | None,
    close_timeout: float | None,
) -> Emitter:
    """The emitter of ``enable()``: its transport, quarantine, outbox and close budget.

    ``transport`` as given, else resolved (``_sending.resolve_transport``): openlineage-python's
    configuration, else the JSON Lines file ``output``. Never raises for a setting: each one
    that cannot be used (a bad output path, ``OPENLINEAGE_URL=not-a-url``, a transport type
    without its settings) is one ``LineageSettingsWarning`` saying what was done instead and
    what to do. Paths not given follow ``_sending.local_paths`` (beside the output file).

    Example::

        emitter = open_emitter(transport=None, output="events.jsonl", quarantine=None,
                               outbox=None, close_timeout=None)
    """
    problems: list[str] = []
    chosen_output = output or os.environ.get("OL_SUBSET_OUTPUT") or None
    if transport is None:
        sink = resolve_transport(output)
        problems += sink.problems
        resolved, description = sink.transport, sink.description
        unusable = sink.transport is None or (
            sink.file is not None
            and chosen_output is not None
            and sink.file != Path(chosen_output).absolute()
        )
        if unusable:  # the quarantine and the outbox go where the events went instead
            chosen_output = None
    else:
        resolved, description = transport, f"the transport given to enable() ({transport!r})"
    budget, problem = close_budget(close_timeout)
    if problem is not None and problem not in _BUDGET_PROBLEMS_SAID:
        _BUDGET_PROBLEMS_SAID.add(problem)  # the environment is the process's: said once in it
        problems.append(problem)
    for message in problems:
        warnings.warn(message, LineageSettingsWarning, stacklevel=3)
    paths = local_paths(output=chosen_output, quarantine=quarantine, outbox=outbox)
    return Emitter(resolved, paths.quarantine, paths.outbox, close_timeout=budget, sink=description)


class Emitter:
    """Validates events, keeps them in an outbox, and delivers them, on background threads.

    ``transport`` None: nothing is sent; events stay in the outbox. ``counts`` as described
    in the module docstring.

    Example::

        emitter = Emitter(JsonLinesTransport("events.jsonl"), "q.jsonl", "events.jsonl.outbox")
        emitter.submit([start_event, complete_event])
        emitter.close()  # True: every event emitted or quarantined; False: some stay
    """

    def __init__(
        self,
        transport: Transport | None,
        quarantine: str | os.PathLike[str],
        outbox: str | os.PathLike[str],
        *,
        close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
        sink: str | None = None,
    ) -> None:
        problem = _budget_problem(close_timeout)
        if problem is not None:
            raise ValueError(f"close_timeout {problem}, got {close_timeout!r}")
        self.transport = transport
        self.close_timeout = float(close_timeout)
        self.quarantine = Quarantine(quarantine)
        self.quarantine_path = self.quarantine.path
        self.outbox_path = Path(outbox).absolute()
        self.tally = Tally()
        self.outbox = self._open_outbox()
        self._appending = self.outbox is not None
        self.delivery = Delivery(
            self.outbox, transport, self.quarantine, self.tally, sink=sink or repr(transport)
        )
        self._queue: queue.Queue[Any] = queue.Queue()
        self._gate = threading.Lock()
        self._closed = False
        self._result = True
        self._writer = threading.Thread(
            target=self._write_loop, name="ol-subset-outbox", daemon=True
        )
        self._writer.start()

    @property
    def counts(self) -> Counts:
        """What happened to the events so far (see the module docstring)."""
        return self.tally.snapshot()

    @property
    def places(self) -> Places:
        """Where the events go: the transport, the outbox and the quarantine."""
        return Places(
            self.delivery.sink, self.outbox_path, self.quarantine_path, self.quarantine.write_error
        )

    def submit(self, events: list[dict[str, Any]]) -> None:
        """Queue events for validation, the outbox and delivery, in order."""
        with self._gate:
            if not self._closed:
                for event in events:
                    self._queue.put(event)
                return
        for event in events:  # a listener call racing close(): kept, and said
            self.tally.add(self.quarantine.keep(event, Reason.SUBMITTED_AFTER_CLOSE))

    def keep(self, event: dict[str, Any], reason: Reason, **details: Any) -> None:
        """Quarantine ``event`` instead of sending it (counted ``quarantined (<reason>)``)."""
        self.tally.add(self.quarantine.keep(event, reason, **details))

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every event submitted so far is emitted or quarantined; False when
        ``timeout`` (default: the close budget) ran out first (they stay in the outbox and
        delivery goes on)."""
        deadline = time.monotonic() + self._budget(timeout, "flush")
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._queue.all_tasks_done.wait(remaining)
        return self.tally.wait(lambda counts: counts.settled, deadline)

    def close(self, timeout: float | None = None) -> bool:
        """Send what is pending for at most ``timeout`` seconds (default: the close budget),
        then stop; True when every event was emitted or quarantined as invalid or rejected,
        False when some stay in the outbox (said in one log line) or could only be kept
        undelivered."""
        with self._gate:
            if self._closed:
                return self._result
            self._closed = True
            self._queue.put(_STOP)
        budget = self._budget(timeout, "close")
        deadline = time.monotonic() + budget
        # The outbox is on local disk: writing it gets a moment even when no time is left to
        # send (a second capture closing at exit), else its events would go to the log.
        self._writer.join(max(_WRITE_GRACE, deadline - time.monotonic()))
        stalled = self._writer.is_alive()
        if stalled:
            self._log_unwritten()
        self.delivery.drain(deadline)
        left = self.delivery.stop()
        if self.outbox is not None and not self.outbox.close(max(0.5, deadline - time.monotonic())):
            log.warning("the outbox %s is busy in a stalled file operation", self.outbox_path)
        for event in left:
            reason = self.delivery.last_error or f"close() ran out of its {budget:g} s"
            kept = self.quarantine.keep(event, Reason.UNDELIVERED, error=reason)
            self.tally.move(IN_MEMORY, kept)
        counts = self.tally.snapshot()
        self._result = not stalled and counts.in_outbox == 0 and counts.unsent == 0
        self._report(budget, counts)
        return self._result

    def _budget(self, timeout: object, call: str) -> float:
        """``timeout`` as seconds to wait; the close budget when None, or when unusable
        (said in a warning: closing must not raise)."""
        if timeout is None:
            return self.close_timeout
        problem = _budget_problem(timeout)
        if problem is None and isinstance(timeout, (int, float)):
            return float(timeout)
        warnings.warn(
            f"{call}(timeout={timeout!r}) is not usable (it {problem}): waiting for the close "
            f"budget, {self.close_timeout:g} s, instead",
            LineageSettingsWarning,
            stacklevel=3,
        )
        return self.close_timeout

    def _open_outbox(self) -> Outbox | None:
        try:
            outbox = Outbox(self.outbox_path)
        except Exception as error:  # no permission, a full disk, a symlink: degrade, say so
            log.warning(
                "the OpenLineage outbox %s cannot be used (%s): events are sent from memory, "
                "without a copy on disk, and those not sent by close() go to the quarantine "
                "%s; give enable(outbox=...) or $OL_SUBSET_OUTBOX a folder that can be written",
                self.outbox_path,
                f"{type(error).__name__}: {error}",
                self.quarantine.path,
            )
            return None
        if outbox.earlier:
            self.tally.add(EARLIER_IN_OUTBOX, outbox.earlier)
            log.info(
                "sending first the %d event(s) earlier captures left in the outbox %s",
                outbox.earlier,
                outbox.path,
            )
        for lane, (pending, pid) in outbox.in_use.items():
            log.info(
                "outbox %s: %s holds %d event(s) of a running process (pid %s), which sends them",
                outbox.path,
                lane,
                pending,
                pid,
            )
        return outbox

    def _write_loop(self) -> None:
        while True:
            event = self._queue.get()
            try:
                if event is _STOP:
                    return
                self._write(event)
            except Exception as error:  # never lose the thread: count, keep the event
                self.tally.add(
                    self.quarantine.keep(event, Reason.INTERNAL_ERROR, error=repr(error))
                )
            finally:
                self._queue.task_done()

    def _write(self, event: dict[str, Any]) -> None:
        issues = validate(event, strict=True)
        if issues:
            details = [{"path": issue.path, "message": issue.message} for issue in issues]
            self.tally.add(self.quarantine.keep(event, Reason.INVALID, issues=details))
            return
        line = event_line(event)
        if self.outbox is not None and self._appending:
            try:
                with self.outbox.lock:
                    self.outbox.append(line)
                    self.tally.add(IN_OUTBOX)
            except Exception as error:
                self._appending = False
                log.warning(
                    "the OpenLineage outbox %s cannot be written (%s): this event and the "
                    "next ones are sent from memory, without a copy on disk; those not sent by "
                    "close() go to the quarantine %s",
                    self.outbox_path,
                    f"{type(error).__name__}: {error}",
                    self.quarantine.path,
                )
            else:
                self.delivery.wake()
                return
        self.delivery.hold(event)

    def _log_unwritten(self) -> None:
        """The writer is stuck (a disk that hangs): log whole what it did not take."""
        while True:
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                return
            if event is not _STOP:
                line = event_line(event).decode().rstrip("\n")
                why = "the outbox writer is stalled (a disk that does not answer?)"
                self.tally.add(self.quarantine.to_log(line, Reason.UNWRITTEN, why))

    def _report(self, budget: float, counts: Counts) -> None:
        clauses = counts.left_behind(self.places)
        if not clauses:
            return
        error = self.delivery.last_error
        log.warning(
            "OpenLineage: not all events were delivered within close()'s %g s: %s%s",
            budget,
            "; ".join(clauses),
            f" (last error: {error})" if error else "",
        )
