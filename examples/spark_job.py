"""An ordinary PySpark job, with no lineage code: run it under `ol-subset run` to capture it.

ol-subset run --output events.jsonl examples/spark_job.py /tmp/spark-job
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

base = sys.argv[1] if len(sys.argv) > 1 else "/tmp/spark-job"
spark = (
    SparkSession.builder.master("local[2]")
    .appName("orders_by_day")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
orders = spark.createDataFrame(
    [(i, f"2024-10-{13 + i % 4}", ["PL", "DE", "FR"][i % 3], i * 1.5) for i in range(40)],
    "order_id int, day string, country string, amount double",
)
orders.write.mode("overwrite").partitionBy("day", "country").parquet(f"{base}/orders")

recent = spark.read.parquet(f"{base}/orders").where(F.col("day") >= "2024-10-15")
totals = (
    recent.where(F.col("amount") > 10).groupBy("day", "country").agg(F.sum("amount").alias("total"))
)
totals.write.mode("overwrite").partitionBy("day").parquet(f"{base}/totals")
print(
    "days written:",
    sorted(r.day for r in spark.read.parquet(f"{base}/totals").select("day").distinct().collect()),
)
spark.stop()
