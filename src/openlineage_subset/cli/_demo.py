"""``ol-subset demo``: a daily sales pipeline on local Spark, and the lineage it produced.

Everything lives in one work directory: a small partitioned sales lake and a stores lookup
(both written by Spark), the Spark warehouse, an embedded Derby metastore for the catalog
table, and the captured events (``events.jsonl``, ``quarantine.jsonl``). The pipeline reads
two days of two countries (partition pruning) and the active EU stores (a row filter), writes
a daily aggregate with dynamic partition overwrite, then overwrites one static partition of a
catalog table it creates if missing. The events are read back, validated strictly, and
summarised per run; then they are ingested into a lineage database (``lineage.db``) and the demo
asks which runs one partition of ``lake/sales`` affected.

Example::

    $ ol-subset demo --workdir /tmp/demo
    ...
    run daily_sales_demo.write.tmp_demo_lake_daily_sales  COMPLETE
      in   lake/sales        PARTITION (business_date = '2024-10-15', country = 'DE')
                          OR PARTITION (business_date = '2024-10-15', country = 'PL')
      ...
      in   lake/stores.csv   region = 'EU' AND active = 'true'
      out  lake/daily_sales  PARTITION (business_date = '2024-10-15', country = 'DE')
      ...
    Impact of lake/sales, partition(s) business_date=2024-10-15/country=DE
    ...
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openlineage_subset import validate
from openlineage_subset.cli._show import summary_lines
from openlineage_subset.delivery import JsonLinesTransport
from openlineage_subset.lineage import LineageDatabaseError, impact, impact_text, ingest
from openlineage_subset.spark import (
    enable,
    first_error_line,
    local_session_on_loopback,
    spark_errors,
)

if TYPE_CHECKING:  # the spark extra is imported where used: this module imports without it
    from pyspark.sql import DataFrame, SparkSession

APP_NAME = "daily_sales_demo"
DAYS = ("2024-10-13", "2024-10-14", "2024-10-15", "2024-10-16")
COUNTRIES = ("PL", "DE", "FR", "IT")
ORDERS = 320
STORES = [
    (1, "EU", True),
    (2, "EU", True),
    (3, "EU", False),
    (4, "US", True),
    (5, "EU", True),
    (6, "EU", True),
    (7, "US", True),
    (8, "EU", True),
]
"""(store_id, region, active): the pipeline keeps the active EU stores."""
_LOG_CONFIG = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
logger.spark.name = org.apache.spark
logger.spark.level = error
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""
"""Log4j settings for the demo's JVM: errors only. Spark's own loggers get a level of their own,
else Spark announces at start-up the level it would use in a shell."""
IMPACT_PARTITION = {"business_date": "2024-10-15", "country": "DE"}
"""The partition of ``lake/sales`` whose impact the demo shows: one the pipeline reads."""


@dataclass(frozen=True)
class DemoPaths:
    """Where the demo keeps its data, metastore and events, all under ``root``."""

    root: Path

    @property
    def sales(self) -> Path:
        return self.root / "lake" / "sales"

    @property
    def stores(self) -> Path:
        return self.root / "lake" / "stores.csv"

    @property
    def daily_sales(self) -> Path:
        return self.root / "lake" / "daily_sales"

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse"

    @property
    def metastore(self) -> Path:
        return self.root / "metastore"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine.jsonl"

    @property
    def lineage(self) -> Path:
        return self.root / "lineage.db"

    @property
    def log_config(self) -> Path:
        return self.root / "log4j2.properties"


def run_demo(workdir: str | None) -> int:
    """Run the demo pipeline in ``workdir`` (a new temporary directory when None).

    Prints what each captured run read and wrote, with its subset condition. Returns 0 when
    every event was delivered and is valid (strict), 1 otherwise or when Spark failed, 2 when
    ``workdir`` cannot be created or written.

    Example::

        run_demo("/tmp/demo")   # the events are then in /tmp/demo/events.jsonl
    """
    try:
        paths = _prepare(workdir)
    except OSError as error:
        print(f"ol-subset demo: cannot use {workdir} as work directory: {error}", file=sys.stderr)
        return 2
    print(f"ol-subset demo: working in {paths.root}")
    try:
        problems = _capture_pipeline(paths)
    except spark_errors() as error:
        print(f"ol-subset demo: Spark failed: {first_error_line(error)}", file=sys.stderr)
        return 1
    return _summarize(paths, problems)


def _prepare(workdir: str | None) -> DemoPaths:
    """The work directory, created, with Spark's log settings; an earlier run's events removed
    (its data is overwritten), so that the summary shows this run alone."""
    root = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="ol-subset-demo-"))
    root = root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    paths = DemoPaths(root)
    paths.events.unlink(missing_ok=True)
    paths.quarantine.unlink(missing_ok=True)
    paths.lineage.unlink(missing_ok=True)
    paths.log_config.write_text(_LOG_CONFIG, encoding="utf-8")
    return paths


def _capture_pipeline(paths: DemoPaths) -> list[str]:
    """Generate the data and run the pipeline with capture on; what went wrong in capture."""
    with _local_spark(paths) as spark:
        handle = enable(
            spark,
            transport=_file_transport(paths.events),
            quarantine=paths.quarantine,
            namespace="demo",
        )
        try:
            print("generating lake/sales (partitioned parquet) and lake/stores.csv ...")
            _generate_data(spark, paths)
            print("running the daily pipeline ...")
            _run_pipeline(spark, paths)
        finally:
            delivered = handle.close()
    problems = handle.counts.problems()
    if not delivered:
        problems.append("some events still undelivered when the time ran out")
    return problems


def _file_transport(path: Path) -> Any:
    """Events to ``path`` (JSON Lines, 0600, never a torn line), even where openlineage-python
    is set up to send them elsewhere: the demo's events are for reading here, not for a real
    lineage backend."""
    return JsonLinesTransport.create(path)


@contextmanager
def _local_spark(paths: DemoPaths) -> Iterator[SparkSession]:
    """A local SparkSession whose warehouse, metastore and Derby files are in the work directory."""
    from pyspark.sql import SparkSession  # noqa: PLC0415

    builder = (
        SparkSession.builder.master("local[2]")
        .appName(APP_NAME)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", str(paths.warehouse))
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={paths.metastore};create=true",
        )
        .config("spark.driver.extraJavaOptions", _java_options(paths))
        .enableHiveSupport()
    )
    with local_session_on_loopback(builder):  # the driver on 127.0.0.1, not the network
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        yield spark
    finally:
        spark.stop()


def _java_options(paths: DemoPaths) -> str:
    """Derby's files in the work directory; Spark's start-up warnings off (errors still show)."""
    options = (
        f"-Dderby.system.home={paths.root}",
        f"-Dlog4j2.configurationFile={paths.log_config}",
    )
    return " ".join(shlex.quote(option) for option in options)


def _generate_data(spark: SparkSession, paths: DemoPaths) -> None:
    """The sales lake (partitioned by day and country) and the stores lookup, in two writes."""
    sales = _sales(spark)
    # One file per partition directory: the listing stays short and the write quick.
    sales.repartition("business_date", "country").write.mode("overwrite").partitionBy(
        "business_date", "country"
    ).parquet(str(paths.sales))
    stores = spark.createDataFrame(STORES, "store_id INT, region STRING, active BOOLEAN")
    stores.coalesce(1).write.mode("overwrite").option("header", "true").csv(str(paths.stores))


def _sales(spark: SparkSession) -> DataFrame:
    """``ORDERS`` orders spread evenly over the days and countries, stores picked by hash."""
    days = ", ".join(f"'{day}'" for day in DAYS)
    countries = ", ".join(f"'{country}'" for country in COUNTRIES)
    return spark.range(ORDERS).selectExpr(
        "id + 1 AS order_id",
        f"CAST(pmod(hash(id), {len(STORES)}) + 1 AS INT) AS store_id",
        "CAST(id * 7919 % 10000 AS DOUBLE) / 100 AS amount",
        f"element_at(array({days}), CAST(id % {len(DAYS)} + 1 AS INT)) AS business_date",
        f"element_at(array({countries}), CAST(id DIV {len(DAYS)} % {len(COUNTRIES)} + 1 AS INT))"
        " AS country",
    )


def _run_pipeline(spark: SparkSession, paths: DemoPaths) -> None:
    """Two days of two countries joined with the active EU stores, aggregated and written."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    sales = spark.read.parquet(str(paths.sales)).where(
        "business_date IN ('2024-10-15', '2024-10-16') AND country IN ('PL', 'DE')"
    )
    stores = (
        spark.read.option("header", "true")
        .schema("store_id INT, region STRING, active BOOLEAN")
        .csv(str(paths.stores))
        .where("region = 'EU' AND active = true")
    )
    daily = (
        sales.join(stores, "store_id")
        .groupBy("business_date", "country", "region")
        .agg(F.sum("amount").alias("total"), F.count("*").alias("orders"))
    )
    with _dynamic_partition_overwrite(spark):
        daily.write.mode("overwrite").partitionBy("business_date", "country").parquet(
            str(paths.daily_sales)
        )
    _fill_daily_totals(spark, paths)


@contextmanager
def _dynamic_partition_overwrite(spark: SparkSession) -> Iterator[None]:
    """Overwrite only the partitions a write produces, for the duration of the block."""
    key = "spark.sql.sources.partitionOverwriteMode"
    previous = spark.conf.get(key)
    spark.conf.set(key, "dynamic")
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, previous)


def _fill_daily_totals(spark: SparkSession, paths: DemoPaths) -> None:
    """One static partition of a catalog table (created if missing), from the aggregate just
    written; overwriting it makes running the demo again in the same directory idempotent."""
    spark.read.parquet(str(paths.daily_sales)).createOrReplaceTempView("daily_sales")
    spark.sql(
        "CREATE TABLE IF NOT EXISTS daily_totals (country STRING, total DOUBLE, orders BIGINT, "
        "business_date STRING) USING parquet PARTITIONED BY (business_date)"
    )
    spark.sql(
        "INSERT OVERWRITE daily_totals PARTITION (business_date = '2024-10-16') "
        "SELECT country, SUM(total), SUM(orders) FROM daily_sales "
        "WHERE business_date = '2024-10-16' GROUP BY country"
    )


def _summarize(paths: DemoPaths, problems: list[str]) -> int:
    """Validate the events read back and print each run; 0 when all is well."""
    events = _read_events(paths.events)
    invalid = sum(1 for event in events if validate(event, strict=True))
    print()
    for line in summary_lines(events, paths.root):
        print(line)
    print()
    if invalid:
        problems = [*problems, f"{invalid} invalid (strict)"]
    if problems:
        print(
            f"{len(events)} events written to {paths.events}; {', '.join(problems)}: "
            f"see {paths.quarantine} and the log above"
        )
        return 1
    print(f"{len(events)} events written to {paths.events}, all valid (strict)")
    print(f"check them yourself: ol-subset validate --strict {paths.events}")
    return _show_impact(paths)


def _show_impact(paths: DemoPaths) -> int:
    """Ingest the events into ``lineage.db`` and print the impact of one ``lake/sales``
    partition; 0 when answered. Datasets are named relative to the work directory, as above."""
    print()
    try:
        report = ingest([paths.events], paths.lineage)
        if report.invalid or report.unreadable:
            print(f"ol-subset demo: lineage ingest: {report.problems[0]}", file=sys.stderr)
            return 1
        answer = impact(paths.lineage, "lake/sales", partition=IMPACT_PARTITION)
    except LineageDatabaseError as error:
        print(f"ol-subset demo: lineage: {error}", file=sys.stderr)
        return 1
    inside = f"file:{paths.root}/"
    for line in impact_text(answer):
        print(line.replace(inside, ""))
    print()
    asked = " ".join(f"--partition {column}={value}" for column, value in IMPACT_PARTITION.items())
    print(f"ask it yourself: ol-subset lineage impact lake/sales {asked} --db {paths.lineage}")
    return 0


def _read_events(path: Path) -> list[dict[str, Any]]:
    """The events of a JSON Lines file; none when capture wrote no file."""
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]
