"""How often a short RDD job ends before capture can read it, and what capturing RDD jobs costs.

Spark's listener bus is asynchronous: capture takes a job's final stage (its RDD graph) from
Spark's scheduler when the job's start is dispatched to capture's queue; a job that has ended
by then is gone from the scheduler and is handed over ``lost`` (no run, said once in the log).
This runs short jobs with capture enabled (``enable``, so SQL actions are captured on their
own queue at the same time) and counts the jobs handed over and those lost, for:

- ``rdd``: ``sc.textFile(<one small file>).count()`` back to back (a Python worker each);
- ``rdd-after-sql``: each such count right after a captured DataFrame count, whose capture
  runs in Python on the other queue while the RDD job runs;
- ``jvm-rdd``, ``jvm-rdd-after-sql``: the same with the count run in the JVM alone
  (``count_in_jvm``, as a Scala job would): a few milliseconds each;
- ``parallelize``: ``sc.parallelize(range(10)).count()``, the shortest job there is (it reads
  no dataset: lost or not, it is no run);
- ``threads``: the RDD counts from four threads at once;

with the job forwarder on its own queue (``own-queue``, what capture does) and, for
comparison, on the queue of the SQL actions' forwarder (``shared-queue``): a job's start then
waits behind the Python capture of the SQL action before it; and ``python-listener``: no job
forwarder, but a listener implemented in Python (every event of the bus crosses to Python) that
looks the job up in the scheduler when its start reaches Python, the way a listener without
a JVM part would have to.

Then the cost: blocks of ``--jobs`` RDD counts (of a ten-line file, read again each time)
alternately without and with capture, the median time per job of each and their ratio, and
the median time the job listener spends in Python per job (on its own thread, after the job).

    python benchmarks/rdd_jobs.py [--jobs 100] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from openlineage_subset.spark import (
    QUEUE,
    CaptureHandle,
    JobLookupListener,
    count_in_jvm,
    enable,
    forward_jobs_on,
    listen_on_bus,
)

VARIANTS = ("own-queue", "shared-queue", "python-listener")


class NoTransport:
    """An openlineage-python style transport that drops what it is given."""

    def emit(self, event: Any) -> None:
        pass


class Tally:
    """The jobs the listener handed over, those lost, and its time in Python per job."""

    def __init__(self, handle: CaptureHandle) -> None:
        self.handed = 0
        self.lost = 0
        self.seconds: list[float] = []
        self.lock = threading.Lock()
        jobs = handle.jobs
        assert jobs is not None, "the compiled Java class is missing (build the package)"
        on_job, accept = jobs.on_job, jobs.accept

        def counting(facts: Any) -> None:
            with self.lock:
                self.handed += 1
                self.lost += facts.lost
            on_job(facts)

        def timed(job: Any) -> None:
            began = time.perf_counter()
            accept(job)
            with self.lock:
                self.seconds.append(time.perf_counter() - began)

        jobs.on_job = counting
        jobs.accept = timed  # type: ignore[method-assign]


def captured(spark: SparkSession, folder: Path, variant: str) -> CaptureHandle:
    handle = enable(spark, transport=NoTransport(), quarantine=folder / "quarantine.jsonl")
    jobs = handle.jobs
    if variant == "shared-queue" and jobs is not None:
        jobs.unregister(spark, timeout=10)
        forward_jobs_on(spark, jobs, QUEUE)
    return handle


def scenarios(spark: SparkSession, folder: Path, jobs: int) -> dict[str, Callable[[], None]]:
    text = folder / "small.txt"
    text.write_text("".join(f"line {n}\n" for n in range(10)), encoding="utf-8")
    parquet = folder / "small.parquet"
    if not parquet.exists():
        spark.range(100).write.parquet(str(parquet))
    sc = spark.sparkContext

    def rdd() -> None:
        for _ in range(jobs):
            sc.textFile(str(text)).count()

    def rdd_after_sql() -> None:
        for _ in range(jobs // 2):
            spark.read.parquet(str(parquet)).where("id > 3").count()
            sc.textFile(str(text)).count()

    def jvm_rdd() -> None:
        for _ in range(jobs):
            count_in_jvm(spark, str(text))

    def jvm_rdd_after_sql() -> None:
        for _ in range(jobs // 2):
            spark.read.parquet(str(parquet)).where("id > 3").count()
            count_in_jvm(spark, str(text))

    def parallelize() -> None:
        for _ in range(jobs):
            sc.parallelize(range(10), 2).count()

    def threads() -> None:
        workers = [
            threading.Thread(
                target=lambda: [sc.textFile(str(text)).count() for _ in range(jobs // 4)]
            )
            for _ in range(4)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    return {
        "rdd": rdd,
        "rdd-after-sql": rdd_after_sql,
        "jvm-rdd": jvm_rdd,
        "jvm-rdd-after-sql": jvm_rdd_after_sql,
        "parallelize": parallelize,
        "threads": threads,
    }


def lost_jobs(spark: SparkSession, folder: Path, jobs: int) -> None:
    print("jobs handed over / lost (no run), per scenario and queue of the job forwarder")
    for name, scenario in scenarios(spark, folder, jobs).items():
        for variant in VARIANTS:
            handle = captured(spark, folder, variant)
            tally: Tally | JobLookupListener = Tally(handle)
            remove = None
            if variant == "python-listener":
                handle.close()
                handle = enable(spark, transport=NoTransport(), quarantine=folder / "q.jsonl")
                tally = JobLookupListener(spark)
                if handle.jobs is not None:
                    handle.jobs.unregister(spark, timeout=10)
                remove = listen_on_bus(spark, tally, "python-listener")
            scenario()
            handle.close()
            if remove is not None:
                remove()
            share = tally.lost / tally.handed if tally.handed else 0.0
            print(f"  {name:18} {variant:16} {tally.handed:4} handed over, {tally.lost:3} lost "
                  f"({share:.1%})")  # fmt: skip


def cost(spark: SparkSession, folder: Path, jobs: int, rounds: int) -> None:
    text = folder / "small.txt"
    sc = spark.sparkContext

    def block() -> float:
        began = time.perf_counter()
        for _ in range(jobs):
            sc.textFile(str(text)).count()
        return (time.perf_counter() - began) / jobs

    block()  # warm-up
    ratios, bare_times, captured_times, python_times = [], [], [], []
    for round_number in range(rounds):
        order = ("bare", "captured") if round_number % 2 == 0 else ("captured", "bare")
        times = {}
        for variant in order:
            if variant == "bare":
                times[variant] = block()
                continue
            handle = captured(spark, folder, "own-queue")
            tally = Tally(handle)
            times[variant] = block()
            handle.close()
            python_times.append(statistics.median(tally.seconds))
        bare_times.append(times["bare"])
        captured_times.append(times["captured"])
        ratios.append(times["captured"] / times["bare"])
        bare_ms, captured_ms = times["bare"] * 1000, times["captured"] * 1000
        print(f"  round {round_number + 1}: {bare_ms:.1f} ms bare, "
              f"{captured_ms:.1f} ms captured per job, ratio {ratios[-1]:.3f}")  # fmt: skip
    print(f"median per job: {statistics.median(bare_times) * 1000:.1f} ms bare, "
          f"{statistics.median(captured_times) * 1000:.1f} ms captured; "
          f"median ratio {statistics.median(ratios):.3f}; job listener in Python "
          f"{statistics.median(python_times) * 1000:.1f} ms per job")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("rdd-jobs-benchmark")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        lost_jobs(spark, folder, options.jobs)
        print(f"cost of capturing {options.jobs} RDD counts, {options.rounds} rounds")
        cost(spark, folder, options.jobs, options.rounds)
    spark.stop()


if __name__ == "__main__":
    main()
