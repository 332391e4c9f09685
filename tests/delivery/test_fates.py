"""Where events went, typed: the names of the counts, their reading, their text, their tally.

The names are those users read in ``handle.counts`` (docs/delivery.md); the lines are those
``ol-subset run`` and ``close()`` printed when counts were strings, checked against that string
reading of the same counts (the oracle below is the summary as it was written then).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset.delivery import CaptureCount, Counts, Fate, Outcome, Places, Reason, Tally
from openlineage_subset.delivery._fates import (
    EARLIER_IN_OUTBOX,
    EMITTED,
    IN_MEMORY,
    IN_OUTBOX,
    REPLAYED,
    Key,
)

PLACES = Places("the JSON Lines file /x/events.jsonl", Path("/x/outbox"), Path("/x/q.jsonl"))


def _every_outcome() -> list[Outcome]:
    outcomes = [IN_OUTBOX, IN_MEMORY, EMITTED, EARLIER_IN_OUTBOX, REPLAYED]
    for fate, reason, earlier in itertools.product(
        (Fate.QUARANTINED, Fate.LOGGED), Reason, (False, True)
    ):
        outcomes.append(Outcome(fate, reason, earlier))
    return outcomes


EVERY_KEY: list[Key] = [*_every_outcome(), *CaptureCount]


@pytest.mark.parametrize(
    ("key", "text"),
    [
        (EMITTED, "emitted"),
        (IN_OUTBOX, "in outbox"),
        (IN_MEMORY, "in memory"),
        (EARLIER_IN_OUTBOX, "earlier in outbox"),
        (REPLAYED, "replayed"),
        (Outcome(Fate.QUARANTINED, Reason.INVALID), "quarantined (invalid)"),
        (
            Outcome(Fate.QUARANTINED, Reason.OVER_MAX_EVENT_BYTES),
            "quarantined (over max_event_bytes)",
        ),
        (Outcome(Fate.LOGGED, Reason.INVALID), "quarantined to the log (invalid)"),
        (Outcome(Fate.QUARANTINED, Reason.UNDELIVERED), "quarantined (undelivered)"),
        (
            Outcome(Fate.QUARANTINED, Reason.REJECTED, earlier=True),
            "replayed, quarantined (rejected)",
        ),
        (
            Outcome(Fate.LOGGED, Reason.UNREADABLE, earlier=True),
            "replayed, quarantined to the log (unreadable)",
        ),
        (CaptureCount.DATASETS_DEGRADED, "datasets degraded"),
        (CaptureCount.ACTIONS, "actions"),
        (CaptureCount.ERRORS, "errors"),
    ],
)
def test_each_count_reads_by_the_name_users_know(key: Key, text: str) -> None:
    assert list(Counts({key: 3})) == [text]
    assert Counts({key: 3})[text] == 3


def test_no_two_counts_share_a_name() -> None:
    names = [next(iter(Counts({key: 1}))) for key in EVERY_KEY]
    assert len(set(names)) == len(EVERY_KEY)


@pytest.mark.parametrize(
    "making",
    [
        lambda: Outcome(Fate.EMITTED, Reason.INVALID),
        lambda: Outcome(Fate.QUARANTINED),
        lambda: Outcome(Fate.LOGGED, None, earlier=True),
        lambda: Outcome(Fate.IN_MEMORY, earlier=True),
    ],
    ids=["a reason for an event sent", "kept for no reason", "logged for none", "earlier memory"],
)
def test_an_outcome_that_cannot_happen_cannot_be_made(making: object) -> None:
    with pytest.raises(ValueError, match=r"reason|memory"):
        making()  # type: ignore[operator]


def test_counts_read_as_a_counter_did() -> None:
    counts = Counts({EMITTED: 2, IN_OUTBOX: 0, CaptureCount.ERRORS: -1})
    assert counts == {"emitted": 2}, "zeros and below are not counts"
    assert counts["errors"] == 0 and "errors" not in counts
    assert dict(counts + Counts({EMITTED: 1, REPLAYED: 4})) == {"emitted": 3, "replayed": 4}
    assert isinstance(counts, Mapping) and len(counts) == 1


def test_kept_and_unsent_read_the_fates_they_name() -> None:
    counts = Counts(
        {
            Outcome(Fate.QUARANTINED, Reason.INVALID): 1,
            Outcome(Fate.QUARANTINED, Reason.UNDELIVERED): 2,
            Outcome(Fate.LOGGED, Reason.UNWRITTEN): 4,
            Outcome(Fate.QUARANTINED, Reason.REJECTED, earlier=True): 8,
            Outcome(Fate.LOGGED, Reason.UNREADABLE, earlier=True): 16,
        }
    )
    assert counts.kept(Fate.QUARANTINED) == 3 and counts.kept(Fate.LOGGED) == 4
    assert counts.kept() == 7 and counts.kept(earlier=True) == 24
    assert counts.unsent == 6


def _summary_as_it_was(counts: Mapping[str, int], places: Places) -> str:
    """``ol-subset run``'s line as it was made from string counts (the oracle)."""
    in_file = sum(n for key, n in counts.items() if key.startswith("quarantined ("))
    logged = sum(n for key, n in counts.items() if key.startswith("quarantined to the log ("))
    parts = [
        f"{counts.get('actions', 0)} action(s) captured; {counts.get('emitted', 0)} event(s) "
        f"sent to {places.sink}"
    ]
    if counts.get("in outbox"):
        parts.append(f"{counts['in outbox']} left in the outbox {places.outbox}")
    if in_file:
        parts.append(f"{in_file} quarantined in {places.quarantine}")
    if logged:
        why = places.quarantine_error or "unwritable"
        parts.append(
            f"{logged} could not be written to {places.quarantine} ({why}): logged whole "
            "on lines starting 'OpenLineage event not quarantined'"
        )
    if counts.get("datasets degraded"):
        parts.append(f"{counts['datasets degraded']} dataset(s) degraded (see the log)")
    if counts.get("errors"):
        parts.append(f"{counts['errors']} capture error(s) (see the log)")
    return "; ".join(parts)


def _problems_as_they_were(counts: Mapping[str, int]) -> list[str]:
    """The demo's problems as they were picked from string counts (the oracle)."""
    return [
        f"{n} {kind}"
        for kind, n in sorted(counts.items())
        if kind in ("errors", "in outbox") or kind.startswith("quarantined")
    ]


_COUNTS = st.dictionaries(st.sampled_from(EVERY_KEY), st.integers(0, 30)).map(Counts)


@given(_COUNTS, st.sampled_from([None, "OSError: [Errno 28] No space left on device"]))
def test_the_summary_says_what_the_string_counts_said(counts: Counts, error: str | None) -> None:
    places = Places(PLACES.sink, PLACES.outbox, PLACES.quarantine, error)
    assert counts.summary(places) == _summary_as_it_was(dict(counts), places)
    assert counts.problems() == _problems_as_they_were(dict(counts))


def test_a_summary_of_every_kind_of_count() -> None:
    counts = Counts(
        {
            CaptureCount.ACTIONS: 3,
            EMITTED: 4,
            IN_OUTBOX: 2,
            Outcome(Fate.QUARANTINED, Reason.INVALID): 1,
            Outcome(Fate.QUARANTINED, Reason.REJECTED): 1,
            Outcome(Fate.LOGGED, Reason.UNWRITTEN): 2,
            Outcome(Fate.QUARANTINED, Reason.REJECTED, earlier=True): 5,
            CaptureCount.DATASETS_DEGRADED: 1,
            CaptureCount.ERRORS: 2,
        }
    )
    assert counts.summary(PLACES) == (
        "3 action(s) captured; 4 event(s) sent to the JSON Lines file /x/events.jsonl; "
        "2 left in the outbox /x/outbox; 2 quarantined in /x/q.jsonl; "
        "2 could not be written to /x/q.jsonl (unwritable): logged whole on lines starting "
        "'OpenLineage event not quarantined'; 1 dataset(s) degraded (see the log); "
        "2 capture error(s) (see the log)"
    )


def test_what_close_left_behind_is_said_in_one_clause_a_place() -> None:
    places = Places("s", Path("/x/my outbox"), Path("/x/q.jsonl"))
    assert (
        Counts({EMITTED: 3, Outcome(Fate.QUARANTINED, Reason.INVALID): 1}).left_behind(places) == []
    )
    counts = Counts(
        {IN_OUTBOX: 2, EARLIER_IN_OUTBOX: 3, Outcome(Fate.LOGGED, Reason.UNDELIVERED): 1}
    )
    assert counts.left_behind(places) == [
        "5 event(s) stay in the outbox /x/my outbox (2 of this run, 3 left by earlier ones): the "
        "next capture on this outbox sends them, or run `ol-subset replay '/x/my outbox'`",
        "1 event(s) the outbox could not take are kept unsent in the quarantine /x/q.jsonl (or "
        "the log, if it cannot be written)",
    ]


def test_a_tally_shared_by_threads_loses_no_count() -> None:
    tally = Tally()
    tally.add(IN_OUTBOX, 8 * 500)

    def work() -> None:
        for _ in range(500):
            tally.add(CaptureCount.ACTIONS)
            tally.move(IN_OUTBOX, EMITTED)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tally.snapshot() == {"actions": 4000, "emitted": 4000}


def test_a_wait_on_a_tally_ends_when_done_or_at_its_deadline() -> None:
    tally = Tally()
    tally.add(IN_MEMORY)
    started = time.monotonic()
    assert tally.wait(lambda counts: counts.settled, started + 0.2) is False
    assert time.monotonic() - started >= 0.2
    timer = threading.Timer(0.1, tally.move, (IN_MEMORY, EMITTED))
    timer.start()
    assert tally.wait(lambda counts: counts.settled, time.monotonic() + 30) is True
    timer.join()
    assert tally.snapshot().emitted == 1
