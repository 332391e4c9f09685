"""Cost of reading subset facets from a plan, against Spark's own planning of the same query.

Builds partitioned parquet datasets (day x shop) with 100, 1,000, 10,000 and 100,000
partitions (once, cached under --data), reads each with a filter that keeps all but 1% of the
partitions, and prints from one run: Spark's planning time, then for two configurations the
extraction time of ``input_datasets`` on the planned DataFrame, its ratio to planning, the JSON
size of the condition in the facet, and the JVM round trips of one extraction; then the growth
of extraction time from each size to the next. The configurations:

- every partition listed (``max_partitions`` and ``max_condition_bytes`` out of reach): every
  kept partition in the facet, the most work extraction can do with a partition list;
- ``SubsetConfig()`` defaults: up to 1,000 partitions listed, more condensed to value lists and
  ranges (``condense_partitions``), as the adapter runs by default.

Spark's planning is all Spark does before its first task for the query: the read (file
listing, schema), the physical plan, and ``executedPlan.execute()``, which prunes partitions
and splits the files into input partitions without running a job. Extraction reuses what
Spark computed (the pruned partition list is a lazy value of the scan), so the ratio is the
cost the adapter adds.

Spark writes the datasets up to 10,000 partitions. Writing 100,000 is slow, so that layout is
made in Python: Spark writes one small parquet file (the schema less the partition columns),
and each ``day=D/shop=S`` directory gets a hard link to it (a copy where linking fails: ext4
takes 65,000 links to one file), then ``_SUCCESS``. Made once, in seconds; Spark lists and
plans it as it would a written dataset. Spark's planning of it takes about 10 to 15 s a round,
so the whole script takes about 4 minutes; ``--sizes 100 1000 10000`` leaves it out (under a
minute), ``--sizes 100000`` runs only it.

Targets: a bounded number of JVM round trips whatever the partition count; at 10,000 and at
100,000 selected partitions extraction adds at most 10% to Spark's planning time; growth
roughly linear.

    python benchmarks/extract_inputs.py [--data DIR] [--rounds 5] [--sizes 100 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from openlineage_subset import dump
from openlineage_subset.producer import json_size
from openlineage_subset.spark import RoundTripCounter, SubsetConfig, execute_plan, input_datasets

SIZES = (100, 1_000, 10_000, 100_000)
DAYS = 100
LINKED = 100_000
"""From this many partitions on, a dataset is laid out by hard links instead of written."""


def build(spark: SparkSession, root: Path, partitions: int) -> Path:
    """A dataset of ``partitions`` partitions (day x shop), one small file each."""
    path = root / f"parts_{partitions}"
    if (path / "_SUCCESS").exists():
        return path
    shops = partitions // DAYS
    assert shops * DAYS == partitions
    if partitions >= LINKED:
        return build_linked(spark, path, shops)
    rows = spark.range(partitions).select(
        (F.col("id") % DAYS).alias("day"),
        (F.col("id") / DAYS).cast("int").alias("shop"),
        F.col("id").alias("amount"),
    )
    rows.repartition("day", "shop").write.partitionBy("day", "shop").parquet(str(path))
    return path


def build_linked(spark: SparkSession, path: Path, shops: int) -> Path:
    """The same layout as :func:`build` without a Spark job writing every partition: Spark
    writes one file of the schema less its partition columns (``amount``), and every
    ``day=D/shop=S`` directory gets a hard link to it (a copy where links fail)."""
    template = path.with_name(path.name + "_template")
    shutil.rmtree(path, ignore_errors=True)  # an unfinished layout (no _SUCCESS)
    spark.range(1).select(F.col("id").alias("amount")).coalesce(1).write.mode("overwrite").parquet(
        str(template)
    )
    (source,) = template.glob("part-*.parquet")
    start = time.perf_counter()
    copied = 0
    for day in range(DAYS):
        for shop in range(shops):
            directory = path / f"day={day}" / f"shop={shop}"
            directory.mkdir(parents=True)
            target = directory / source.name
            try:
                os.link(source, target)
            except OSError:  # no links here, or too many to one file (ext4: 65,000)
                shutil.copyfile(source, target)
                source = target  # a new file to link to from now on
                copied += 1
    (path / "_SUCCESS").touch()
    how = "hard links" + (f" ({copied:,} copied where a link failed)" if copied else "")
    took = time.perf_counter() - start
    print(f"laid out {path} ({DAYS * shops:,} partitions) with {how} in {took:.0f}s")
    return path


def timed(action: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    """Median seconds of ``rounds`` runs, and the last result."""
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "ol-subset-bench"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(SIZES),
        help=f"partition counts, multiples of {DAYS} (default: %(default)s)",
    )
    args = parser.parse_args()
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    for size in args.sizes:  # first, so that layout messages do not cut the table
        build(spark, args.data, size)
    configs = {
        "every partition listed": SubsetConfig(
            max_partitions=1_000_000, max_condition_bytes=1 << 30
        ),
        "SubsetConfig() defaults": SubsetConfig(),
    }
    extraction: dict[str, dict[int, float]] = {name: {} for name in configs}
    plannings: dict[int, float] = {}
    calls: dict[str, set[int]] = {name: set() for name in configs}
    group = f"{'extraction':>10} {'ratio':>6} {'bytes':>9} {'jvm':>4}"
    print((" " * 28 + "".join(f" | {name:<{len(group)}}" for name in configs)).rstrip())
    print(f"{'partitions':>10} {'kept':>6} {'planning':>10}" + f" | {group}" * len(configs))
    for size in args.sizes:
        path = str(build(spark, args.data, size))

        def plan(path: str = path) -> Any:
            df = spark.read.parquet(path).where(F.col("day") >= 1)
            execute_plan(df)
            return df

        planning, df = timed(plan, args.rounds)
        plannings[size] = planning
        plan()  # warm caches the same way for both measurements
        cells = []
        kept = 0
        for name, config in configs.items():
            extract, datasets = timed(
                lambda df=df, config=config: input_datasets(df, config), args.rounds
            )
            with RoundTripCounter(spark) as counter:
                input_datasets(df, config)
            (dataset,) = [dump(d) for d in datasets]
            condition = dataset["inputFacets"]["subset"]["inputCondition"]
            if condition["type"] == "partition":
                kept = max(kept, len(condition["partitions"]))
            extraction[name][size] = extract
            calls[name].add(counter.count)
            cells.append(
                f"{extract * 1000:>8.0f}ms {extract / planning:>6.1%} "
                f"{json_size(condition):>9,} {counter.count:>4}"
            )
        print(
            f"{size:>10,} {kept:>6,} {planning * 1000:>8.0f}ms" + "".join(f" | {c}" for c in cells)
        )
    for name, times in extraction.items() if len(args.sizes) > 1 else ():
        steps = [
            f"{small:,} to {large:,}: {times[large] / times[small]:.1f}x "
            f"(linear: {large / small:.0f}x)"
            for small, large in pairwise(args.sizes)
        ]
        print(f"growth of extraction time, {name}: " + "; ".join(steps))
    print("targets:")
    for name, counts in calls.items():
        print(
            f"  {name}: JVM round trips the same at every size: {sorted(counts)}, "
            f"{'met' if len(counts) == 1 else 'NOT MET'}"
        )
    for size in (size for size in args.sizes if size >= 10_000):
        ratios = {name: times[size] / plannings[size] for name, times in extraction.items()}
        shown = ", ".join(
            f"{name} {ratio:.1%} ({'met' if ratio <= 0.10 else 'NOT MET'})"
            for name, ratio in ratios.items()
        )
        print(f"  at {size:,} partitions extraction at most 10% of planning: {shown}")
    spark.stop()


if __name__ == "__main__":
    main()
