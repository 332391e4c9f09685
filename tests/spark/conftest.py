"""One local SparkSession for the whole test run, and a small lake of real files and tables.

The data is written by Spark itself (partitioned parquet, csv, json, orc, date-shaped
directories, catalog and Hive tables in an embedded Derby metastore). Expected results are
computed from the files on disk and the rows, never from the adapter.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pyspark = pytest.importorskip(
    "pyspark", reason="the Spark tests need pyspark (pip install .[spark])"
)

from pyspark.sql import SparkSession  # noqa: E402

from openlineage_subset import dump  # noqa: E402
from tests.spark.standalone import IPV4_ONLY, StandaloneCluster  # noqa: E402

SESSION_TIME_ZONE = "America/New_York"
DATES = ["2024-10-14", "2024-10-15", "2024-10-16"]
COUNTRIES = ["PL", "DE", "FR", None, "A/B:C"]


@dataclass(frozen=True)
class Lake:
    """Paths of the datasets the tests read."""

    root: Path
    sales: Path
    plain: Path
    logs: Path
    typed: Path

    def fmt(self, name: str) -> Path:
        return self.root / f"sales_{name}"


ON_CLUSTER = os.environ.get("OL_SUBSET_SPARK_CLUSTER") == "1"
"""Run the Spark tests on a standalone cluster of this machine (``nox -s cluster``) instead of
``local[2]``: a master and two workers of two cores, started from the installed PySpark."""
SUBPROCESS_MASTER = "OL_SUBSET_TEST_MASTER"
"""The master the scripts tests run in a subprocess use (``local[1]`` when it is not set)."""


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster | None]:
    """The standalone cluster the session runs on under ``OL_SUBSET_SPARK_CLUSTER=1``, else
    None. Its daemons are stopped at the end of the run, failed or not."""
    if not ON_CLUSTER:
        yield None
        return
    with StandaloneCluster(
        tmp_path_factory.mktemp("cluster"), workers=2, cores=2, memory="2g"
    ) as started:
        # Drivers of the scripts run in a subprocess listen on 127.0.0.1 too.
        saved = {key: os.environ.get(key) for key in (SUBPROCESS_MASTER, "SPARK_LOCAL_IP")}
        os.environ.update({SUBPROCESS_MASTER: started.url, "SPARK_LOCAL_IP": "127.0.0.1"})
        try:
            yield started
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def cluster_settings(builder: SparkSession.Builder, cluster: StandaloneCluster) -> None:
    """What the test application asks of the cluster: one executor of one core on each worker
    (the other cores stay free for the scripts tests run in a subprocess), everything on
    127.0.0.1, speculation on (the speculative copies of slow tasks are part of what capture
    must get right), and the usual four attempts of a task."""
    (
        builder.master(cluster.url)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.cores.max", "2")
        .config("spark.executor.cores", "1")
        .config("spark.executor.memory", "512m")
        .config("spark.executor.extraJavaOptions", IPV4_ONLY)
        .config("spark.speculation", "true")
        .config("spark.task.maxFailures", "4")
    )


@pytest.fixture(scope="session")
def spark(
    tmp_path_factory: pytest.TempPathFactory, cluster: StandaloneCluster | None
) -> Iterator[SparkSession]:
    base = tmp_path_factory.mktemp("spark")
    # Python workers run this interpreter (the test environment, with this package in it), as
    # PYSPARK_PYTHON or spark.pyspark.python do on a cluster.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master("local[2]")
    if cluster is not None:
        cluster_settings(builder, cluster)
    session = (
        builder.appName("openlineage-subset-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", SESSION_TIME_ZONE)
        .config("spark.sql.warehouse.dir", str(base / "warehouse"))
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={base / 'metastore'};create=true",
        )
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={base}")
        .config("spark.hadoop.hive.exec.dynamic.partition.mode", "nonstrict")
        .enableHiveSupport()
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def sales_rows() -> list[tuple[Any, ...]]:
    rows = []
    for day_index, day in enumerate(DATES):
        for country_index, country in enumerate(COUNTRIES):
            for n in range(3):
                ident = day_index * 100 + country_index * 10 + n
                rows.append((ident, float(ident) / 2, n, day, country))
    return rows


SALES_SCHEMA = "id int, amount double, qty int, business_date string, country string"


def typed_rows() -> list[tuple[Any, ...]]:
    """Rows with every column type the translation handles, nulls included."""
    rows = []
    for i in range(60):
        rows.append(
            (
                i,
                None if i % 17 == 5 else i * 1_000_000_007,
                None if i % 13 == 3 else (i - 30) / 4,
                None if i % 11 == 7 else Decimal(i * 25 - 700) / 100,
                None if i % 19 == 2 else f"s{i % 9}-{'x' * (i % 3)}",
                None if i % 23 == 4 else dt.date(2024, 1, 1) + dt.timedelta(days=i * 3),
                None
                if i % 29 == 6
                else dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
                + dt.timedelta(hours=i * 7, microseconds=i),
                None if i % 7 == 1 else i % 2 == 0,
                [None, "a", "b", "c"][i % 4],
                i % 3,
            )
        )
    return rows


TYPED_SCHEMA = (
    "id int, big long, ratio double, price decimal(10,2), name string, day date, "
    "moment timestamp, flag boolean, part_s string, part_i int"
)


@pytest.fixture(scope="session")
def lake(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    root = tmp_path_factory.mktemp("lake")
    sales = spark.createDataFrame(sales_rows(), SALES_SCHEMA)
    sales.write.partitionBy("business_date", "country").parquet(str(root / "sales"))
    for name in ("csv", "json", "orc"):
        writer = sales.write.partitionBy("business_date", "country")
        writer.format(name).option("header", "true").save(str(root / f"sales_{name}"))
    spark.createDataFrame(sales_rows(), SALES_SCHEMA).write.parquet(str(root / "plain"))
    for day in DATES:
        year, month, dom = day.split("-")
        day_rows = [row for row in sales_rows() if row[3] == day]
        spark.createDataFrame(day_rows, SALES_SCHEMA).write.json(
            str(root / "logs" / year / month / dom)
        )
    spark.createDataFrame(typed_rows(), TYPED_SCHEMA).write.partitionBy("part_s", "part_i").parquet(
        str(root / "typed")
    )
    return Lake(root, root / "sales", root / "plain", root / "logs", root / "typed")


def partition_dirs(root: Path) -> set[str]:
    """Partition directories holding data files, relative to ``root``, from the disk itself."""
    found = set()
    for directory, _, files in os.walk(root):
        if any(name.startswith("part-") for name in files) and Path(directory) != root:
            found.add(Path(directory).relative_to(root).as_posix())
    return found


def dims(relative: str) -> dict[str, str | None]:
    """``k=v/k2=v2`` as the test reads it: split, undo %XX escapes, the null partition is None."""
    from urllib.parse import unquote

    pairs = (part.split("=", 1) for part in relative.split("/"))
    return {
        key: None if value == "__HIVE_DEFAULT_PARTITION__" else unquote(value)
        for key, value in pairs
    }


def by_name(datasets: list[Any]) -> dict[str, dict[str, Any]]:
    """Dumped datasets by name (asserting each dataset appears once)."""
    dumped = [dump(dataset) for dataset in datasets]
    names = [item["name"] for item in dumped]
    assert len(names) == len(set(names)), f"a dataset appears twice: {names}"
    return {item["name"]: item for item in dumped}


def condition_of(dataset: dict[str, Any]) -> dict[str, Any] | None:
    facet = (dataset.get("inputFacets") or {}).get("subset")
    return None if facet is None else facet["inputCondition"]


@pytest.fixture
def v2_sources(spark: SparkSession) -> Iterator[None]:
    """File sources read through DataSource V2 for the duration of a test."""
    key = "spark.sql.sources.useV1SourceList"
    previous = spark.conf.get(key)
    spark.conf.set(key, "")
    yield
    spark.conf.set(key, previous)


@pytest.fixture
def fresh_tables(spark: SparkSession) -> Iterator[list[str]]:
    """Table names a test creates; dropped afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


class MemoryTransport:
    """An openlineage-python style transport that keeps the JSON it would have sent."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def emit(self, event: Any) -> None:
        from openlineage.client.serde import Serde

        self.events.append(json.loads(Serde.to_json(event)))


@dataclass
class Capture:
    """A capture enabled on the test session, with its events in memory."""

    handle: Any
    transport: MemoryTransport

    def runs(self) -> dict[str, list[dict[str, Any]]]:
        """Events of the actions captured since the last call, by run id (the app's excluded)."""
        self.handle.flush()
        events, self.transport.events = self.transport.events, []
        runs: dict[str, list[dict[str, Any]]] = {}
        for event in events:
            if "parent" in event["run"].get("facets", {}):
                runs.setdefault(event["run"]["runId"], []).append(event)
        return runs


@pytest.fixture
def capture(spark: SparkSession, tmp_path: Path) -> Iterator[Capture]:
    from openlineage_subset.spark import enable

    transport = MemoryTransport()
    handle = enable(spark, transport=transport, quarantine=tmp_path / "quarantine.jsonl")
    recorder = Capture(handle, transport)
    recorder.runs()
    yield recorder
    handle.close()


@pytest.fixture(scope="session")
def connect_client() -> None:
    """Skips where there is no Spark Connect server to start or no client to talk to it."""
    import pyspark

    if int(pyspark.__version__.split(".")[0]) < 4:
        pytest.skip("PySpark 3.5's pip package holds no Spark Connect server to start")
    for module in ("grpc", "pyarrow", "pandas", "google.rpc", "zstandard"):
        pytest.importorskip(module, reason="the Spark Connect client needs pyspark[connect]")


def data_files(root: Path) -> dict[str, float]:
    """Data files below ``root`` with their modification times (hidden ones left out)."""
    found = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        for name in files:
            if not name.startswith((".", "_")) and not name.endswith(".crc"):
                path = Path(directory) / name
                found[str(path)] = path.stat().st_mtime
    return found


def created_partitions(before: dict[str, float], root: Path) -> set[str]:
    """Partition directories (relative to ``root``) of files that appeared since ``before``."""
    after = data_files(root)
    return {
        Path(path).parent.relative_to(root).as_posix()
        for path, mtime in after.items()
        if before.get(path) != mtime
    }


def written_identifiers(output: dict[str, Any]) -> set[str] | None:
    """The partition paths an output's subset facet lists, each with the dimensions its path
    says (None: no facet, the whole dataset)."""
    facet = (output.get("outputFacets") or {}).get("subset")
    if facet is None or left_by_whole(output) is not None:
        return None
    partitions = facet["outputCondition"]["partitions"]
    for partition in partitions:
        assert partition["dimensions"] == dims(partition["identifier"])
    return {partition["identifier"] for partition in partitions}


def left_by_whole(output: dict[str, Any]) -> set[str] | None:
    """The partition paths an overwrite of a whole partitioned dataset says it left (its root's
    location OR them listed, each with the dimensions its path says); None when its output
    says something else."""
    condition = ((output.get("outputFacets") or {}).get("subset") or {}).get("outputCondition")
    if not condition or condition["type"] != "binary" or condition["operator"] != "OR":
        return None
    whole, listed = sorted((condition["left"], condition["right"]), key=lambda side: side["type"])
    assert whole == {"type": "location", "locations": [f"file:{output['name']}"]}, whole
    assert listed["type"] == "partition", listed
    for partition in listed["partitions"]:
        assert partition["dimensions"] == dims(partition["identifier"])
    return {partition["identifier"] for partition in listed["partitions"]}


def covered_by_output(dataset: dict[str, Any], changed: set[str]) -> set[str]:
    """The partition paths among ``changed`` that an output's subset says may have changed.

    No subset facet covers everything; a condition is evaluated on each partition's values.
    """
    from openlineage_subset import matches, parse_facet

    facet = (dataset.get("outputFacets") or {}).get("subset")
    if facet is None:
        return set(changed)
    condition = parse_facet(facet).output_condition
    return {path for path in changed if matches(condition, dims(path))}


def ol_subset(
    *arguments: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m openlineage_subset ARGUMENTS...`` in a subprocess, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "openlineage_subset", *arguments],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env=env,
        check=False,
    )
