"""How docs/cluster.md says to capture on a cluster, done on the standalone test cluster: a script
given to ``spark-submit`` that calls ``enable()``, and an unmodified script under ``ol-subset
run`` with the cluster in ``PYSPARK_SUBMIT_ARGS`` (client deploy mode both: a standalone cluster
runs no Python driver in cluster deploy mode)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset import validate
from tests.spark.conftest import ol_subset, partition_dirs
from tests.spark.standalone import StandaloneCluster

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

JOB = """
import sys
from pyspark.sql import SparkSession
{enable}
spark = SparkSession.builder.appName("on_the_cluster").getOrCreate()
{handle}
rows = spark.createDataFrame([(1, "a"), (2, "b"), (3, "b")], "id int, part string")
rows.write.partitionBy("part").parquet(sys.argv[1])
print("rows", spark.read.parquet(sys.argv[1]).where("part = 'b'").count())
print("master", spark.sparkContext.master)
{close}
spark.stop()
"""
# The driver listens on 127.0.0.1, like the cluster.
DRIVER = ("--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.ui.enabled=false")


@pytest.fixture
def cluster_url(cluster: StandaloneCluster | None) -> str:
    if cluster is None:
        pytest.skip(
            "runs on the standalone test cluster: nox -s cluster (or OL_SUBSET_SPARK_CLUSTER=1)"
        )
    return cluster.url


def _env() -> dict[str, str]:
    # The driver's Python is this one, with the package installed (the README's first step).
    return {**os.environ, "PYSPARK_PYTHON": sys.executable}


def _check_events(events_file: Path, out: Path) -> None:
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    for event in events:
        assert validate(event, strict=True) == [], event
    completed = [
        e for e in events if e["eventType"] == "COMPLETE" and "parent" in e["run"]["facets"]
    ]
    outputs: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    for event in completed:
        outputs.update({o["name"]: o for o in event["outputs"]})
        inputs.update({i["name"]: i for i in event["inputs"]})
    written = outputs[str(out)]["outputFacets"]["subset"]["outputCondition"]["partitions"]
    assert {p["identifier"] for p in written} == partition_dirs(out) == {"part=a", "part=b"}
    read = inputs[str(out)]["inputFacets"]["subset"]["inputCondition"]["partitions"]
    assert [p["dimensions"] for p in read] == [{"part": "b"}]


def test_spark_submit_of_a_script_that_enables_capture(cluster_url: str, tmp_path: Path) -> None:
    from pyspark.find_spark_home import _find_spark_home

    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(JOB).format(
            enable="from openlineage_subset.spark import enable",
            handle="handle = enable(spark, output=sys.argv[2])",
            close="handle.close()",
        )
    )
    out, events = tmp_path / "out", tmp_path / "events.jsonl"
    submit = Path(_find_spark_home()) / "bin" / "spark-submit"
    done = subprocess.run(
        [str(submit), "--master", cluster_url, *DRIVER, str(script), str(out), str(events)],
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rows 2" in done.stdout
    assert f"master {cluster_url}" in done.stdout, "the driver ran elsewhere than on the cluster"
    _check_events(events, out)


def test_ol_subset_run_with_the_cluster_in_pyspark_submit_args(
    cluster_url: str, tmp_path: Path
) -> None:
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(JOB).format(enable="", handle="", close=""))
    out, events = tmp_path / "out", tmp_path / "events.jsonl"
    env = {
        **_env(),
        "PYSPARK_SUBMIT_ARGS": " ".join(["--master", cluster_url, *DRIVER, "pyspark-shell"]),
    }
    done = ol_subset("run", "--output", str(events), str(script), str(out), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rows 2" in done.stdout
    assert f"master {cluster_url}" in done.stdout, "the driver ran elsewhere than on the cluster"
    _check_events(events, out)
