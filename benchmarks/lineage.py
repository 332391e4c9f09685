"""Partition lineage at the size of three years of a daily pipeline: ingest, impact, provenance.

Writes the synthetic history of a 5-stage daily pipeline over ``--days`` business dates (default
1,095: three years from 2022-01-01) and ``--countries`` countries (default 30) as JSON Lines,
in this package's shape (START lists the outputs without their subset facet, COMPLETE or FAIL
has it). Each business date is processed the next morning, one stage after the other:

1. ``ingest``: reads ``landing/events`` (a location condition: that day's folder) and writes
   ``raw/events``, partitioned by (business_date, country): the day's partitions, one per
   country;
2. ``clean``: reads that day's ``raw/events`` partitions (a partition list), writes
   ``clean/events``, the same partitions;
3. ``aggregate``: reads that day's ``clean/events`` partitions, writes ``agg/daily``; one date in
   30 it reads ``clean/events`` with a filter on a non-partition column as well
   (``... AND amount > 0``), which the queries can only call *possible*;
4. ``rolling``: reads a trailing 7-day window of ``agg/daily`` (``business_date BETWEEN d - 6
   AND d``, a range like "the last 24 hourly partitions"), writes ``features/rolling7``;
5. ``report``: reads that day's ``features/rolling7`` partitions, writes ``reports/daily``; one
   date in 45 it reads ``business_date = d AND score > 0.9`` instead (a non-partition filter).

About one run in 200 fails (FAIL event, outputs without facet) and is run again. The default
size is 5,475 successful runs (about 5,500 with the failed ones, 11,000 events) writing 164,250
partitions.

Then it prints, from one run: the events and the file's size; the ingest rate (events stored per
second, into a new database) with ``jobs`` one per CPU (``ingest()``'s default for a large input:
this process checks events and stores them, one worker process per other CPU checks events), and
with ``jobs=1`` (all in this process), with the CPU time each took per event and the machine's
load; the peak memory of an ingest in a child process, of this file and of a file of its first
tenth, with the same number of workers (streamed: the peak does not grow with the file); the
median time of ``impact`` from one
``raw/events`` partition (the middle date, first country) through all 5 stages, and of
``provenance`` of one ``reports/daily`` partition; then the naive way to answer the same impact:
re-reading the events file into a new temporary database and asking there (what a tool without
a stored index does every time), and the ratio of the two. Query times are wall time, with the
CPU time of this process (``time.process_time``) beside them: on a shared machine the CPU time
says more about the query, the wall time about the machine.

The same history in openlineage-spark's shape (``--shape openlineage-spark``; ``--shape both``,
the default, measures both from one run and prints the ratios, openlineage-spark's / ours):
the same partitions written and read, as openlineage-spark 1.39+ names them: the dataset name
trimmed to the table's root and a ``location`` subset condition listing the untrimmed paths
(``raw/events/business_date=D/country=C``; a day's landing folder ``landing/events/Y/M/D``), on
inputs and outputs, on every event of a run; a filter on another column is not in it (Spark
does not say it), a rolling window lists its days' directories.

``--ingest-only`` stops after the ingests: for the cost of ingest of old and new code back to
back, run it with each checkout's ``src`` and ``generated`` first on PYTHONPATH, or give
``--against OTHER_CHECKOUT``, which runs the other checkout's ingest in a child process before
and after this one's, alternating, ``--rounds`` times.

``--chunk-events N`` is for histories too large for one file (ten million events would be 13
GB): the events are made as they are ingested, N to a small file, one ingest each (the making
of the files is not timed), into one database; then the same questions are asked. It prints the
database's bytes per event and this process's peak memory, and runs neither ``jobs=1`` nor the
child processes; ``--keep DIR`` makes the database in DIR and keeps it, for
``benchmarks/pages.py --db``. The naive re-read is skipped for more than ``--naive-up-to``
events (300,000 by default: it took 230 s at a million).

Targets: ingest at least 10,000 events/s; impact at most 100 ms; the naive re-read at least
100x slower than impact; peak memory bounded (about the same for the whole file and a tenth);
impact and provenance on openlineage-spark's shape within 2x of ours.

    python benchmarks/lineage.py [--days 1095] [--countries 30] [--rounds 5] [--seed 10]
        [--shape ours|openlineage-spark|both] [--ingest-only] [--against CHECKOUT]
        [--chunk-events N [--keep DIR]] [--naive-up-to EVENTS]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from openlineage_subset.lineage import impact, ingest, provenance

PRODUCER = "https://github.com/openlineage-subset/openlineage-subset/tree/0.1.0/benchmarks"
CORE_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
FACETS_URL = "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json#/$defs/"
NAMESPACE = "s3://lake"
FIRST_DAY = dt.date(2022, 1, 1)
CODES = [a + b for a in string.ascii_uppercase for b in string.ascii_uppercase]
FAILURE_RATE = 0.005
STAGE_MINUTES = 20
"""Stage k of a date starts 20 k minutes after 01:00 the next day; a run takes 5 minutes, a
failed attempt 2, and its retry starts 6 minutes into the slot."""
MB = 1024 * 1024
SPARK_SHAPE = "openlineage-spark"
SHAPES = ("ours", SPARK_SHAPE)

Json = dict[str, Any]
T = TypeVar("T")


def _time(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _partitions(day: str, countries: Sequence[str]) -> Json:
    return {
        "type": "partition",
        "partitions": [
            {
                "dimensions": {"business_date": day, "country": country},
                "identifier": f"business_date={day}/country={country}",
            }
            for country in countries
        ],
    }


def _compare(column: str, comparison: str, value: str) -> Json:
    return {
        "type": "compare",
        "left": {"type": "field", "field": column},
        "right": {"type": "literal", "value": value},
        "comparison": comparison,
    }


def _and(left: Json, right: Json) -> Json:
    return {"type": "binary", "operator": "AND", "left": left, "right": right}


def _dataset(name: str, condition: Json | None, role: str) -> Json:
    dataset: Json = {"namespace": NAMESPACE, "name": name}
    if condition is not None:
        place, key, kind = (
            ("inputFacets", "inputCondition", "InputSubsetInputDatasetFacet")
            if role == "input"
            else ("outputFacets", "outputCondition", "OutputSubsetOutputDatasetFacet")
        )
        facet = {"_producer": PRODUCER, "_schemaURL": FACETS_URL + kind, key: condition}
        dataset[place] = {"subset": facet}
    return dataset


def _event(
    kind: str,
    moment: dt.datetime,
    run_id: str,
    job: str,
    *,
    reads: list[tuple[str, Json]],
    writes: list[tuple[str, Json | None]],
) -> Json:
    return {
        "eventType": kind,
        "eventTime": _time(moment),
        "producer": PRODUCER,
        "schemaURL": CORE_URL,
        "run": {"runId": run_id},
        "job": {"namespace": "pipeline", "name": job},
        "inputs": [_dataset(name, condition, "input") for name, condition in reads],
        "outputs": [_dataset(name, condition, "output") for name, condition in writes],
    }


def _stage(index: int, day: dt.date, countries: Sequence[str]) -> tuple[str, list[Any], list[Any]]:
    """Stage ``index`` (1 to 5) of business date ``day``: job name, reads, writes."""
    text = day.isoformat()
    todays = _partitions(text, countries)
    if index == 1:
        folder = f"s3://landing/events/{day:%Y/%m/%d}"
        location = {"type": "location", "locations": [folder]}
        return "ingest", [("landing/events", location)], [("raw/events", todays)]
    if index == 2:
        return "clean", [("raw/events", todays)], [("clean/events", todays)]
    if index == 3:
        day_number = (day - FIRST_DAY).days
        read = (
            _and(todays, _compare("amount", "GREATER_THAN", "0"))
            if day_number % 30 == 29
            else todays
        )
        return "aggregate", [("clean/events", read)], [("agg/daily", todays)]
    if index == 4:
        first = (day - dt.timedelta(days=6)).isoformat()
        window = _and(
            _compare("business_date", "GREATER_EQUAL_THAN", first),
            _compare("business_date", "LESS_EQUAL_THAN", text),
        )
        return "rolling", [("agg/daily", window)], [("features/rolling7", todays)]
    day_number = (day - FIRST_DAY).days
    read = (
        _and(_compare("business_date", "EQUAL", text), _compare("score", "GREATER_THAN", "0.9"))
        if day_number % 45 == 44
        else todays
    )
    return "report", [("features/rolling7", read)], [("reports/daily", todays)]


def _spark_days(condition: Json) -> list[str]:
    """The business dates a condition of ours on business_date selects (an equality, or a
    range between two comparisons), found in its comparisons."""
    found: dict[str, str] = {}
    pending = [condition]
    while pending:
        node = pending.pop()
        if node["type"] == "binary":
            pending += [node["left"], node["right"]]
        elif node["type"] == "compare" and node["left"].get("field") == "business_date":
            found[node["comparison"]] = node["right"]["value"]
    if "EQUAL" in found:
        return [found["EQUAL"]]
    first = dt.date.fromisoformat(found["GREATER_EQUAL_THAN"])
    last = dt.date.fromisoformat(found["LESS_EQUAL_THAN"])
    return [(first + dt.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]


def spark_shaped(name: str, condition: Json, countries: Sequence[str]) -> Json:
    """``condition`` of ours on dataset ``name`` as openlineage-spark sends it: a location
    condition listing the untrimmed paths of the partitions selected (a filter on another
    column dropped: Spark does not say it; a date range as its days' directories)."""
    kind = condition["type"]
    if kind == "location":  # the landing folder: s3://landing/events/Y/M/D
        paths = [path.removeprefix("s3://") for path in condition["locations"]]
    elif kind == "partition":
        paths = [f"{name}/{item['identifier']}" for item in condition["partitions"]]
    elif condition["left"]["type"] == "partition":  # partitions AND another column's filter
        return spark_shaped(name, condition["left"], countries)
    else:
        paths = [
            f"{name}/business_date={day}/country={country}"
            for day in _spark_days(condition)
            for country in countries
        ]
    return {"type": "location", "locations": paths}


def history(days: int, countries: int, seed: int, shape: str = "ours") -> Iterator[Json]:
    """The pipeline's events, in time order, in ``shape`` (ours or openlineage-spark's)."""
    chooser = random.Random(seed)
    names = CODES[:countries]
    serial = 0
    for number in range(days):
        day = FIRST_DAY + dt.timedelta(days=number)
        morning = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(1, 0))
        for index in range(1, 6):
            job, reads, writes = _stage(index, day, names)
            slot = morning + dt.timedelta(minutes=STAGE_MINUTES * (index - 1))
            unannounced = [(name, None) for name, _ in writes]
            if shape == SPARK_SHAPE:  # the same datasets, with their facets, on every event
                reads = [(name, spark_shaped(name, cond, names)) for name, cond in reads]
                writes = unannounced = [
                    (name, spark_shaped(name, cond, names)) for name, cond in writes
                ]
            if chooser.random() < FAILURE_RATE:
                serial += 1
                failed = f"00000000-0000-4000-8000-{serial:012d}"
                for kind, minutes in (("START", 0), ("FAIL", 2)):
                    moment = slot + dt.timedelta(minutes=minutes)
                    yield _event(kind, moment, failed, job, reads=reads, writes=unannounced)
                slot += dt.timedelta(minutes=6)
            serial += 1
            run_id = f"00000000-0000-4000-8000-{serial:012d}"
            yield _event("START", slot, run_id, job, reads=reads, writes=unannounced)
            end = slot + dt.timedelta(minutes=5)
            yield _event("COMPLETE", end, run_id, job, reads=reads, writes=writes)


def write_history(path: Path, events: Iterator[Json]) -> tuple[int, int]:
    """Write the events as JSON Lines; (events, partitions written by completed runs)."""
    count = written = 0
    with path.open("w", encoding="utf-8") as out:
        for event in events:
            out.write(json.dumps(event, separators=(",", ":")) + "\n")
            count += 1
            if event["eventType"] == "COMPLETE":
                for dataset in event["outputs"]:
                    condition = dataset["outputFacets"]["subset"]["outputCondition"]
                    written += len(condition.get("partitions") or condition["locations"])
    return count, written


def timed(function: Callable[[], T], rounds: int) -> tuple[T, float]:
    """The last answer and the median seconds of ``rounds`` calls; the median CPU seconds of
    this process (``time.process_time``, steadier on a shared machine) in :data:`CPU`."""
    times, cpus = [], []
    answer: T | None = None
    for _ in range(rounds):
        start, cpu = time.perf_counter(), time.process_time()
        answer = function()
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    assert answer is not None
    CPU[function] = statistics.median(cpus)
    return answer, statistics.median(times)


CPU: dict[Callable[[], Any], float] = {}
"""The median CPU seconds of the calls :func:`timed` timed, by function."""


def child_peak(events: Path, db: Path, jobs: int) -> tuple[float, float]:
    """Peak resident memory (MB) of a child process ingesting ``events`` into ``db`` with
    ``jobs``, and the largest of its worker processes' (0 without workers)."""
    code = (
        "import resource, sys; from openlineage_subset.lineage import ingest; "
        "ingest([sys.argv[1]], sys.argv[2], jobs=int(sys.argv[3])); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(events), str(db), str(jobs)],
        capture_output=True,
        text=True,
        check=True,
    )
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KB on Linux
    own, workers = (int(value) * scale / MB for value in done.stdout.split())
    return own, workers


def timed_ingest(events: Path, db: Path, jobs: int | None) -> tuple[Any, float, float, float]:
    """The report of an ingest into a new database, its seconds, and the CPU seconds of this
    process and of the worker processes it started."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    began, cpu = time.perf_counter(), time.process_time()
    report = ingest([events], db, jobs=jobs)
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    return report, seconds, cpu, workers


def start_day(days: int) -> int:
    """The business date (its number) whose ``raw/events`` partition the impact starts from:
    near the middle, one whose aggregate reads with a filter on ``amount`` and whose report
    with one on ``score`` (number 89 modulo 90), so that the answer has possible runs."""
    middle = days // 2
    return 89 + 90 * ((middle - 89) // 90) if middle >= 89 else middle


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=1095, help="business dates (default 1095)")
    parser.add_argument("--countries", type=int, default=30, help="countries (default 30)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds of each query")
    parser.add_argument("--seed", type=int, default=10, help="seed of the failed runs")
    parser.add_argument(
        "--shape",
        choices=[*SHAPES, "both"],
        default="both",
        help="the events' shape: ours, openlineage-spark's, or both compared (default)",
    )
    parser.add_argument("--ingest-only", action="store_true", help="stop after the ingests")
    parser.add_argument(
        "--chunk-events",
        type=int,
        metavar="N",
        help="make the events as they are ingested, N to a file (no file of the whole history)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="with --chunk-events: make the database in DIR and keep it (benchmarks/pages.py --db)",
    )
    parser.add_argument(
        "--naive-up-to",
        type=int,
        default=300_000,
        metavar="EVENTS",
        help="skip the naive re-read of a larger history (default 300000)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help="ingest-only runs of CHECKOUT's code and this one's, alternating, --rounds times",
    )
    return parser.parse_args()


def _copy_head(source_file: Path, copy: Path, lines: int) -> None:
    """Copy the first ``lines`` lines of ``source_file`` to ``copy``."""
    with source_file.open("rb") as source, copy.open("wb") as out:
        for number, line in enumerate(source):
            if number >= lines:
                break
            out.write(line)


def _impact_summary(affected: Any) -> str:
    """The runs an impact answer names, by label and status, their jobs and the backfill."""
    runs = affected.runs
    definite = sum(run.label == "definite" for run in runs)
    stopped = sum(run.run.status != "COMPLETE" for run in runs)
    backfill = sum(len(part.definite) + len(part.possible) for part in affected.backfill)
    jobs = ", ".join(sorted({run.run.job_name for run in runs}))
    if not runs:
        return f"  no run affected (seen: {affected.seen}); nothing to recompute"
    return (
        f"  {len(runs)} runs ({definite} definite, {len(runs) - definite} possible, "
        f"{stopped} not completed) of {jobs}; {backfill} partitions to recompute"
    )


def _print_peaks(cpus: int, whole: tuple[float, float], tenth: tuple[float, float]) -> None:
    """The peak memory of ingesting the file and its first tenth: (this process, a worker)."""
    workers = f" + {cpus - 1} worker(s) of {{:,.0f}} MB at most" if cpus > 1 else ""
    print(
        f"peak memory:        {whole[0]:12,.0f} MB RSS of an ingest of the file in a child process"
        + workers.format(whole[1])
    )
    print(
        f"                    {tenth[0]:12,.0f} MB RSS of one of its first tenth"
        + workers.format(tenth[1])
    )


def _ingest_both(events_file: Path, folder: Path, cpus: int) -> Ingests:
    """Ingest ``events_file`` into new databases with ``jobs`` one per CPU and with one."""
    load = os.getloadavg()[0]
    report, seconds, main_cpu, worker_cpu = timed_ingest(events_file, folder / "lineage.db", cpus)
    assert report.invalid == 0 and report.stored > 0, report.summary()
    alone, alone_seconds, alone_cpu, _ = timed_ingest(events_file, folder / "1.db", 1)
    assert alone.as_json() == report.as_json(), "one process stored otherwise"
    return Ingests(report, load, seconds, main_cpu, worker_cpu, alone_seconds, alone_cpu)


class Ingests(NamedTuple):
    report: Any
    load: float
    seconds: float
    main_cpu: float
    worker_cpu: float
    alone_seconds: float
    alone_cpu: float

    def print(self, events: int, cpus: int) -> None:
        print(f"ingest:             {events / self.seconds:12,.0f} events/s ({self.seconds:.2f} s)")
        print(
            f"  jobs={cpus} on {cpus} CPUs: {cpus - 1} worker process(es) checking events, this "
            f"one checking and storing (load average {self.load:.1f} before); CPU per event: "
            f"{self.main_cpu / events * 1e6:.0f} us here, "
            f"{self.worker_cpu / events * 1e6:.0f} us in workers"
        )
        print(
            f"  one process (jobs=1): {events / self.alone_seconds:,.0f} events/s "
            f"({self.alone_seconds:.2f} s, {self.alone_cpu / events * 1e6:.0f} us CPU per event)"
        )


def chunked_ingest(
    events: Iterator[Json], db: Path, folder: Path, size: int, cpus: int
) -> tuple[int, int, float]:
    """Ingest ``events`` into ``db`` ``size`` at a time, each chunk written to a file of its
    own just before (and removed after): the events, their bytes, and the seconds the ingests
    took (the making and writing of the files left out)."""
    count = size_bytes = 0
    seconds = 0.0
    chunk = folder / "chunk.jsonl"
    while True:
        # Written as they are made: a chunk's lines are never all held (this process's peak
        # is ingest's, not the chunk's).
        with chunk.open("w", encoding="utf-8") as out:
            lines = sum(
                out.write(json.dumps(event, separators=(",", ":")) + "\n") > 0
                for event in islice(events, size)
            )
        if not lines:
            chunk.unlink()
            return count, size_bytes, seconds
        count += lines
        size_bytes += chunk.stat().st_size
        began = time.perf_counter()
        report = ingest([chunk], db, jobs=cpus)
        seconds += time.perf_counter() - began
        assert report.invalid == 0 and report.stored == lines, report.summary()
        chunk.unlink()


def _measure_chunked(
    shape: str, args: argparse.Namespace, folder: Path, cpus: int
) -> dict[str, float]:
    """:func:`_measure` for a history too large for a file: ingested as it is made
    (``--chunk-events``), one ingest per chunk, then asked; no run with ``jobs=1``, no child
    process's peak (this process's is printed), no naive re-read."""
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    db = (args.keep or folder) / "lineage.db"
    events, size, seconds = chunked_ingest(
        history(args.days, args.countries, args.seed, shape), db, folder, args.chunk_events, cpus
    )
    stored = db.stat().st_size
    scale = 1 if sys.platform == "darwin" else 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / MB
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale / MB
    print(f"shape: {shape}; history: {args.days:,} dates x {args.countries} countries, 5 stages")
    print(f"events:             {events:12,} ({size / MB:,.0f} MB as JSON Lines)")
    print(
        f"ingest:             {events / seconds:12,.0f} events/s ({seconds:.0f} s, "
        f"{size / MB / seconds:,.1f} MB/s; {args.chunk_events:,} events an ingest, jobs={cpus})"
    )
    print(f"database:           {stored / MB:12,.0f} MB ({stored / events:,.0f} bytes an event)")
    print(f"peak memory:        {peak:12,.0f} MB RSS here, {workers:,.0f} MB a worker at most")
    start, target = _questions(args.days)
    affected, impact_seconds = timed(lambda: impact(db, "raw/events", partition=start), args.rounds)
    origin, provenance_seconds = timed(
        lambda: provenance(db, "reports/daily", partition=target), args.rounds
    )
    print(f"impact:             {impact_seconds * 1000:12,.1f} ms (median of {args.rounds})")
    print(_impact_summary(affected))
    print(f"provenance:         {provenance_seconds * 1000:12,.1f} ms (median of {args.rounds})")
    print(f"  {_count_steps(origin.writers)} writer steps")
    return {
        "rate": events / seconds,
        "impact_ms": impact_seconds * 1000,
        "provenance_ms": provenance_seconds * 1000,
        "impact_runs": len(affected.runs),
        "provenance_steps": _count_steps(origin.writers),
    }


def _questions(days: int) -> tuple[dict[str, str], dict[str, str]]:
    """The partition impact starts from and the one provenance asks about."""
    first = FIRST_DAY + dt.timedelta(days=start_day(days))
    last = FIRST_DAY + dt.timedelta(days=days - 1)
    return (
        {"business_date": first.isoformat(), "country": CODES[0]},
        {"business_date": last.isoformat(), "country": CODES[0]},
    )


def _measure(shape: str, args: argparse.Namespace, folder: Path, cpus: int) -> dict[str, float]:
    """Write the history in ``shape``, ingest it, ask it; print what was measured and return
    the figures the shapes are compared by."""
    if args.chunk_events:
        return _measure_chunked(shape, args, folder, cpus)
    start, target = _questions(args.days)
    events_file = folder / "events.jsonl"
    history_events = history(args.days, args.countries, args.seed, shape)
    events, written = write_history(events_file, history_events)
    size = events_file.stat().st_size
    print(f"shape: {shape}; history: {args.days:,} dates x {args.countries} countries, 5 stages")
    print(f"events:             {events:12,}")
    print(f"partitions written: {written:12,} (by completed runs)")
    print(f"file size:          {size / MB:12,.1f} MB")
    done = _ingest_both(events_file, folder, cpus)
    assert done.report.stored == events, done.report.summary()
    done.print(events, cpus)
    figures = {"alone_cpu_us": done.alone_cpu / events * 1e6, "rate": events / done.seconds}
    if args.ingest_only:
        return figures
    tenth = folder / "tenth.jsonl"
    _copy_head(events_file, tenth, events // 10)
    peak = child_peak(events_file, folder / "peak.db", cpus)
    _print_peaks(cpus, peak, child_peak(tenth, folder / "peak_tenth.db", cpus))
    db = folder / "lineage.db"

    def impact_query() -> Any:
        return impact(db, "raw/events", partition=start)

    def provenance_query() -> Any:
        return provenance(db, "reports/daily", partition=target)

    affected, impact_seconds = timed(impact_query, args.rounds)
    origin, provenance_seconds = timed(provenance_query, args.rounds)

    def naive() -> Any:
        with tempfile.TemporaryDirectory() as scratch:
            fresh = Path(scratch, "lineage.db")
            ingest([events_file], fresh)
            return impact(fresh, "raw/events", partition=start)

    naive_rounds = max(1, args.rounds // 2)
    rounds = f"median of {args.rounds}"
    naive_seconds = None
    if events <= args.naive_up_to:
        again, naive_seconds = timed(naive, naive_rounds)
        assert again.as_json() == affected.as_json(), "the naive answer differs"
    print(
        f"impact:             {impact_seconds * 1000:12,.1f} ms ({rounds}; CPU "
        f"{CPU[impact_query] * 1000:,.1f} ms)"
    )
    print(f"  of raw/events business_date={start['business_date']}/country={start['country']}")
    print(_impact_summary(affected))
    print(
        f"provenance:         {provenance_seconds * 1000:12,.1f} ms ({rounds}; CPU "
        f"{CPU[provenance_query] * 1000:,.1f} ms)"
    )
    print(f"  of reports/daily business_date={target['business_date']}/country={target['country']}")
    print(f"  {_count_steps(origin.writers)} writer steps")
    if naive_seconds is None:
        print(f"naive impact:       skipped (more than {args.naive_up_to:,} events)")
    else:
        print(f"naive impact:       {naive_seconds * 1000:12,.1f} ms (median of {naive_rounds})")
        print("  re-reading the events file into a new temporary database, then asking there")
        print(f"naive / impact:     {naive_seconds / impact_seconds:12,.0f}x")
    return {
        **figures,
        "impact_ms": impact_seconds * 1000,
        "impact_cpu_ms": CPU[impact_query] * 1000,
        "provenance_ms": provenance_seconds * 1000,
        "provenance_cpu_ms": CPU[provenance_query] * 1000,
        "impact_runs": len(affected.runs),
        "provenance_steps": _count_steps(origin.writers),
    }


RATIOS = {
    "alone_cpu_us": "ingest CPU per event, one process",
    "rate": "ingest events/s, jobs one per CPU",
    "impact_ms": "impact, wall",
    "impact_cpu_ms": "impact, CPU",
    "provenance_ms": "provenance, wall",
    "provenance_cpu_ms": "provenance, CPU",
}


def _against(args: argparse.Namespace, other: Path) -> None:
    """The ingest-only measure of the checkout ``other`` and of this one, in child processes
    one after the other, ``--rounds`` times: old and new code back to back on the same
    events (this file makes them in both)."""
    here = Path(__file__).resolve().parent.parent
    shapes = SHAPES if args.shape == "both" else (args.shape,)
    for number in range(args.rounds):
        for label, checkout in (("other", other.resolve()), ("this", here)):
            paths = [str(checkout / "src"), str(checkout / "generated")]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
            for shape in shapes:
                command = [sys.executable, __file__, "--ingest-only", "--shape", shape]
                command += ["--days", str(args.days), "--countries", str(args.countries)]
                command += ["--seed", str(args.seed)]
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
                lines = [line for line in done.stdout.splitlines() if "events/s" in line]
                print(f"round {number + 1}, {label} ({checkout}), {shape}:")
                print("\n".join(lines))


def main() -> None:
    args = _arguments()
    assert args.days >= 7 and 1 <= args.countries <= len(CODES)
    if args.against is not None:
        _against(args, args.against)
        return
    cpus = os.cpu_count() or 1  # jobs: ingest()'s default for 8 MB of input or more
    shapes = SHAPES if args.shape == "both" else (args.shape,)
    measured = {}
    for shape in shapes:
        with tempfile.TemporaryDirectory() as folder:
            measured[shape] = _measure(shape, args, Path(folder), cpus)
        print()
    if len(measured) == 2:
        print("openlineage-spark's shape / ours (target for impact and provenance: 2x at most)")
        for key, what in RATIOS.items():
            if key in measured["ours"]:
                ratio = measured[SPARK_SHAPE][key] / measured["ours"][key]
                print(f"  {what:36} {ratio:6.2f}")
        answers = {
            shape: (m.get("impact_runs"), m.get("provenance_steps"))
            for shape, m in measured.items()
        }
        if not args.ingest_only and answers["ours"] != answers[SPARK_SHAPE]:
            (runs, steps), (spark_runs, spark_steps) = answers["ours"], answers[SPARK_SHAPE]
            print(
                f"  the answers differ (impact: {runs} runs in ours, {spark_runs} in "
                f"openlineage-spark's; provenance: {steps} writer steps, {spark_steps}): "
                "the query ratios compare unlike answers"
            )


def _count_steps(steps: Sequence[Any]) -> int:
    return sum(1 + sum(_count_steps(read.writers) for read in step.inputs) for step in steps)


if __name__ == "__main__":
    main()
