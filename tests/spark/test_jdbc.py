"""JDBC reads and writes on real Spark, against Spark's bundled Derby database.

A write is one run whose output is the database's table (``OVERWRITE`` for an overwrite, the
whole table: no subset); a read names the table, or the tables of its query, with the filters
the database applied as a condition that holds for every row read (checked against the rows in
Derby); a ``partitionColumn`` with bounds is no filter. Expected names come from the URL and the
table the test gives (the naming spec: an embedded Derby database by its directory), and no
credential given in the URL or the options appears anywhere in the events or the log.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from openlineage_subset import matches, validate
from tests.spark.conftest import ON_CLUSTER, Capture, ol_subset

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(
        ON_CLUSTER,
        reason="an embedded Derby database lives in one JVM: a cluster's executors cannot reach it",
    ),
]

DRIVER = "org.apache.derby.jdbc.EmbeddedDriver"
SCHEMA = "id int, name string, k int, day date, amount double"
TYPES = {"id": "int", "name": "string", "k": "int", "day": "date", "amount": "double"}
# Derby compares no CLOB (Spark's default column type for strings) with a literal: a filter on
# name could not be pushed down.
COLUMN_TYPES = "name VARCHAR(64)"
USER, PASSWORD = "etl_user", "S3cr3tZq7pw"
UNSURE_QUERY = 'SELECT "id" --a comment MySQL would not take for one\nFROM APP.SALES'
"""A query Derby runs whose tables are not told for sure: databases read ``--a`` differently."""


def _rows() -> list[tuple[Any, ...]]:
    start = dt.date(2024, 10, 10)
    return [(i, f"n{i % 7}", i % 3, start + dt.timedelta(days=i % 9), i * 1.5) for i in range(60)]


@pytest.fixture
def database(tmp_path: Path) -> tuple[str, Path]:
    """A fresh embedded Derby database in a directory of its own: its URL and directory."""
    directory = tmp_path / "derby" / "shop"
    return f"jdbc:derby:{directory};create=true", directory


def _write(spark: SparkSession, url: str, table: str, rows: DataFrame | None = None) -> None:
    frame = rows if rows is not None else spark.createDataFrame(_rows(), SCHEMA)
    (
        frame.write.format("jdbc")
        .option("url", url)
        .option("dbtable", table)
        .option("driver", DRIVER)
        .option("createTableColumnTypes", COLUMN_TYPES)
        .mode("overwrite")
        .save()
    )


def _reader(spark: SparkSession, url: str) -> Any:
    return spark.read.format("jdbc").option("url", url).option("driver", DRIVER)


def _completed(capture: Capture) -> list[dict[str, Any]]:
    """The COMPLETE events of the runs captured since the last call (each checked valid)."""
    found = []
    for events in capture.runs().values():
        for event in events:
            assert validate(event, strict=True) == [], event
        found += [event for event in events if event["eventType"] == "COMPLETE"]
    return found


def _one_with(events: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The one event with ``key`` (``inputs`` or ``outputs``) naming a Derby table."""
    chosen = [e for e in events if any(d["namespace"].startswith("file:") for d in e[key])]
    assert len(chosen) == 1, [(e["job"]["name"], e["inputs"], e["outputs"]) for e in events]
    return chosen[0]


def _condition(dataset: dict[str, Any]) -> dict[str, Any] | None:
    facet = (dataset.get("inputFacets") or {}).get("subset")
    return None if facet is None else dict(facet["inputCondition"])


def _all_rows(spark: SparkSession, url: str, table: str) -> list[dict[str, Any]]:
    return [row.asDict() for row in _reader(spark, url).option("dbtable", table).load().collect()]


def _holds_for_every_row_read(
    condition: dict[str, Any], everything: list[dict[str, Any]], read: list[dict[str, Any]]
) -> None:
    """Sound (it holds for every row the read returned) and a real subset (it leaves out some
    row of the table)."""
    assert read, "the read returned rows"
    for row in read:
        assert matches(condition, row, TYPES), (condition, row)
    assert not all(matches(condition, row, TYPES) for row in everything), condition


# -- writes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_a_jdbc_write_is_a_run_whose_output_is_the_table(
    spark: SparkSession, capture: Capture, database: tuple[str, Path], tmp_path: Path, mode: str
) -> None:
    url, directory = database
    source = tmp_path / "source"
    spark.createDataFrame(_rows(), SCHEMA).write.parquet(str(source))
    _write(spark, url, "APP.SALES")
    capture.runs()
    (
        spark.read.parquet(str(source))
        .where("k = 1")
        .write.format("jdbc")
        .option("url", url)
        .option("dbtable", "APP.SALES")
        .option("driver", DRIVER)
        .mode(mode)
        .save()
    )
    write = _one_with(_completed(capture), "outputs")
    (output,) = write["outputs"]
    # The naming spec: an embedded Derby database by its directory, the table by its name.
    assert (output["namespace"], output["name"]) == (f"file:{directory}", "APP.SALES")
    assert "outputFacets" not in output, "the whole table: no subset"
    lifecycle = (output.get("facets") or {}).get("lifecycleStateChange", {})
    assert lifecycle.get("lifecycleStateChange") == ("OVERWRITE" if mode == "overwrite" else None)
    (read,) = write["inputs"]
    assert (read["namespace"], read["name"]) == ("file", str(source)), "what the write read"
    assert write["job"]["name"].endswith(".write.app_sales")
    expected = 20 + (60 if mode == "append" else 0)
    assert len(_all_rows(spark, url, "APP.SALES")) == expected, "the write itself is unchanged"


def test_write_jdbc_and_insert_into_a_jdbc_table_are_runs_too(
    spark: SparkSession, capture: Capture, database: tuple[str, Path], fresh_tables: list[str]
) -> None:
    url, directory = database
    rows = spark.createDataFrame(_rows(), SCHEMA)
    rows.write.jdbc(
        url,
        "APP.ORDERS",
        mode="overwrite",
        properties={"driver": DRIVER, "createTableColumnTypes": COLUMN_TYPES},
    )
    (output,) = _one_with(_completed(capture), "outputs")["outputs"]
    assert (output["namespace"], output["name"]) == (f"file:{directory}", "APP.ORDERS")
    fresh_tables.append("jdbc_orders")
    spark.sql(
        f"CREATE TABLE jdbc_orders USING jdbc "
        f"OPTIONS (url '{url}', dbtable 'APP.ORDERS', driver '{DRIVER}')"
    )
    created = _completed(capture)
    assert not any(e["outputs"] for e in created), "a catalog entry: no dataset was created"
    rows.limit(5).write.insertInto("jdbc_orders")
    (output,) = _one_with(_completed(capture), "outputs")["outputs"]
    assert (output["namespace"], output["name"]) == (f"file:{directory}", "APP.ORDERS")
    spark.table("jdbc_orders").where("k = 2").count()
    (read,) = _one_with(_completed(capture), "inputs")["inputs"]
    assert (read["namespace"], read["name"]) == (f"file:{directory}", "APP.ORDERS")


# -- reads -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    [
        "id > 40",
        "k = 1 AND name = 'n3'",
        "day >= DATE'2024-10-15' AND amount < 60",
        "k IN (0, 2) OR name = 'n1'",
        "NOT (k = 1) AND id <> 7",
    ],
)
def test_a_jdbc_read_names_the_table_with_the_filters_pushed_down(
    spark: SparkSession, capture: Capture, database: tuple[str, Path], where: str
) -> None:
    url, directory = database
    _write(spark, url, "APP.SALES")
    everything = _all_rows(spark, url, "APP.SALES")
    capture.runs()
    read = _reader(spark, url).option("dbtable", "APP.SALES").load().where(where)
    returned = [row.asDict() for row in read.collect()]
    (dataset,) = _one_with(_completed(capture), "inputs")["inputs"]
    assert (dataset["namespace"], dataset["name"]) == (f"file:{directory}", "APP.SALES")
    condition = _condition(dataset)
    assert condition is not None, "the filters Spark pushed down"
    _holds_for_every_row_read(condition, everything, returned)


def test_partition_bounds_split_the_read_and_are_no_condition(
    spark: SparkSession, capture: Capture, database: tuple[str, Path]
) -> None:
    url, directory = database
    _write(spark, url, "APP.SALES")
    everything = _all_rows(spark, url, "APP.SALES")
    capture.runs()
    bounded = (
        _reader(spark, url)
        .option("dbtable", "APP.SALES")
        .option("partitionColumn", "id")
        .option("lowerBound", "10")
        .option("upperBound", "30")
        .option("numPartitions", "3")
        .load()
    )
    assert bounded.count() == len(everything), "every row is read, below and above the bounds"
    (dataset,) = _one_with(_completed(capture), "inputs")["inputs"]
    assert (dataset["namespace"], dataset["name"]) == (f"file:{directory}", "APP.SALES")
    assert _condition(dataset) is None, "the whole table"
    returned = [row.asDict() for row in bounded.where("k = 2").collect()]
    assert any(row["id"] < 10 for row in returned) and any(row["id"] >= 30 for row in returned)
    (dataset,) = _one_with(_completed(capture), "inputs")["inputs"]
    condition = _condition(dataset)
    assert condition is not None
    _holds_for_every_row_read(condition, everything, returned)


def test_a_query_read_names_the_tables_of_its_query(
    spark: SparkSession, capture: Capture, database: tuple[str, Path]
) -> None:
    url, directory = database
    _write(spark, url, "APP.SALES")
    _write(spark, url, "APP.OTHER")
    everything = _all_rows(spark, url, "APP.SALES")
    capture.runs()
    query = 'SELECT "id", "k", "day" FROM APP.SALES WHERE "name" <> \'n2\''
    returned = [
        row.asDict()
        for row in _reader(spark, url).option("query", query).load().where("id < 20").collect()
    ]
    (dataset,) = _one_with(_completed(capture), "inputs")["inputs"]
    assert (dataset["namespace"], dataset["name"]) == (f"file:{directory}", "APP.SALES")
    condition = _condition(dataset)
    assert condition is not None, "its rows are rows of APP.SALES: id < 20 holds for them"
    _holds_for_every_row_read(condition, everything, returned)

    joined = '(SELECT s."id", o."k" FROM APP.SALES s JOIN APP.OTHER o ON s."id" = o."id") q'
    _reader(spark, url).option("dbtable", joined).load().where("k = 1").count()
    (read,) = [e for e in _completed(capture) if e["inputs"]]
    names = {(d["namespace"], d["name"]) for d in read["inputs"]}
    assert names == {(f"file:{directory}", "APP.SALES"), (f"file:{directory}", "APP.OTHER")}
    assert all(_condition(d) is None for d in read["inputs"]), "a join: no condition on either"


def test_a_query_that_cannot_be_read_for_sure_names_the_query(
    spark: SparkSession, capture: Capture, database: tuple[str, Path], caplog: Any
) -> None:
    url, directory = database
    _write(spark, url, "APP.SALES")
    capture.runs()
    with caplog.at_level(logging.WARNING, logger="openlineage_subset"):
        assert _reader(spark, url).option("query", UNSURE_QUERY).load().count() == 60
    (dataset,) = _one_with(_completed(capture), "inputs")["inputs"]
    assert (dataset["namespace"], dataset["name"]) == (f"file:{directory}", UNSURE_QUERY)
    assert _condition(dataset) is None
    assert "named after its query" in caplog.text


def test_a_jdbc_catalogs_table_is_read_with_its_pushed_predicates(
    spark: SparkSession, capture: Capture, database: tuple[str, Path], tmp_path: Path
) -> None:
    url, directory = database
    _write(spark, url, "APP.SALES")
    everything = _all_rows(spark, url, "APP.SALES")
    catalog = f"spark.sql.catalog.jdbc_{tmp_path.name.replace('-', '_')}"
    spark.conf.set(catalog, "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog")
    spark.conf.set(f"{catalog}.url", url)
    spark.conf.set(f"{catalog}.driver", DRIVER)
    capture.runs()
    name = catalog.rpartition(".")[2]
    table = spark.table(f"{name}.APP.SALES")
    returned = [row.asDict() for row in table.where("id > 30 AND k IN (1, 2)").collect()]
    (dataset,) = _one_with(_completed(capture), "inputs")["inputs"]
    assert (dataset["namespace"], dataset["name"]) == (f"file:{directory}", "APP.SALES")
    condition = _condition(dataset)
    assert condition is not None
    _holds_for_every_row_read(condition, everything, returned)


# -- credentials -------------------------------------------------------------------------------


def test_no_credential_reaches_an_event_or_the_log(
    spark: SparkSession, capture: Capture, tmp_path: Path, caplog: Any
) -> None:
    # Derby takes user and password as URL attributes; the options carry them too.
    url = f"jdbc:derby:memory:creds_{tmp_path.name};create=true;user={USER};password={PASSWORD}"
    secret_options = {"user": USER, "password": PASSWORD, "driver": DRIVER}
    with caplog.at_level(logging.DEBUG, logger="openlineage_subset"):
        rows = spark.createDataFrame(_rows(), SCHEMA)
        rows.write.format("jdbc").options(url=url, dbtable="APP.SALES", **secret_options).option(
            "createTableColumnTypes", COLUMN_TYPES
        ).mode("overwrite").save()
        for option, value in (("dbtable", "APP.SALES"), ("query", UNSURE_QUERY)):
            reader = spark.read.format("jdbc").options(url=url, **secret_options)
            reader.option(option, value).load().where("id > 1").count()
        events = [event for runs in capture.runs().values() for event in runs]
    text = json.dumps(events)
    assert f"creds_{tmp_path.name}" in text, "the runs were captured"
    for secret in (USER, PASSWORD, USER.upper()):
        assert secret not in text
        assert secret not in caplog.text


# -- a whole script, unmodified, under ol-subset run ---------------------------------------------

SCRIPT = textwrap.dedent(
    """
    import os, sys
    from pyspark.sql import SparkSession
    master = os.environ.get("OL_SUBSET_TEST_MASTER", "local[1]")
    spark = (SparkSession.builder.master(master).appName("jdbc round trip")
             .config("spark.ui.enabled", "false").getOrCreate())
    url, source = sys.argv[1], sys.argv[2]
    driver = "org.apache.derby.jdbc.EmbeddedDriver"
    spark.createDataFrame([(i, i % 3) for i in range(30)], "id int, k int").write.parquet(source)
    (spark.read.parquet(source).write.format("jdbc").option("url", url)
     .option("dbtable", "APP.T").option("driver", driver).option("user", "etl")
     .option("password", "Zq7hunter2").mode("overwrite").save())
    read = (spark.read.format("jdbc").option("url", url).option("dbtable", "APP.T")
            .option("driver", driver).load())
    print("rows", read.where("id >= 20").count())
    spark.stop()
    """
)


def test_ol_subset_run_captures_a_jdbc_round_trip(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    events_file = tmp_path / "events.jsonl"
    directory = tmp_path / "db"
    done = ol_subset(
        "run",
        "--output",
        str(events_file),
        str(script),
        f"jdbc:derby:{directory};create=true",
        str(tmp_path / "source"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rows 10" in done.stdout
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    assert all(validate(event, strict=True) == [] for event in events)
    table = (f"file:{directory}", "APP.T")
    completed = [e for e in events if e["eventType"] == "COMPLETE"]
    writes = [e for e in completed if table in {(o["namespace"], o["name"]) for o in e["outputs"]}]
    assert len(writes) == 1 and writes[0]["inputs"][0]["name"] == str(tmp_path / "source")
    reads = [e for e in completed if table in {(i["namespace"], i["name"]) for i in e["inputs"]}]
    assert len(reads) == 1
    (read,) = reads[0]["inputs"]
    condition = read["inputFacets"]["subset"]["inputCondition"]
    assert all(matches(condition, {"id": i}) == (i >= 20) for i in range(30))
    assert "Zq7hunter2" not in events_file.read_text() and "Zq7hunter2" not in done.stderr
    assert "capture error" not in done.stderr and "Traceback" not in done.stderr
    actions = {e["run"]["runId"] for e in events if "parent" in e["run"].get("facets", {})}
    assert f"ol-subset run: {len(actions)} action(s) captured" in done.stderr
    assert len(actions) >= 3, "the parquet write, the JDBC write and the JDBC read"
