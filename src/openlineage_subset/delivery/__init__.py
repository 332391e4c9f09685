"""The delivery room: getting events out, at least once, whatever the endpoint does.

- ``_emitter``: the queue a capture submits to; validates, keeps in the outbox, delivers;
- ``_outbox``: the durable local outbox, its lanes together (what the emitter uses);
- ``_lane``: one lane of an outbox: its segments and its cursor;
- ``_files``: whole lines in files (appended and synced, read back), under the outbox and the
  files it shares;
- ``_trust``: an outbox another user could have written is refused, as ssh refuses keys;
- ``_sending``: transports (openlineage-python's, or a JSON Lines file), retries, quarantine;
- ``_fates``: where every event went (its fate, a quarantine's reason) and the counts of a
  capture, with their text;
- ``_replay``: ``ol-subset replay OUTBOX``, what an outbox still holds, sent;
- ``_openlineage_client``: the bridge to openlineage-python (its configuration and Serde).

Arrows point down: ``spark`` and ``cli`` use this room, through the names below; it uses the
producer room and the SDK. The whole face is internal to the package (for its other rooms, not
user API): users reach delivery through ``enable()`` and ``ol-subset``.
"""

from openlineage_subset.delivery._emitter import (
    EXIT_BUDGET,
    MAX_CLOSE_TIMEOUT,
    Emitter,
    ExitBudget,
    open_emitter,
)
from openlineage_subset.delivery._fates import (
    CaptureCount,
    Counts,
    Fate,
    Outcome,
    Places,
    Reason,
    Tally,
)
from openlineage_subset.delivery._lane import outbox_line_limit
from openlineage_subset.delivery._openlineage_client import (
    SUPPORTED,
    configured_transport,
    new_run_id,
    to_json,
    wire_event,
)
from openlineage_subset.delivery._outbox import Outbox, event_line
from openlineage_subset.delivery._replay import (
    ARGUMENT_HELP,
    DEFAULT_REPLAY_TIMEOUT,
    REPLAY_DESCRIPTION,
    REPLAY_HELP,
    replay_command,
)
from openlineage_subset.delivery._sending import JsonLinesTransport, Transport

__all__ = [
    "ARGUMENT_HELP",
    "DEFAULT_REPLAY_TIMEOUT",
    "EXIT_BUDGET",
    "MAX_CLOSE_TIMEOUT",
    "REPLAY_DESCRIPTION",
    "REPLAY_HELP",
    "SUPPORTED",
    "CaptureCount",
    "Counts",
    "Emitter",
    "ExitBudget",
    "Fate",
    "JsonLinesTransport",
    "Outbox",
    "Outcome",
    "Places",
    "Reason",
    "Tally",
    "Transport",
    "configured_transport",
    "event_line",
    "new_run_id",
    "open_emitter",
    "outbox_line_limit",
    "replay_command",
    "to_json",
    "wire_event",
]
