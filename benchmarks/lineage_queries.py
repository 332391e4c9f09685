"""Answers and times of a fixed set of lineage queries on a database of the pipeline of
``benchmarks/lineage.py`` (``python benchmarks/lineage_queries.py --db DB --make --countries 300``
makes one), to check that a change to the queries keeps every answer identical and to see what
it saves.

    python benchmarks/lineage_queries.py --db lineage.db --save answers.json
    python benchmarks/lineage_queries.py --db lineage.db --compare answers.json

It prints, for each query, the median wall time and the median CPU time (``time.process_time``,
this process only: steadier than wall time on a shared machine) of ``--rounds`` calls, each on a
new connection (as the CLI and the service answer one click). ``--save`` writes the answers'
JSON; ``--compare`` reads such a file and exits 1, naming the queries, when an answer differs.
The answers are kept as text meanwhile, and a round does not hold the answer of the one before:
kept as objects (a provenance answer here is 1.5 MB of JSON), they made the garbage
collector's full passes cost 20 to 37 ms each, counted in whichever later query they fell in.
``--make`` first writes the pipeline's events (``--days``, ``--countries``) and ingests them
into ``--db`` (when it does not exist yet).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import lineage as pipeline  # benchmarks/lineage.py: the synthetic history

from openlineage_subset.lineage import impact, ingest, provenance


def queries(days: int) -> dict[str, Callable[[str], Any]]:
    """The queries, by name: impact and provenance of partitions the pipeline's days make
    interesting (a filter on a non-partition column, the rolling window, the last day)."""
    first = pipeline.FIRST_DAY
    middle = first + dt.timedelta(days=pipeline.start_day(days))
    last = first + dt.timedelta(days=days - 1)
    scored = first + dt.timedelta(days=44 + 45 * ((days // 2 - 44) // 45))
    code = pipeline.CODES[0]

    def part(day: dt.date, country: str = code) -> dict[str, str]:
        return {"business_date": day.isoformat(), "country": country}

    return {
        "impact raw/events middle": lambda db: impact(db, "raw/events", partition=part(middle)),
        "impact agg/daily middle": lambda db: impact(db, "agg/daily", partition=part(middle)),
        "impact clean/events day": lambda db: impact(
            db, "clean/events", partition={"business_date": middle.isoformat()}
        ),
        "impact raw/events depth 2": lambda db: impact(
            db, "raw/events", partition=part(middle), depth=2
        ),
        "provenance reports/daily last": lambda db: provenance(
            db, "reports/daily", partition=part(last)
        ),
        "provenance reports/daily scored": lambda db: provenance(
            db, "reports/daily", partition=part(scored, pipeline.CODES[1])
        ),
        "provenance features/rolling7 middle": lambda db: provenance(
            db, "features/rolling7", partition=part(middle)
        ),
        "provenance reports/daily depth 2": lambda db: provenance(
            db, "reports/daily", partition=part(middle), depth=2
        ),
    }


def timed(function: Callable[[], Any], rounds: int) -> tuple[Any, float, float]:
    """The last answer, the median wall seconds and the median CPU seconds of ``rounds`` calls."""
    walls, cpus = [], []
    answer = None
    for _ in range(rounds):
        answer = None  # a click does not hold the answer of the one before
        wall, cpu = time.perf_counter(), time.process_time()
        answer = function()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return answer, statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="the lineage database")
    parser.add_argument("--days", type=int, default=1095, help="business dates (default 1095)")
    parser.add_argument("--countries", type=int, default=30, help="countries, with --make")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds of each query")
    parser.add_argument("--make", action="store_true", help="make the database first")
    parser.add_argument("--save", help="write the answers' JSON to this file")
    parser.add_argument("--compare", help="compare the answers with this file's")
    args = parser.parse_args()
    if args.make and not Path(args.db).exists():
        with tempfile.TemporaryDirectory() as folder:
            events = Path(folder, "events.jsonl")
            pipeline.write_history(events, pipeline.history(args.days, args.countries, 10))
            began, cpu = time.perf_counter(), time.process_time()
            report = ingest([events], args.db)
            print(
                f"ingested {report.stored:,} events in {time.perf_counter() - began:.1f} s "
                f"({time.process_time() - cpu:.1f} s CPU in this process)"
            )
    texts = {}  # as text: see above
    print(f"{'query':40} {'wall ms':>9} {'CPU ms':>9}  (median of {args.rounds})")
    for name, query in queries(args.days).items():
        answer, wall, cpu = timed(lambda query=query: query(args.db), args.rounds)
        texts[name] = json.dumps(answer.as_json())
        del answer
        print(f"{name:40} {wall * 1000:9.1f} {cpu * 1000:9.1f}")
    answers = {name: json.loads(text) for name, text in texts.items()}
    if args.save:
        Path(args.save).write_text(json.dumps(answers, indent=1, sort_keys=True), "utf-8")
    if args.compare:
        before = json.loads(Path(args.compare).read_text("utf-8"))
        differ = [name for name in answers if before.get(name) != answers[name]]
        differ += [name for name in before if name not in answers]
        if differ:
            print("answers differ: " + "; ".join(differ))
            sys.exit(1)
        print(f"all {len(answers)} answers identical to {args.compare}'s")


if __name__ == "__main__":
    main()
