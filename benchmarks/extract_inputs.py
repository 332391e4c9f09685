"""Cost of reading subset facets from a plan, against Spark's own planning of the same query.

Builds partitioned parquet datasets with 100, 1,000 and 10,000 partitions (once, cached under
--data), reads each with a filter that keeps all but 1% of the partitions, and prints from one
run: Spark's planning time, the extraction time of ``input_datasets`` on the planned DataFrame
(every kept partition in the facet), their ratio, the py4j round trips of one extraction, and
the growth of extraction time from 1k to 10k partitions.

Spark's planning is all Spark does before its first task for the query: the read (file
listing, schema), the physical plan, and ``executedPlan.execute()``, which prunes partitions
and splits the files into input partitions without running a job. Extraction reuses what
Spark computed (the pruned partition list is a lazy value of the scan), so the ratio is the
cost the adapter adds.

Targets: a bounded number of py4j round trips whatever the partition count; at 10,000 selected
partitions extraction adds at most 10% to Spark's planning time; growth roughly linear.

    python benchmarks/extract_inputs.py [--data DIR] [--rounds 5]
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
from pyspark.sql import functions as F

from openlineage_subset import dump
from openlineage_subset.spark import SubsetConfig, input_datasets

SIZES = (100, 1_000, 10_000)
DAYS = 100


def build(spark: SparkSession, root: Path, partitions: int) -> Path:
    """A dataset of ``partitions`` partitions (day x shop), one small file each."""
    path = root / f"parts_{partitions}"
    if (path / "_SUCCESS").exists():
        return path
    shops = partitions // DAYS
    rows = spark.range(partitions).select(
        (F.col("id") % DAYS).alias("day"),
        (F.col("id") / DAYS).cast("int").alias("shop"),
        F.col("id").alias("amount"),
    )
    assert shops * DAYS == partitions
    rows.repartition("day", "shop").write.partitionBy("day", "shop").parquet(str(path))
    return path


def timed(action: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    """Median seconds of ``rounds`` runs, and the last result."""
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


class CallCounter:
    """Counts py4j round trips by wrapping the gateway client's ``send_command``."""

    def __init__(self, spark: SparkSession) -> None:
        self.client = spark.sparkContext._gateway._gateway_client  # type: ignore[union-attr]
        self.original = self.client.send_command
        self.count = 0

    def __enter__(self) -> CallCounter:
        caller = threading.get_ident()

        def counting(command: str, *args: Any, **kwargs: Any) -> Any:
            # Memory ("m") commands come from py4j's finalizer thread: GC, not extraction.
            if threading.get_ident() == caller and not command.startswith("m\n"):
                self.count += 1
            return self.original(command, *args, **kwargs)

        self.client.send_command = counting
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.send_command = self.original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "ol-subset-bench"
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    config = SubsetConfig(max_partitions=1_000_000, max_condition_bytes=1 << 30)
    extraction: dict[int, float] = {}
    columns = ("partitions", "kept", "planning", "extraction", "ratio", "py4j calls")
    print(
        " ".join(
            f"{name:>{width}}" for name, width in zip(columns, (10, 6, 10, 11, 7, 11), strict=True)
        )
    )
    for size in SIZES:
        path = str(build(spark, args.data, size))

        def plan(path: str = path) -> Any:
            df = spark.read.parquet(path).where(F.col("day") >= 1)
            df._jdf.queryExecution().executedPlan().execute()
            return df

        planning, df = timed(plan, args.rounds)
        plan()  # warm caches the same way for both measurements
        extract, datasets = timed(lambda df=df: input_datasets(df, config), args.rounds)
        with CallCounter(spark) as counter:
            input_datasets(df, config)
        (dataset,) = [dump(d) for d in datasets]
        kept = len(dataset["inputFacets"]["subset"]["inputCondition"]["partitions"])
        extraction[size] = extract
        print(
            f"{size:>10} {kept:>6} {planning * 1000:>8.0f}ms {extract * 1000:>9.0f}ms "
            f"{extract / planning:>6.1%} {counter.count:>11}"
        )
    growth = extraction[10_000] / extraction[1_000]
    print(f"growth of extraction time from 1k to 10k partitions: {growth:.1f}x (linear: 10x)")
    spark.stop()


if __name__ == "__main__":
    main()
