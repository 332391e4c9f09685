"""What capturing a Structured Streaming query costs: throughput, and memory over many batches.

Throughput: a file source of ``--files`` small JSON files (one a batch, ``maxFilesPerTrigger``
1) into a file sink partitioned by day, run with ``trigger(availableNow=True)`` so that the
batches follow each other as fast as Spark runs them, alternately without and with capture
(``--rounds`` of each, a fresh checkpoint and sink each time, in one Spark application). Prints
the batches per second of each and the ratio with/without: run back to back, the batches are
the hardest case (a stream at one batch a second leaves capture the rest of each second).

Memory: ``--memory-batches`` batches of a ``rate-micro-batch`` source into the ``noop`` sink, as
fast as Spark runs them, with capture on; the Python heap (``tracemalloc``) and the capture's
per-query state are sampled every tenth of the way. Flat means no growth with the number of
batches after the first samples (events go to a JSON Lines file, delivered as they come).

Paced: the same at one batch a second (``--paced-files`` files, a processing-time trigger of
1 s), the rate the issue asks about: capture's work per batch then fits in the second.

    python benchmarks/streaming.py [--files 60] [--paced-files 20] [--rounds 3]
                                   [--memory-batches 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from pyspark.sql import SparkSession

from openlineage_subset.spark import enable


def inbox(folder: Path, files: int) -> Path:
    """``files`` JSON files of ten rows each, over five days, oldest first."""
    path = folder / "inbox"
    path.mkdir(parents=True)
    for index in range(files):
        file = path / f"part{index:05d}.json"
        rows = (
            json.dumps({"day": f"2024-11-0{1 + index % 5}", "v": index * 10 + k}) for k in range(10)
        )
        file.write_text("\n".join(rows) + "\n", encoding="utf-8")
        os.utime(file, (1_700_000_000 + index, 1_700_000_000 + index))
    return path


def one_run(
    spark: SparkSession, source: Path, folder: Path, files: int, *, paced: bool = False
) -> float:
    """Batches per second of one run through every file: back to back, or (``paced``) one
    batch a second (a processing-time trigger, stopped once every file is in)."""
    shutil.rmtree(folder, ignore_errors=True)
    began = time.perf_counter()
    writer = (
        spark.readStream.schema("day string, v long")
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
        .writeStream.format("parquet")
        .partitionBy("day")
        .option("checkpointLocation", str(folder / "checkpoint"))
    )
    if not paced:
        writer.trigger(availableNow=True).start(str(folder / "out")).awaitTermination()
        return files / (time.perf_counter() - began)
    query = writer.trigger(processingTime="1 second").start(str(folder / "out"))
    while query.lastProgress is None or int(query.lastProgress["batchId"]) < files - 1:
        time.sleep(0.05)
    took = time.perf_counter() - began
    query.stop()
    return files / took


def throughput(
    spark: SparkSession, folder: Path, files: int, rounds: int, *, paced: bool = False
) -> None:
    source = inbox(folder / ("paced" if paced else "fast"), files)
    one_run(spark, source, folder / "warm", files)  # Spark's own first-time costs
    rates: dict[str, list[float]] = {"without": [], "with": []}
    for round_ in range(rounds):
        rates["without"].append(one_run(spark, source, folder / f"a{round_}", files, paced=paced))
        handle = enable(spark, output=folder / f"events{round_}.jsonl")
        try:
            rates["with"].append(one_run(spark, source, folder / f"b{round_}", files, paced=paced))
        finally:
            handle.close()
        assert handle.counts["errors"] == 0, handle.counts
    without, with_ = (statistics.median(rates[k]) for k in ("without", "with"))
    how = "one batch a second" if paced else "back to back"
    print(f"{how}, batches per second without capture: {_listed(rates['without'])}")
    print(f"{how}, batches per second with capture:    {_listed(rates['with'])}")
    print(f"{how}, throughput with/without (medians): {with_ / without:.3f}")


def _listed(rates: list[float]) -> str:
    return ", ".join(f"{rate:.2f}" for rate in rates)


def memory(spark: SparkSession, folder: Path, batches: int) -> None:
    handle = enable(spark, output=folder / "memory-events.jsonl")
    tracemalloc.start()
    query = (
        spark.readStream.format("rate-micro-batch")  # a batch whenever asked, not once a second
        .option("rowsPerBatch", 100)
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(folder / "memory-checkpoint"))
        .trigger(processingTime="0 seconds")
        .start()
    )
    samples = []
    step = max(batches // 10, 1)
    try:
        while True:
            progress = query.lastProgress
            done = 0 if progress is None else int(progress["batchId"]) + 1
            if done >= len(samples) * step + step or done >= batches:
                handle.flush()
                current, _ = tracemalloc.get_traced_memory()
                samples.append((done, current, handle.streams.open_runs))
                print(f"batch {done:6d}: Python heap {current / 1e6:7.2f} MB")
            if done >= batches:
                break
            time.sleep(0.2)
    finally:
        query.stop()
        handle.close()
    tracemalloc.stop()
    settled = [current for _, current, _ in samples[1:]] or [samples[0][1]]
    print(
        f"Python heap after the first tenth: {min(settled) / 1e6:.2f}"
        f" to {max(settled) / 1e6:.2f} MB;"
        f" last minus second sample: {(samples[-1][1] - settled[0]) / 1e6:+.2f} MB"
        f" over {samples[-1][0] - samples[1][0] if len(samples) > 1 else 0} batches"
    )
    print(f"query runs held open by capture at the end: {samples[-1][2]} (one query)")
    print(f"actions counted: {handle.counts['actions']}, errors: {handle.counts['errors']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--paced-files", type=int, default=20)
    parser.add_argument("--memory-batches", type=int, default=10_000)
    args = parser.parse_args()
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        if args.files and args.rounds:
            throughput(spark, folder, args.files, args.rounds)
        if args.paced_files and args.rounds:
            throughput(spark, folder, args.paced_files, args.rounds, paced=True)
        if args.memory_batches:
            memory(spark, folder, args.memory_batches)
    spark.stop()


if __name__ == "__main__":
    main()
