"""The index of reads by their ranges of dates (``access_ranges``, layout 10) finds exactly the
reads that checking every read of the dataset finds: on random histories of date conditions
(windows of any width, open on one side, equalities, two date columns, a day's partitions AND
a filter, OR of those, a whole read, the OR of a run's several events), asked about random
partitions, their answers are those of the index turned off."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import impact, ingest
from openlineage_subset.lineage.engine import _timeline
from tests.lineage.events import both, compare, parts, run, write_events

Json = dict[str, Any]
FIRST = dt.date(2024, 1, 1)


def _date(rng: random.Random) -> str:
    return (FIRST + dt.timedelta(days=rng.randrange(400))).isoformat()


def _condition(rng: random.Random, depth: int = 0) -> Json | None:
    kind = rng.choice(
        ["window", "window", "since", "until", "equal", "other", "listed", "whole", "or"][
            : 9 - depth
        ]
    )
    if kind == "window":  # a range of 1 to 200 days
        low = FIRST + dt.timedelta(days=rng.randrange(400))
        high = low + dt.timedelta(days=rng.choice((0, 1, 6, 30, 199)))
        return both(
            compare("day", "GREATER_EQUAL_THAN", low.isoformat()),
            "AND",
            compare("day", "LESS_EQUAL_THAN", high.isoformat()),
        )
    if kind == "since":
        return compare("day", "GREATER_THAN", _date(rng))
    if kind == "until":
        return compare("day", "LESS_EQUAL_THAN", _date(rng))
    if kind == "equal":
        return compare("day", "EQUAL", _date(rng))
    if kind == "other":  # another column of dates, or both
        other = compare("loaded", "GREATER_EQUAL_THAN", _date(rng))
        return (
            other if rng.random() < 0.5 else both(other, "AND", compare("day", "EQUAL", _date(rng)))
        )
    if kind == "listed":  # a day's partition AND a filter: not only a list
        listed = parts({"day": _date(rng), "country": rng.choice(("DE", "FR"))})
        return both(listed, "AND", compare("amount", "GREATER_THAN", "0"))
    if kind == "whole":
        return None
    left = _condition(rng, depth + 2) or compare("w", "EQUAL", "1")
    right = _condition(rng, depth + 2) or compare("w", "EQUAL", "2")
    return both(left, "OR", right)


def _affected(db: str, days: list[str]) -> list[list[str]]:
    """The runs affected by each day, and by a country (every day: a span of days)."""
    asked = [{"day": when} for when in days] + [{"country": "FR"}]
    answers = [impact(db, "table", partition=partition) for partition in asked]
    return [sorted(item.run.run_id for item in answer.runs) for answer in answers]


@pytest.mark.parametrize("seed", range(4))
def test_the_index_of_ranges_answers_as_checking_every_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    days = sorted({_date(rng) for _ in range(12)})
    written = [{"day": when, "country": country} for when in days for country in ("DE", "FR")]
    events = run(1, 0, 0.5, writes=[("table", parts(*written))])
    for number in range(3, 63):
        if rng.random() < 0.2:  # a run of several events: the OR of their conditions
            events += run(number, number, number + 0.2, reads=[("table", _condition(rng))])
        events += run(number, number, number + 0.5, reads=[("table", _condition(rng))])
    rng.shuffle(events)
    db = str(tmp_path / "lineage.db")
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    indexed = _affected(db, days)
    # The index turned off: every read of the dataset under every key, each checked.
    everything = [(column, span, "", "~") for column in ("day", "loaded") for span in range(-2, 24)]
    monkeypatch.setattr(_timeline, "range_probes", lambda spans: everything)
    assert indexed == _affected(db, days)
    assert any(indexed) and not all(len(found) == 60 for found in indexed)
