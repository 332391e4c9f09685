"""The lineage store at stream rates: a year of a query with a batch a minute (525,600 runs).

Makes the events of one streaming query run whose ``--batches`` batches (default 525,600)
each read one new file of an inbox (a ``location``) and write the day partition of its rows
(``day``: one day per 1,440 batches), as capture emits them (START and COMPLETE, a ``parent``
facet naming the query run); ingests them into a database kept under the system's temporary
folder (a rerun with the same ``--batches`` reuses it); then times, each ``--repeat`` times (the
median printed):

- the query run's page of batches (``run_details``: its first page, the newest; a page by
  time, mid-history; the page after that one);
- the runs listing (``runs``, the latest 100);
- impact of one bad file of the inbox (``--location``: the batch that read it, its day);
- the history of one written day of the sink (the batches that wrote it, and its readers);
- impact of one written day (what read it) and its provenance (its last writers).

Targets (issue 40): the pages within 1 s, impact within 100 ms.

    python benchmarks/stream_history.py [--batches 525600] [--repeat 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from openlineage_subset.lineage import (
    Lineage,
    RunsQuery,
    history,
    impact,
    ingest,
    provenance,
)

PRODUCER = "https://github.com/openlineage-subset/openlineage-subset/benchmarks"
SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
SUBSET = "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"
PARENT = "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet"
BEGIN = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
INBOX, OUT = "/lake/inbox", "/lake/out"
QUERY_RUN = str(uuid.UUID(int=1))


def _time(minute: float) -> str:
    return (BEGIN + dt.timedelta(minutes=minute)).isoformat().replace("+00:00", "Z")


def _day(batch: int) -> str:
    return (BEGIN + dt.timedelta(days=batch // 1440)).date().isoformat()


def events(batches: int) -> Iterator[dict[str, object]]:
    """The query run's START, each batch's START and COMPLETE, the query run's end."""
    query_job = {"namespace": "lake", "name": "app.stream.clicks"}
    yield _event("START", 0, QUERY_RUN, query_job)
    parent = {
        "_producer": PRODUCER,
        "_schemaURL": PARENT,
        "run": {"runId": QUERY_RUN},
        "job": query_job,
    }
    batch_job = {"namespace": "lake", "name": "app.stream.clicks.batch"}
    for batch in range(batches):
        run_id = str(uuid.UUID(int=(1 << 64) + batch))
        read = {
            "namespace": "file",
            "name": INBOX,
            "inputFacets": {
                "subset": {
                    "_producer": PRODUCER,
                    "_schemaURL": SUBSET,
                    "inputCondition": {
                        "type": "location",
                        "locations": [f"file:{INBOX}/part-{batch:06d}.json"],
                    },
                }
            },
        }
        written = {
            "namespace": "file",
            "name": OUT,
            "outputFacets": {
                "subset": {
                    "_producer": PRODUCER,
                    "_schemaURL": SUBSET,
                    "outputCondition": {
                        "type": "partition",
                        "partitions": [
                            {"identifier": f"day={_day(batch)}", "dimensions": {"day": _day(batch)}}
                        ],
                    },
                }
            },
        }
        for kind, at in (("START", 0.1), ("COMPLETE", 0.6)):
            event = _event(kind, batch + at, run_id, batch_job, {"parent": parent})
            event["inputs"], event["outputs"] = [read], [written]
            yield event
    yield _event("COMPLETE", batches + 1, QUERY_RUN, query_job)


def _event(
    kind: str,
    minute: float,
    run_id: str,
    job: dict[str, str],
    facets: dict[str, object] | None = None,
) -> dict[str, object]:
    return {
        "eventType": kind,
        "eventTime": _time(minute),
        "producer": PRODUCER,
        "schemaURL": SCHEMA,
        "run": {"runId": run_id, **({"facets": facets} if facets else {})},
        "job": job,
        "inputs": [],
        "outputs": [],
    }


def database(batches: int) -> Path:
    folder = Path(tempfile.gettempdir()) / f"ol-subset-stream-history-{batches}"
    db = folder / "lineage.db"
    if db.exists():
        return db
    folder.mkdir(exist_ok=True)
    source = folder / "events.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for event in events(batches):
            out.write(json.dumps(event) + "\n")
    began = time.perf_counter()
    report = ingest([source], db)
    took = time.perf_counter() - began
    print(f"ingested {report.stored} events in {took:.0f} s ({report.stored / took:,.0f}/s)")
    source.unlink()
    return db


def timed(repeat: int, work: Callable[[], object]) -> tuple[float, object]:
    seconds, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = work()
        seconds.append(time.perf_counter() - began)
    return statistics.median(seconds) * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=525_600)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    db = database(args.batches)
    middle = args.batches // 2
    bad = f"{INBOX}/part-{middle:06d}.json"
    with Lineage(db) as lineage:
        checks: list[tuple[str, Callable[[], object]]] = [
            ("the query run's page, newest batches", lambda: lineage.run_details(QUERY_RUN)),
            (
                "the query run's page, batches before mid-history",
                lambda: lineage.run_details(QUERY_RUN, before=_time(middle)),
            ),
            ("the runs listing (latest 100)", lambda: lineage.runs(RunsQuery(limit=100))),
        ]
        for name, work in checks:
            ms, _ = timed(args.repeat, work)
            print(f"{ms:9.1f} ms  {name}")
        details = lineage.run_details(QUERY_RUN, before=_time(middle))
        assert details is not None and details.children_older is not None
        older = details.children_older
        ms, _ = timed(args.repeat, lambda: lineage.run_details(QUERY_RUN, before=older))
        print(f"{ms:9.1f} ms  the page after that one")
    ms, answer = timed(args.repeat, lambda: impact(db, INBOX, location=bad))
    runs = answer.as_json()["runs"]  # type: ignore[attr-defined]
    print(f"{ms:9.1f} ms  impact of one bad file of the inbox: {len(runs)} run(s)")
    day = {"day": _day(middle)}
    ms, answer = timed(args.repeat, lambda: history(db, OUT, partition=day))
    entries = answer.as_json()["entries"]  # type: ignore[attr-defined]
    writes = sum(entry["direction"] == "write" for entry in entries)
    print(f"{ms:9.1f} ms  history of one written day: {writes} batch(es) wrote it")
    ms, answer = timed(args.repeat, lambda: impact(db, OUT, partition=day))
    runs = answer.as_json()["runs"]  # type: ignore[attr-defined]
    print(f"{ms:9.1f} ms  impact of one written day: {len(runs)} run(s) read it")
    ms, answer = timed(args.repeat, lambda: provenance(db, OUT, partition=day))
    writers = answer.as_json()["writers"]  # type: ignore[attr-defined]
    print(f"{ms:9.1f} ms  provenance of one written day: {len(writers)} writer(s) behind it")


if __name__ == "__main__":
    main()
