"""Wall time a representative Spark job gains when every action is captured by ``enable``.

Builds a parquet dataset partitioned by day and country (30 x 10 = 300 partitions, 3,000 rows)
and a small unpartitioned lookup (once, cached under --data), then runs the same job of twelve
actions alternately without and with capture, in one SparkSession: pruned counts and collects,
a filtered read, a join with the lookup, aggregations, partitioned overwrites and appends
(one of them a dynamic partition overwrite), an unpartitioned write, and static and dynamic
inserts into a partitioned catalog table. A warm-up run of each variant comes first and is not
counted; the variant that goes first alternates between rounds, to cancel drift.

Prints from one run, per round and as medians: the job's wall time without and with capture,
their ratio, the time ``handle.close()`` takes (waiting for Spark's listener bus, then
delivering the queued events; not part of the job's wall time), the listener's own time per
captured action (it runs on Spark's listener thread, after each action returns, so it only
shows in the job's wall time through contention), and the events written and quarantined.

Then short actions, the case where a listener's fixed cost per action shows most: counts of a
cached DataFrame (about 0.1 s each), in blocks of ``--short-actions`` alternately without
and with capture in the same session; it prints the median time per action of each and their
ratio, and the median listener time per action.

Target: the median of the per-round ratios capture / baseline at most 1.05 for the job, and at
most 1.03 for the short actions, which also print the CPU time each action takes in the driver's
Python process and in the JVM, with and without capture (Linux: read from ``/proc``).

With ``--connect``, the same job runs through a Spark Connect server instead (PySpark 4 with
``pyspark[connect]``): each round starts a server without capture (Spark's own plugin in a
plain application) and ``ol-subset connect-server``, in the order of the round, and in each runs
a warm-up job, then the job from one client session, then the job from two client sessions at
once (their own tables and outputs). It prints the job's time through each server, the median
ratio of one client's job (target <= 1.05), and the median ratio of the two concurrent clients'
jobs: what capturing every session costs a session working beside another.

    python benchmarks/capture_overhead.py [--data DIR] [--rounds 7] [--short-actions 100]
    python benchmarks/capture_overhead.py --connect [--data DIR] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from openlineage_subset.spark import (
    CaptureHandle,
    drain_listener_bus,
    enable,
    jvm_process_id,
    query_listener_count,
)

DAYS = 30
REGIONS = {
    "AT": "central", "BE": "west", "CH": "central", "DE": "central", "ES": "south",
    "FR": "west", "IT": "south", "NL": "west", "PL": "east", "SE": "north",
}  # fmt: skip
ROWS_PER_PARTITION = 10
TABLE = "daily_sales"


def build(spark: SparkSession, root: Path) -> tuple[Path, Path]:
    """The sales dataset (day x country partitions) and the country lookup, built once."""
    sales, lookup = root / "sales", root / "countries"
    if not (sales / "_SUCCESS").exists():
        countries = F.array(*(F.lit(c) for c in REGIONS))
        partition = F.floor(F.col("id") / ROWS_PER_PARTITION).cast("int")
        rows = spark.range(DAYS * len(REGIONS) * ROWS_PER_PARTITION).select(
            F.col("id"),
            (F.col("id") % 97).alias("customer"),
            ((F.col("id") * 7919) % 1000 / 10).alias("amount"),
            day(partition % DAYS).alias("day"),
            F.element_at(countries, (partition / DAYS).cast("int") + 1).alias("country"),
        )
        rows.repartition("day", "country").write.mode("overwrite").partitionBy(
            "day", "country"
        ).parquet(str(sales))
    if not (lookup / "_SUCCESS").exists():
        spark.createDataFrame(list(REGIONS.items()), "country string, region string").coalesce(
            1
        ).write.mode("overwrite").parquet(str(lookup))
    return sales, lookup


def day(offset: int | Column) -> Column:
    """The ``day`` partition value ``offset`` days after 2024-10-01, as a Column."""
    return F.date_add(F.lit("2024-10-01").cast("date"), offset)


def job(
    spark: SparkSession, sales_path: Path, lookup_path: Path, out: Path, table: str = TABLE
) -> None:
    """Twelve actions reading ``sales_path`` (also the ``sales`` view) and the lookup.

    Every write overwrites what the previous run wrote under ``out`` or in the table, so runs
    are comparable.
    """
    sales = spark.read.parquet(str(sales_path))
    lookup = spark.read.parquet(str(lookup_path))
    daily = str(out / "daily")
    days = F.col("day")
    sales.where(days == day(0)).count()
    sales.where(days.between(day(0), day(6)) & F.col("country").isin("DE", "FR")).groupBy(
        "country"
    ).agg(F.sum("amount")).collect()
    sales.where(F.col("amount") > 90).count()
    sales.where(days >= day(20)).join(lookup, "country").groupBy("region").agg(
        F.sum("amount"), F.countDistinct("customer")
    ).collect()
    sales.where(days.between(day(1), day(3))).write.partitionBy("day", "country").mode(
        "overwrite"
    ).parquet(daily)
    sales.where(days == day(4)).write.partitionBy("day", "country").mode("append").parquet(daily)
    corrected = sales.where((days == day(2)) & (F.col("country") == "DE"))
    corrected.withColumn("amount", F.col("amount") * 2).write.partitionBy("day", "country").mode(
        "overwrite"
    ).option("partitionOverwriteMode", "dynamic").parquet(daily)
    spark.read.parquet(daily).where(days == day(2)).count()
    sales.where(days < day(7)).join(lookup, "country").groupBy("day", "region").agg(
        F.sum("amount").alias("revenue")
    ).write.mode("overwrite").parquet(str(out / "summary"))
    spark.sql(
        f"INSERT OVERWRITE TABLE {table} PARTITION (day, country) "
        "SELECT id, customer, amount, day, country FROM sales "
        "WHERE day BETWEEN DATE'2024-10-10' AND DATE'2024-10-11'"
    )
    spark.sql(
        f"INSERT OVERWRITE TABLE {table} PARTITION (day = DATE'2024-10-12', country = 'FR') "
        "SELECT id, customer, amount FROM sales WHERE day = DATE'2024-10-12' AND country = 'FR'"
    )
    spark.table(table).where(F.col("country") == "FR").collect()


@dataclass
class ListenerClock:
    """Seconds the capture listener spends on each action, by wrapping its ``on_action``."""

    times: list[float] = field(default_factory=list)

    def attach(self, handle: CaptureHandle) -> None:
        listener = handle.listener
        capture = listener.on_action

        def timed(*args: Any) -> None:
            start = time.perf_counter()
            capture(*args)
            self.times.append(time.perf_counter() - start)

        listener.on_action = timed


@dataclass
class Run:
    """One timed run of the job."""

    seconds: float
    close_seconds: float = 0.0
    actions_captured: int = 0


@dataclass
class Bench:
    """The job's inputs and outputs, and where capture writes its events."""

    spark: SparkSession
    sales: Path
    lookup: Path
    out: Path
    files: Path
    clock: ListenerClock = field(default_factory=ListenerClock)

    def baseline(self) -> Run:
        """The job with no capture; Spark's listener bus drained after it, untimed."""
        start = time.perf_counter()
        job(self.spark, self.sales, self.lookup, self.out)
        seconds = time.perf_counter() - start
        # Else the ends of its last actions may still be queued when capture is enabled next.
        drain_listener_bus(self.spark)
        return Run(seconds)

    def captured(self) -> Run:
        """The job with capture enabled just before it; ``close()`` timed apart."""
        listeners = self.listeners()
        handle = enable(
            self.spark,
            output=self.files / "events.jsonl",
            quarantine=self.files / "quarantine.jsonl",
        )
        self.clock.attach(handle)
        start = time.perf_counter()
        job(self.spark, self.sales, self.lookup, self.out)
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        if not handle.close():
            raise RuntimeError("capture did not deliver its events within close()'s timeout")
        close_seconds = time.perf_counter() - start
        if handle.counts["errors"]:
            raise RuntimeError(f"the listener failed: {dict(handle.counts)}")
        # A listener left registered keeps working on every later action, baseline ones too.
        if self.listeners() != listeners:
            raise RuntimeError(
                f"handle.close() left its QueryExecutionListener registered ({listeners} "
                f"listeners before enable(), {self.listeners()} after close()): the "
                "measurements would be wrong"
            )
        return Run(seconds, close_seconds, handle.counts["actions"])

    def listeners(self) -> int:
        """How many QueryExecutionListeners the session has (Spark-internal)."""
        return query_listener_count(self.spark)


def short_actions(bench: Bench, rounds: int, actions: int) -> None:
    """Counts of one cached DataFrame, in blocks without and with capture, alternately.

    Each round runs ``actions`` counts of each kind in blocks of ten, switching between them
    after every block (capture enabled before its block and closed after it, untimed), so that
    the machine's drift weighs on both alike; its ratio is that of the median times per count.
    """
    # Spread over enough tasks that one count takes about 0.1 s, as the short actions of a job
    # that iterates over a cached DataFrame do.
    cached = bench.spark.read.parquet(str(bench.sales)).repartition(24).cache()
    cached.count()
    block = 10
    jvm_pid = jvm_process_id(bench.spark)
    cpu: dict[str, list[tuple[float, float]]] = {"baseline": [], "capture": []}

    def counts() -> list[float]:
        seconds = []
        for _ in range(block):
            start = time.perf_counter()
            cached.count()
            seconds.append(time.perf_counter() - start)
        return seconds

    def spent(kind: str, since: tuple[float, float]) -> None:
        now = _cpu_seconds(jvm_pid)
        cpu[kind].append(((now[0] - since[0]) / block, (now[1] - since[1]) / block))

    def without() -> list[float]:
        since = _cpu_seconds(jvm_pid)
        seconds = counts()
        drain_listener_bus(bench.spark)
        spent("baseline", since)
        return seconds

    def captured() -> list[float]:
        handle = enable(bench.spark, output=bench.files / "short.jsonl")
        bench.clock.attach(handle)
        since = _cpu_seconds(jvm_pid)
        seconds = counts()
        handle.flush()  # its events delivered: all of capture's work for the block
        spent("capture", since)
        handle.close()
        return seconds

    without()
    captured()
    bench.clock.times.clear()
    cpu["baseline"].clear()
    cpu["capture"].clear()
    print(f"short actions: {rounds} rounds of {actions} counts of a cached DataFrame each way")
    ratios = []
    for round_ in range(rounds):
        baseline: list[float] = []
        capture: list[float] = []
        for index in range(max(1, actions // block)):
            if (round_ + index) % 2:
                capture += captured()
                baseline += without()
            else:
                baseline += without()
                capture += captured()
        ratios.append(statistics.median(capture) / statistics.median(baseline))
        print(
            f"{round_ + 1:>5} per action: baseline {statistics.median(baseline) * 1000:.1f}ms, "
            f"capture {statistics.median(capture) * 1000:.1f}ms, ratio {ratios[-1]:.3f}"
        )
    cached.unpersist()
    listener = statistics.median(bench.clock.times)
    print(
        f"short actions: median ratio capture/baseline {statistics.median(ratios):.3f} "
        f"(target <= 1.03), median listener time {listener * 1000:.1f}ms per action"
    )
    # CPU time is what capture takes from a job on a busy machine, less noisy than wall time.
    for index, process in enumerate(("Python (driver)", "JVM (driver and executors)")):
        baseline_cpu = statistics.median(used[index] for used in cpu["baseline"])
        capture_cpu = statistics.median(used[index] for used in cpu["capture"])
        print(
            f"short actions: CPU per action in {process}: baseline {baseline_cpu * 1000:.2f}ms, "
            f"capture {capture_cpu * 1000:.2f}ms (median of {len(cpu['capture'])} blocks)"
        )


def _cpu_seconds(jvm_pid: int) -> tuple[float, float]:
    """CPU seconds (user and system) used so far by this Python process and by the JVM."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open(f"/proc/{jvm_pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return usage.ru_utime + usage.ru_stime, (int(fields[11]) + int(fields[12])) / ticks


def json_lines(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON Lines file; none if it does not exist."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


PLAIN_SERVER = """
import signal, sys, threading
from pyspark.sql import SparkSession
from openlineage_subset.spark._jvm import PLUGIN, connect_server_port
spark = (
    SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2").config("spark.sql.warehouse.dir", sys.argv[1])
    .config("spark.plugins", PLUGIN).config("spark.connect.grpc.binding.address", "127.0.0.1")
    .config("spark.connect.grpc.binding.port", "0").getOrCreate()
)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
print(f"ready: sc://127.0.0.1:{connect_server_port(spark)}", flush=True)
stop.wait()
spark.stop()
"""


def start_server(captured: bool, work: Path) -> tuple[subprocess.Popen[str], str]:
    """A Connect server without capture, or ``ol-subset connect-server``; its client URL."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if captured:
        command = [
            sys.executable, "-m", "openlineage_subset", "connect-server", "--port", "0",
            "--master", "local[2]", "--output", str(work / "events.jsonl"),
            "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
            "--conf", f"spark.sql.warehouse.dir={work / 'warehouse'}",
        ]  # fmt: skip
    else:
        command = [sys.executable, "-c", PLAIN_SERVER, str(work / "warehouse")]
    log = (work / "server.log").open("w")
    # This process is a Connect client: what made it one must not reach the server.
    client_only = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")
    env = {key: value for key, value in os.environ.items() if key not in client_only}
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=log, text=True, cwd=work, env=env
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line.startswith("ready: "):
        server.kill()
        raise RuntimeError(f"the server did not start: see {work / 'server.log'}")
    return server, line.removeprefix("ready: ").strip()


def connect_job(url: str, sales: Path, lookup: Path, out: Path, table: str) -> float:
    """The job from a new client session of the server at ``url``; its seconds."""
    spark: Any = SparkSession.builder.remote(url).create()
    spark.read.parquet(str(sales)).createOrReplaceTempView("sales")
    spark.sql(
        f"CREATE TABLE IF NOT EXISTS {table} (id BIGINT, customer BIGINT, amount DOUBLE, "
        "day DATE, country STRING) USING parquet PARTITIONED BY (day, country)"
    )
    start = time.perf_counter()
    job(spark, sales, lookup, out, table)
    seconds = time.perf_counter() - start
    spark.stop()
    return seconds


def two_clients(url: str, sales: Path, lookup: Path, work: Path) -> float:
    """The mean seconds of the job run by two client sessions at once."""
    seconds: list[float] = []

    def client(number: int) -> None:
        out, table = work / f"client{number}", f"{TABLE}_{number}"
        seconds.append(connect_job(url, sales, lookup, out, table))

    threads = [threading.Thread(target=client, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if len(seconds) != len(threads):
        raise RuntimeError("a client failed (see its traceback above)")
    return statistics.mean(seconds)


def connect_case(args: argparse.Namespace) -> None:
    """The job through Connect servers with and without capture (see the module docstring)."""
    os.environ.pop("SPARK_REMOTE", None)
    builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    with builder.getOrCreate() as spark:
        sales, lookup = build(spark, args.data)
    one: dict[bool, list[float]] = {False: [], True: []}
    two: dict[bool, list[float]] = {False: [], True: []}
    print(f"{'round':>5} {'server':>8} {'one client':>11} {'two clients':>12}")
    for round_ in range(args.rounds):
        for captured in (round_ % 2 == 1, round_ % 2 == 0):
            work = args.data / "connect" / ("captured" if captured else "plain")
            server, url = start_server(captured, work)
            try:
                connect_job(url, sales, lookup, work / "warm", "warm_up")
                one[captured].append(connect_job(url, sales, lookup, work / "one", TABLE))
                two[captured].append(two_clients(url, sales, lookup, work))
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=300)
            label = "capture" if captured else "plain"
            times = f"{one[captured][-1]:>10.3f}s {two[captured][-1]:>11.3f}s"
            print(f"{round_ + 1:>5} {label:>8} {times}")
    ratio_one = [c / p for c, p in zip(one[True], one[False], strict=True)]
    ratio_two = [c / p for c, p in zip(two[True], two[False], strict=True)]
    print(
        f"median one-client job: plain {statistics.median(one[False]):.3f}s, "
        f"capture {statistics.median(one[True]):.3f}s"
    )
    print(
        f"median ratio capture/plain, one client: {statistics.median(ratio_one):.3f} "
        "(target <= 1.05)"
    )
    print(
        f"median ratio capture/plain, two clients at once: {statistics.median(ratio_two):.3f} "
        "(each client's job beside the other's)"
    )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "ol-subset-bench"
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--short-actions", type=int, default=100)
    parser.add_argument("--connect", action="store_true", help="the job through Spark Connect")
    return parser.parse_args()


def _local_session(work: Path) -> SparkSession:
    """A quiet local session whose catalog's tables live under ``work``."""
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", str(work / "warehouse"))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> None:
    args = _arguments()
    if args.connect:
        connect_case(args)
        return
    work = args.data / "capture"
    # The catalog lives in memory only: its tables' directories must not outlive the session.
    shutil.rmtree(work, ignore_errors=True)
    files = work / "lineage"
    files.mkdir(parents=True)
    spark = _local_session(work)
    sales, lookup = build(spark, args.data)
    spark.read.parquet(str(sales)).createOrReplaceTempView("sales")
    spark.sql(
        f"CREATE TABLE {TABLE} (id BIGINT, customer BIGINT, amount DOUBLE, day DATE, "
        "country STRING) USING parquet PARTITIONED BY (day, country)"
    )
    bench = Bench(spark, sales, lookup, work / "out", files)
    short_actions(bench, args.rounds, args.short_actions)
    bench.clock = ListenerClock()
    bench.baseline()
    bench.captured()
    warm_up_actions = len(bench.clock.times)
    print(f"{'round':>5} {'first':>8} {'baseline':>9} {'capture':>9} {'ratio':>6} {'close':>7}")
    baselines, captures, ratios, closes, actions = [], [], [], [], []
    for round_ in range(args.rounds):
        capture_first = round_ % 2 == 1
        if capture_first:
            captured, baseline = bench.captured(), bench.baseline()
        else:
            baseline, captured = bench.baseline(), bench.captured()
        baselines.append(baseline.seconds)
        captures.append(captured.seconds)
        ratios.append(captured.seconds / baseline.seconds)
        closes.append(captured.close_seconds)
        actions.append(captured.actions_captured)
        print(
            f"{round_ + 1:>5} {'capture' if capture_first else 'baseline':>8} "
            f"{baseline.seconds:>8.3f}s {captured.seconds:>8.3f}s {ratios[-1]:>6.3f} "
            f"{captured.close_seconds * 1000:>5.0f}ms"
        )
    spark.stop()

    events = json_lines(files / "events.jsonl")
    quarantined = json_lines(files / "quarantine.jsonl")
    types = Counter(event["eventType"] for event in events)
    runs = args.rounds + 1
    starts_per_job = (types["START"] - runs) / runs  # each enable adds one application START
    median_baseline, median_capture = statistics.median(baselines), statistics.median(captures)
    per_action = (median_capture - median_baseline) / statistics.median(actions)
    listener = statistics.median(bench.clock.times[warm_up_actions:])
    print(f"median baseline: {median_baseline:.3f}s, median capture: {median_capture:.3f}s")
    print(f"median ratio capture/baseline: {statistics.median(ratios):.3f} (target <= 1.05)")
    print(
        f"actions captured per job: {statistics.median(actions)} "
        f"(events file: {starts_per_job:g} action STARTs per job)"
    )
    print(f"median wall-time cost per captured action: {per_action * 1000:.1f}ms")
    print(f"median listener time per captured action: {listener * 1000:.1f}ms (off the job)")
    print(f"median close() time: {statistics.median(closes) * 1000:.0f}ms")
    print(
        f"events written: {len(events)} ({', '.join(f'{k} {v}' for k, v in types.items())}), "
        f"quarantined: {len(quarantined)}"
    )


if __name__ == "__main__":
    main()
