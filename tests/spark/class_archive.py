"""Write a class-data archive of Spark's JVM for the test sessions: ``class_archive.py FILE``.

A JVM that starts with ``-XX:SharedArchiveFile=FILE`` maps the classes archived there instead of
loading and verifying them from Spark's jars: a local session and its first query start in
about 6 s instead of 10 here. The Spark sessions of the noxfile run this once per PySpark
environment and hand the archive to every JVM they start (``SPARK_SUBMIT_OPTS``). The work below
is what nearly every test does, kept small (writing the archive takes about as long as the work,
and the classes a session loads are most of what there is to archive): a captured session, and
partitioned parquet written and read back with a filter. A JVM whose class path differs from
this one's (Spark's jars alone) ignores the archive without a word.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

from openlineage_subset.spark import enable


def _work(spark: SparkSession, root: Path) -> None:
    rows = spark.range(200).selectExpr("id", "CAST(id % 4 AS STRING) AS day")
    lake = str(root / "lake")
    rows.write.partitionBy("day").mode("overwrite").parquet(lake)
    spark.read.parquet(lake).where("day IN ('1', '2') AND id > 3").groupBy("day").count().collect()


def main(archive: str) -> None:
    os.environ["SPARK_SUBMIT_OPTS"] = (
        f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} -XX:ArchiveClassesAtExit={archive}"
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("class_archive")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.warehouse.dir", str(root / "warehouse"))
            .getOrCreate()
        )
        gateway = spark.sparkContext._gateway
        capture = enable(spark, output=root / "events.jsonl")
        try:
            _work(spark, root)
        finally:
            capture.close()
            spark.stop()
        # The JVM writes the archive as it exits, which it does when its standard input closes:
        # wait for it, so that no JVM started after this script finds half an archive.
        gateway.shutdown()
        gateway.proc.stdin.close()
        gateway.proc.wait(timeout=300)
    if not Path(archive).is_file():
        sys.exit(f"class_archive.py: the JVM left no archive at {archive}")


if __name__ == "__main__":
    main(sys.argv[1])
