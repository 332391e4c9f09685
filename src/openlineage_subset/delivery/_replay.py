"""``ol-subset replay OUTBOX``: send the events an outbox still holds.

An outbox keeps every event until a transport took it (see ``_outbox``). What a capture could
not deliver before its ``close()`` ran out of time, or before a crash, stays there; the next
capture on the same outbox sends it, and so does this command, through the same transport a
capture would use: openlineage-python's configuration if there is one, else the JSON Lines
file ``--output`` (default ``openlineage-events.jsonl``). Events go in the order they were
produced, at least once: one delivered just before a crash may be sent again, so receivers
deduplicate by ``runId`` and ``eventType``. Lanes held by a running capture are left to it.
An outbox another user could have written (see ``_trust``) is refused whole, exit 2; a lane
whose cursor cannot be trusted is sent again from its start, and the summary says so.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from openlineage_subset import printable
from openlineage_subset.delivery._fates import EARLIER_IN_OUTBOX, Tally
from openlineage_subset.delivery._outbox import Outbox
from openlineage_subset.delivery._sending import (
    Delivery,
    Quarantine,
    local_paths,
    resolve_transport,
)
from openlineage_subset.delivery._trust import UnsafeOutbox
from openlineage_subset.producer import scrub_text

EXIT_SENT, EXIT_SOME_STAY, EXIT_UNUSABLE = 0, 1, 2
DEFAULT_REPLAY_TIMEOUT = 30.0
"""Seconds without a single event sent after which replay gives up (the rest stays)."""

REPLAY_HELP = "send the events an outbox still holds"
REPLAY_DESCRIPTION = (
    "Send the events left in an outbox (by a capture whose close() ran out of time, a crash, "
    "or an endpoint that was down) through the transport a capture would use: "
    "openlineage-python's configuration (openlineage.yml, OPENLINEAGE_URL, "
    "OPENLINEAGE__TRANSPORT__...) if there is one, else the JSON Lines file --output. Events go "
    "in the order they were produced, at least once: one delivered just before a crash may be "
    "sent again. Lanes held by a running capture are left to it. Exit 0 when every pending "
    "event was sent (or quarantined as rejected), 1 when some stay in the outbox, 2 when "
    "OUTBOX is not a usable outbox, or when another user owns or can write it or a part of it."
)
ARGUMENT_HELP = {
    "outbox": "the outbox folder (beside the events file: events.jsonl.outbox; by default "
    "openlineage-outbox)",
    "output": "JSON Lines file for the events when openlineage-python has no transport "
    "configured (default: $OL_SUBSET_OUTPUT, else openlineage-events.jsonl)",
    "quarantine": "where events the receiver rejects are kept (default: "
    "$OL_SUBSET_QUARANTINE, else beside FILE, else openlineage-quarantine.jsonl)",
    "timeout": "give up after this many seconds without an event sent (default "
    f"{DEFAULT_REPLAY_TIMEOUT:g}); what is left stays in the outbox",
}


def replay_command(
    outbox: str,
    *,
    output: str | None = None,
    quarantine: str | None = None,
    timeout: float = DEFAULT_REPLAY_TIMEOUT,
) -> int:
    """Send what ``outbox`` holds; print one summary line; return the exit status.

    0 when everything pending was sent (or quarantined, when the receiver rejected it), 1 when
    some events stay in the outbox (the transport failed for ``timeout`` seconds in a row, or
    a running capture holds them), 2 when ``outbox`` is not a usable outbox (or one another
    user could have written: ``_trust``). Settings that cannot be used (see
    ``_sending.resolve_transport``) are one warning line each on stderr.

    Example::

        status = replay_command("events.jsonl.outbox", output="events.jsonl")
        # ol-subset replay: sent 14 of 14 event(s) from events.jsonl.outbox to the JSON Lines ...
    """
    path = Path(outbox)
    if path.is_symlink() or not path.is_dir():
        if path.is_symlink():
            why = "a symlink, which is not followed (give the folder itself)"
        else:
            why = "not a folder" if path.exists() else "no such folder"
        _say(f"{outbox}: {why}", sys.stderr)
        return EXIT_UNUSABLE
    try:
        box = Outbox(path, create=False)
    except UnsafeOutbox as error:
        _say(str(error), sys.stderr)
        return EXIT_UNUSABLE
    except OSError as error:
        _say(f"{outbox}: not a usable outbox ({error.strerror or error})", sys.stderr)
        return EXIT_UNUSABLE
    sink = resolve_transport(output)
    for problem in sink.problems:
        _say(f"warning: {problem}", sys.stderr)
    tally = Tally()
    tally.add(EARLIER_IN_OUTBOX, box.earlier)
    kept = Quarantine(local_paths(output=output, quarantine=quarantine, outbox=None).quarantine)
    delivery = Delivery(box, sink.transport, kept, tally, sink=sink.description)
    try:
        _send_while_progressing(delivery, tally, timeout)
    finally:
        delivery.stop()
        box.close(timeout=1.0)
    counts = tally.snapshot()
    stay = counts.earlier_in_outbox
    quarantined = counts.kept(earlier=True)
    held = sum(pending for pending, _ in box.in_use.values())
    if box.earlier:
        sent = f"sent {counts.replayed} of {box.earlier} event(s) from {outbox}"
        clauses = [f"{sent} to {sink.description}"]
    else:
        clauses = [f"nothing to send in {outbox}"]
    if quarantined:
        clauses.append(f"{quarantined} rejected, kept in the quarantine {kept.path}")
    for lane, problem in box.distrusted.items():
        clauses.append(f"{lane} sent again from its start: its cursor {problem}")
    if stay:
        reason = delivery.last_error or "no transport"
        clauses.append(f"{stay} stay in the outbox ({reason})")
    for lane, (pending, pid) in box.in_use.items():
        clauses.append(f"{pending} more in {lane}, held by a running capture (pid {pid})")
    _say("; ".join(clauses), sys.stdout)
    return EXIT_SOME_STAY if stay or held else EXIT_SENT


def _send_while_progressing(delivery: Delivery, tally: Tally, timeout: float) -> None:
    """Let ``delivery`` send until nothing is left, or ``timeout`` seconds pass without one
    event settled."""
    left = tally.snapshot().earlier_in_outbox
    deadline = time.monotonic() + timeout
    while not delivery.drain(min(deadline, time.monotonic() + 0.5)):
        now_left = tally.snapshot().earlier_in_outbox
        if now_left < left:
            left, deadline = now_left, time.monotonic() + timeout
        elif time.monotonic() >= deadline or delivery.transport is None:
            return


def _say(text: str, stream: TextIO) -> None:
    """One line of replay's output: scrubbed of credentials, and with what a terminal would act
    on (an escape in a planted file's name, say) written as escapes."""
    print(f"ol-subset replay: {printable(scrub_text(text))}", file=stream)
