"""Hand-built OpenLineage RunEvents for the lineage tests, written as JSON Lines files."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.helpers import CORE_URL, INPUT_URL, OUTPUT_URL, PRODUCER

BASE = dt.datetime(2024, 10, 15, 0, 0, tzinfo=dt.timezone.utc)
LAKE = "/data/lake"

Json = dict[str, Any]
Access = tuple[str, Json | None]  # (dataset name under LAKE, condition or None: no facet)


def at(minute: float) -> str:
    """The time ``minute`` minutes after midnight 2024-10-15 UTC, as an event writes it."""
    return (BASE + dt.timedelta(minutes=minute)).isoformat().replace("+00:00", "Z")


def run_id(number: int) -> str:
    return f"00000000-0000-4000-8000-{number:012d}"


def parts(*dimensions: Mapping[str, str | None]) -> Json:
    return {
        "type": "partition",
        "partitions": [
            {
                "dimensions": dict(item),
                "identifier": "/".join(f"{k}={v}" for k, v in item.items()),
            }
            for item in dimensions
        ],
    }


def compare(column: str, comparison: str, value: str) -> Json:
    return {
        "type": "compare",
        "left": {"type": "field", "field": column},
        "right": {"type": "literal", "value": value},
        "comparison": comparison,
    }


def both(left: Json, operator: str, right: Json) -> Json:
    return {"type": "binary", "left": left, "right": right, "operator": operator}


def with_subset(dataset: Json, condition: Json | None, role: str) -> Json:
    """``dataset`` with ``condition`` as its input (``role`` ``input``) or output subset facet
    (None: no facet)."""
    if condition is not None:
        key, url, place = (
            ("inputCondition", INPUT_URL, "inputFacets")
            if role == "input"
            else ("outputCondition", OUTPUT_URL, "outputFacets")
        )
        dataset[place] = {"subset": {key: condition, "_producer": PRODUCER, "_schemaURL": url}}
    return dataset


def _dataset(name: str, condition: Json | None, role: str) -> Json:
    return with_subset({"namespace": "file", "name": f"{LAKE}/{name}"}, condition, role)


def event(
    number: int,
    event_type: str,
    minute: float,
    *,
    job: str = "job",
    reads: Sequence[Access] = (),
    writes: Sequence[Access] = (),
) -> Json:
    return {
        "eventType": event_type,
        "eventTime": at(minute),
        "producer": PRODUCER,
        "schemaURL": CORE_URL,
        "run": {"runId": run_id(number)},
        "job": {"namespace": "tests", "name": job},
        "inputs": [_dataset(name, condition, "input") for name, condition in reads],
        "outputs": [_dataset(name, condition, "output") for name, condition in writes],
    }


def run(
    number: int,
    start: float,
    end: float,
    *,
    reads: Sequence[Access] = (),
    writes: Sequence[Access] = (),
    status: str = "COMPLETE",
    job: str | None = None,
) -> list[Json]:
    """A run as this package emits it: START lists outputs without their facet, the end has it."""
    name = job or f"job{number}"
    return [
        event(
            number,
            "START",
            start,
            job=name,
            reads=reads,
            writes=[(dataset, None) for dataset, _ in writes],
        ),
        event(number, status, end, job=name, reads=reads, writes=writes),
    ]


def write_events(path: Path, events: Iterable[Json]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in events), encoding="utf-8")
    return path


def day(value: str, country: str | None = None) -> Json:
    dimensions = {"day": value} if country is None else {"day": value, "country": country}
    return parts(dimensions)


HOSTILE_NAME = '<script>alert("x")</script>"><img src=x onerror=alert(1)>'
"""A dataset name that is markup, for the report's escaping."""
COUNTRIES = ("DE", "FR", "PL")


def pipeline_history(days: int = 10, *, failed_day: int = 7) -> list[Json]:
    """Four daily stages over ``days`` days: ``raw`` (day, country) is read by ``clean`` (one
    day, a partition list), a ``rolling`` 3-day window of ``clean`` (a range; it fails on day
    ``failed_day``), a ``report`` that filters on a non-partition column (possible) and writes
    a dataset named :data:`HOSTILE_NAME` whole, and a ``compact`` job that reads and rewrites
    the day's ``clean`` partition."""
    events: list[Json] = []
    first = dt.date(2024, 10, 1)
    dates = [(first + dt.timedelta(days=number)).isoformat() for number in range(days)]
    minute = 0.0
    number = 0

    def add(**arguments: Any) -> None:
        nonlocal minute, number
        number += 1
        events.extend(run(number, minute, minute + 1, **arguments))
        minute += 2

    for index, date in enumerate(dates):
        each = parts(*({"day": date, "country": country} for country in COUNTRIES))
        window = both(
            compare("day", "GREATER_EQUAL_THAN", dates[max(index - 2, 0)]),
            "AND",
            compare("day", "LESS_EQUAL_THAN", date),
        )
        add(writes=[("raw", each)], job="load")
        add(reads=[("raw", each)], writes=[("clean", day(date))], job="clean")
        add(reads=[("clean", day(date))], writes=[("clean", day(date))], job="compact")
        status = "FAIL" if index == failed_day else "COMPLETE"
        add(
            reads=[("clean", window)], writes=[("rolling", day(date))], job="rolling", status=status
        )
        scored = both(day(date), "AND", compare("score", "GREATER_THAN", "0.5"))
        add(reads=[("rolling", scored)], writes=[(HOSTILE_NAME, None)], job="report")
    return events


WIDE_PREFIX = "daily_sales_demo.write.tmp_output_"
"""The start every job name of :func:`wide_pipeline` shares, longer than a graph box."""


def wide_pipeline(jobs: int = 50, datasets: int = 200, *, seed: int = 22) -> list[Json]:
    """``jobs`` jobs over ``datasets`` datasets, a few runs each: 40 source datasets, then each
    job reads a source and up to two datasets that exist already, and writes its share of the
    rest (some read far upstream, so edges skip layers). Job names differ only at their end."""
    chosen = random.Random(seed)
    written = [f"src{number:02d}" for number in range(40)]
    shares = [
        (datasets - 40) * (job + 1) // jobs - (datasets - 40) * job // jobs for job in range(jobs)
    ]
    events: list[Json] = []
    number = 0
    for job, share in enumerate(shares):
        sources = {f"src{job % 40:02d}", *chosen.sample(written, chosen.randint(0, 2))}
        reads = [(name, day("2024-10-01")) for name in sorted(sources)]
        outputs = [f"t{job:02d}_{place}" for place in range(share)]
        for _ in range(1 + job % 3):
            number += 1
            writes = [(name, day("2024-10-01")) for name in outputs]
            name = f"{WIDE_PREFIX}{job:02d}"
            events += run(number, number, number + 0.5, job=name, reads=reads, writes=writes)
        written += outputs
    return events
