"""One step of the test lake's daily DAG, as a user's unmodified PySpark script would be.

``lake_step.py NAME SOURCE TARGET DAY``: read partition ``day=DAY`` of the CSV dataset SOURCE,
sum ``amount`` per country, and overwrite partition ``day=DAY`` of the CSV dataset TARGET. Run
under ``ol-subset run`` by tests/airflow/dags/lake_daily.py, with the Airflow task's parent
run passed as Spark confs (``PYSPARK_SUBMIT_ARGS``). One local session, a few rows.
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession, functions

name, source, target, day = sys.argv[1:5]
spark = (
    SparkSession.builder.master("local[1]")
    .appName(name)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "1")
    .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
    .getOrCreate()
)
# A schema given: inferring one would read a file of some other day (the first one found).
rows = (
    spark.read.schema("country STRING, amount LONG, day STRING")
    .option("header", "true")
    .csv(source)
    .where(functions.col("day") == day)
)
summed = rows.groupBy("day", "country").agg(functions.sum("amount").alias("amount"))
summed.write.mode("overwrite").option("header", "true").partitionBy("day").csv(target)
spark.stop()
