"""``ol-subset lineage serve`` under load, and killed mid-stream.

Starts the real server (``python -m openlineage_subset lineage serve --port 0`` on 127.0.0.1,
read from its ``ready:`` line, stopped by its pid), over a new database, and sends it the first
``--events`` (default 20,000) events of the pipeline history of ``benchmarks/lineage.py`` (a
5-stage daily pipeline; ``--countries`` partitions per write, default 10), split by run among
``--producers`` (default 4) processes. Each producer posts its events one after the other
through openlineage-python's ``HttpTransport`` (its retries off, so that every 5xx is seen),
while a reader in this process asks ``/api/v1/impact`` of one ``raw/events`` partition in a
loop. It prints:

- the events sent, acknowledged (2xx) and found in the database once the server stopped: each
  stored exactly once (every (runId, eventType) sent is there, nothing else is);
- the answers that were 5xx (target: none) or not answers at all;
- the throughput (events acknowledged per second, from the first post to the last answer;
  target: at least 2,000) and the median and 99th percentile latency of the posts;
- the CPU time per event of the server (with the queries) and of the producers: on a machine
  whose CPUs are all busy, the throughput is about the CPUs at hand divided by their sum (the
  bound printed), and never more than those CPUs divided by the producers' own (were the
  server free);
- the impact queries answered while the events arrived (the first are 400 until the dataset
  asked about was written), and their median and 99th percentile latency (target: p99 under
  200 ms).

Then the fault: a new database, the same events sent by ``--producers`` processes through the
project's own delivery (an ``Emitter`` with an outbox, sending through ``HttpTransport``); once
about ``--kill-at`` (default 40%) of them are stored, the server is killed with SIGKILL. The
producers close (what is not sent stays in their outboxes); the server is started again on the
same port over the same file, and ``ol-subset replay OUTBOX`` sends each outbox. It prints the
events acknowledged before the kill and how many of them the database had after it (target: all),
then the events stored after the replay (target: every event exactly once).

Both are from one run on whatever else the machine is doing: the load average is printed.

    python benchmarks/serve.py [--events 20000] [--producers 4] [--countries 10] [--kill-at 0.4]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import requests
from openlineage.client.transport.http import HttpConfig, HttpTransport

from openlineage_subset.delivery import Emitter, wire_event
from openlineage_subset.lineage import ingest

sys.path.insert(0, str(Path(__file__).parent))
from lineage import FIRST_DAY, history  # benchmarks/lineage.py, beside this file

Json = dict[str, Any]
_NO_RETRY = {"total": 0, "status_forcelist": [], "allowed_methods": ["POST"]}
_STARTUP_SECONDS = 60
_SERVE = [sys.executable, "-m", "openlineage_subset", "lineage", "serve"]


# --- the server ------------------------------------------------------------------------------


def start_server(db: Path, port: int = 0) -> tuple[subprocess.Popen[str], str]:
    """``lineage serve --db DB --port PORT`` as a child process, once it says it is ready."""
    process = subprocess.Popen(
        [*_SERVE, "--db", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    stdout = process.stdout
    found: list[str] = []
    reader = threading.Thread(target=lambda: found.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(_STARTUP_SECONDS)
    if not found or not found[0].startswith("ready: "):
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        raise SystemExit(f"lineage serve did not start: {found}")
    return process, found[0].removeprefix("ready: ").strip()


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process ``pid`` used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_server(process: subprocess.Popen[str], how: int = signal.SIGTERM) -> int:
    os.kill(process.pid, how)
    return process.wait(timeout=60)


def stored_keys(db: Path) -> Counter[tuple[str, str]]:
    """(runId, eventType) of every event in the database, with how often each is there."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        rows = connection.execute("SELECT run_id, event_type FROM events").fetchall()
    connection.close()
    return Counter((run_id, kind) for run_id, kind in rows)


def key(event: Json) -> tuple[str, str]:
    return event["run"]["runId"], event["eventType"]


def shares(events: Sequence[Json], producers: int) -> list[list[Json]]:
    """The events split among producers by run, each run's events in their order."""
    out: list[list[Json]] = [[] for _ in range(producers)]
    for event in events:
        out[int(event["run"]["runId"][-12:]) % producers].append(event)
    return out


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


# --- load ------------------------------------------------------------------------------------


def produce(url: str, events: list[Json], go: Any, results: Any) -> None:
    """Post each event through HttpTransport; report latencies, statuses and the time span."""
    transport = HttpTransport(HttpConfig(url=url, timeout=60, retry=_NO_RETRY))
    statuses: Counter[str] = Counter()
    latencies: list[float] = []
    go.wait()
    began, cpu = time.time(), time.process_time()
    for event in events:
        wired = wire_event(event)
        start = time.perf_counter()
        try:
            answer = transport.emit(wired)
            statuses[str(answer.status_code)] += 1
        except requests.HTTPError as error:
            statuses[str(error.response.status_code)] += 1
        except Exception as error:  # counted: no answer at all
            statuses[f"no answer ({type(error).__name__})"] += 1
        latencies.append(time.perf_counter() - start)
    results.put((began, time.time(), statuses, latencies, time.process_time() - cpu))


def ask_impact(url: str, query: str, stop: threading.Event, out: list[Any]) -> None:
    session = requests.Session()
    statuses: Counter[str] = Counter()
    latencies: list[float] = []
    while not stop.is_set():
        start = time.perf_counter()
        try:
            answer = session.get(url + "/api/v1/impact?" + query, timeout=60)
            answer.content  # noqa: B018  (read whole)
            statuses[str(answer.status_code)] += 1
        except requests.RequestException as error:
            statuses[f"no answer ({type(error).__name__})"] += 1
        latencies.append(time.perf_counter() - start)
    out.extend([statuses, latencies])


def load(events: list[Json], producers: int, folder: Path, query: str | None) -> None:
    db = folder / "load.db"
    server, url = start_server(db)
    server_cpu = cpu_seconds(server.pid)
    context = multiprocessing.get_context("fork")
    go, results = context.Event(), context.Queue()
    workers = [
        context.Process(target=produce, args=(url, share, go, results))
        for share in shares(events, producers)
    ]
    for worker in workers:
        worker.start()
    time.sleep(1.0)  # every producer imported and waiting
    stop, asked = threading.Event(), []
    reader = threading.Thread(target=ask_impact, args=(url, query, stop, asked))
    load_before = os.getloadavg()[0]
    if query is not None:
        reader.start()
    go.set()
    reports = [results.get() for _ in workers]
    server_cpu = cpu_seconds(server.pid) - server_cpu
    stop.set()
    if query is not None:
        reader.join()
    for worker in workers:
        worker.join()
    status = stop_server(server)
    found = stored_keys(db)

    statuses: Counter[str] = sum((report[2] for report in reports), Counter())
    posts = [latency for report in reports for latency in report[3]]
    span = max(report[1] for report in reports) - min(report[0] for report in reports)
    acked = sum(n for code, n in statuses.items() if code.startswith("2"))
    errors = sum(n for code, n in statuses.items() if code.startswith("5"))
    sent = Counter(key(event) for event in events)
    once = found == sent
    print(f"load: {len(events):,} events by {producers} producer processes (HttpTransport)")
    print(f"  server exit status {status}; load average {load_before:.1f} before")
    print(f"  answers: {dict(sorted(statuses.items()))}")
    print(f"  acknowledged (2xx):     {acked:8,}")
    print(f"  5xx answers:            {errors:8,}   (target: 0)")
    print(
        f"  in the database:        {sum(found.values()):8,}   each sent event exactly once: {once}"
    )
    rate = acked / span
    print(f"  throughput:             {rate:8,.0f} events/s over {span:.1f} s (target 2,000)")
    producers_cpu = sum(report[4] for report in reports)
    meanwhile = "with the impact queries" if query is not None else "no queries"
    print(
        f"  CPU per event:          {server_cpu / acked * 1e6:8,.0f} us in the server "
        f"({meanwhile}), {producers_cpu / acked * 1e6:,.0f} us in the producers"
    )
    cpus = os.cpu_count() or 1
    print(
        f"  bound on {cpus} CPUs:         {cpus * acked / (server_cpu + producers_cpu):8,.0f}"
        f" events/s with both; the producers alone, to a server costing nothing:"
        f" {cpus * acked / producers_cpu:,.0f}"
    )
    print(
        f"  post latency:           p50 {percentile(posts, 0.5) * 1000:6.1f} ms, "
        f"p99 {percentile(posts, 0.99) * 1000:6.1f} ms"
    )
    if query is None:
        return
    impact_statuses, impact_latencies = asked
    print(f"  impact queries:         {len(impact_latencies):8,} {dict(impact_statuses)}")
    print(
        f"  impact latency:         p50 {percentile(impact_latencies, 0.5) * 1000:6.1f} ms, "
        f"p99 {percentile(impact_latencies, 0.99) * 1000:6.1f} ms (target p99 < 200 ms)"
    )


def http_stack() -> str:
    """What uvicorn serves with: httptools or h11 for HTTP/1.1, uvloop or asyncio's loop."""
    found = []
    for module, used, otherwise in (
        ("httptools", "httptools", "h11"),
        ("uvloop", "uvloop", "asyncio"),
    ):
        try:
            __import__(module)
        except ImportError:
            found.append(otherwise)
        else:
            found.append(used)
    return " and ".join(found)


def cli_ingest(events: list[Json], folder: Path) -> None:
    """The CPU per event of ``ingest`` (what ``ol-subset lineage ingest`` runs) of the same
    events, spelled as ``HttpTransport`` sends them, in this process (``jobs=1``)."""
    path = folder / "events.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for event in events:
            out.write(json.dumps(event, sort_keys=True) + "\n")
    began = time.process_time()
    report = ingest([path], folder / "cli.db", jobs=1)
    cpu = time.process_time() - began
    assert report.stored == len(events), report.summary()
    print(
        f"cli ingest of the same events (jobs=1, one process): {cpu / len(events) * 1e6:,.0f} us "
        "CPU per event"
    )


# --- the fault -------------------------------------------------------------------------------


class RecordingTransport(HttpTransport):
    """HttpTransport noting every event the server acknowledged (a 2xx)."""

    acked: list[tuple[str, str]]

    def emit(self, event: Any) -> Any:
        answer = super().emit(event)
        self.acked.append((event["run"]["runId"], event["eventType"]))
        return answer


def deliver(url: str, events: list[Json], outbox: Path, signals: Any, results: Any) -> None:
    """Submit every event to an Emitter with an outbox; close once the server is gone."""
    go, killed = signals
    logging.getLogger("openlineage_subset").setLevel(logging.ERROR)  # the kill is expected
    transport = RecordingTransport(HttpConfig(url=url, timeout=10, retry=_NO_RETRY))
    transport.acked = []
    emitter = Emitter(transport, outbox.with_suffix(".quarantine"), outbox, close_timeout=1)
    go.wait()
    emitter.submit(events)
    results.put(("submitted", len(events)))
    killed.wait()  # then give up within the close budget: the rest stays in the outbox
    emitter.close(timeout=1)
    results.put(("acked", transport.acked, dict(emitter.counts)))


def fault(events: list[Json], producers: int, folder: Path, kill_at: float) -> None:
    db = folder / "fault.db"
    server, url = start_server(db)
    port = url.rsplit(":", 1)[1]
    context = multiprocessing.get_context("fork")
    go, killed, results = context.Event(), context.Event(), context.Queue()
    outboxes = [folder / f"outbox-{number}" for number in range(producers)]
    workers = [
        context.Process(target=deliver, args=(url, share, outbox, (go, killed), results))
        for share, outbox in zip(shares(events, producers), outboxes, strict=True)
    ]
    for worker in workers:
        worker.start()
    go.set()
    for _ in workers:
        results.get()
    target = int(kill_at * len(events))
    deadline = time.monotonic() + 600
    while sum(stored_keys(db).values()) < target:  # a reader of the database, as the CLI is
        if time.monotonic() > deadline:
            raise SystemExit(f"fewer than {target} events stored in 10 minutes")
        time.sleep(0.05)
    stop_server(server, signal.SIGKILL)
    killed_with = sum(stored_keys(db).values())
    killed.set()
    reports = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
    acked = {item for report in reports for item in report[1]}
    after_kill = stored_keys(db)
    kept = sum(item in after_kill for item in acked)
    counts: Counter[str] = sum((Counter(report[2]) for report in reports), Counter())

    server, url = start_server(db, int(port))
    env = {**os.environ, "OPENLINEAGE_URL": url}
    env.pop("OPENLINEAGE_CONFIG", None)
    started = time.perf_counter()
    replays = [
        subprocess.run(
            [sys.executable, "-m", "openlineage_subset", "replay", str(outbox)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        for outbox in outboxes
    ]
    replay_seconds = time.perf_counter() - started
    status = stop_server(server)
    found = stored_keys(db)
    sent = Counter(key(event) for event in events)
    print(f"fault: {len(events):,} events by {producers} producers (Emitter with an outbox)")
    print(f"  killed with SIGKILL at {killed_with:,} stored (aimed at {target:,})")
    print(f"  producers' counts at close: {dict(sorted(counts.items()))}")
    print(
        f"  acknowledged before the kill: {len(acked):,}; in the database after it: {kept:,}"
        f"   (target: all)"
    )
    codes = [replay.returncode for replay in replays]
    print(f"  replay of the {producers} outboxes: exit statuses {codes}, {replay_seconds:.1f} s")
    print(f"  server exit status {status}")
    print(
        f"  in the database after the replay: {sum(found.values()):,}; each sent event exactly "
        f"once: {found == sent}"
    )
    for replay in replays:
        if replay.returncode != 0:
            print("  replay said:", replay.stdout.strip(), replay.stderr.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="events (default 20000)")
    parser.add_argument("--producers", type=int, default=4, help="producer processes")
    parser.add_argument("--countries", type=int, default=10, help="partitions per write")
    parser.add_argument("--kill-at", type=float, default=0.4, help="fraction stored at the kill")
    parser.add_argument("--no-reader", action="store_true", help="no impact queries meanwhile")
    parser.add_argument("--skip-fault", action="store_true", help="measure the load only")
    args = parser.parse_args()
    events = []
    for event in history(args.events // 10 + 10, args.countries, seed=10):
        if len(events) == args.events:
            break
        events.append(event)
    while events[-1]["eventType"] == "START":  # every run the producers send ends
        events.pop()
    day = FIRST_DAY + dt.timedelta(days=len(events) // 20)  # the middle date: 10 events a day
    query = f"dataset=raw/events&partition=business_date={day.isoformat()}&partition=country=AA"
    print(f"machine: {os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    print(f"  HTTP: {http_stack()}")
    with tempfile.TemporaryDirectory() as folder:
        cli_ingest(events, Path(folder))
        load(events, args.producers, Path(folder), None if args.no_reader else query)
        if not args.skip_fault:
            fault(events, args.producers, Path(folder), args.kill_at)


if __name__ == "__main__":
    main()
