"""Names are data: paths and partition values holding newlines, Hadoop's separators, lookalikes.

Spark prints collections of paths and partitions; a name that holds the separator of such a
print must neither lose the action's lineage nor make the event claim another dataset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from openlineage_subset import validate
from openlineage_subset.spark import input_datasets
from tests.spark.conftest import Capture, by_name, condition_of, dims, partition_dirs

pytestmark = pytest.mark.spark

LOOKALIKE = "x\nfile:/etc/shadow"
"""A directory ``x<newline>file:`` with ``etc/shadow`` below it: printed one per line, it reads
as a second path, /etc/shadow."""
HOSTILE_VALUES = ["a\nfile:/etc/passwd", "b],file:/etc/passwd)", "c; isDirectory=false", "plain"]


def _rows(spark: SparkSession) -> Any:
    return spark.createDataFrame(
        [(i, value) for i, value in enumerate(HOSTILE_VALUES)], "id INT, part STRING"
    )


def _completed(capture: Capture, where: Path) -> list[dict[str, Any]]:
    """The COMPLETE events captured since the last call; every dataset they name is in
    ``where`` (none is /etc/shadow)."""
    found = []
    for events in capture.runs().values():
        for event in events:
            assert validate(event, strict=True) == [], event
            for dataset in event["inputs"] + event["outputs"]:
                assert dataset["name"].startswith(f"{where}/"), json.dumps(dataset)
        found += [event for event in events if event["eventType"] == "COMPLETE"]
    return found


def test_a_lookalike_directory_is_one_dataset_read_and_written(
    spark: SparkSession, capture: Capture, tmp_path: Path
) -> None:
    root = tmp_path / LOOKALIKE
    _rows(spark).write.partitionBy("part").parquet(str(root))
    (write,) = _completed(capture, tmp_path)
    (output,) = write["outputs"]
    assert output["name"] == str(root)
    # Hadoop's glob cannot list below a directory holding ":", so the written partitions may be
    # unknown: then the whole dataset (sound); if listed, exact.
    facet = (output.get("outputFacets") or {}).get("subset")
    if facet is not None:
        written = facet["outputCondition"]["partitions"]
        assert {p["identifier"] for p in written} == partition_dirs(root)

    df = spark.read.parquet(str(root)).where(F.col("part").isin(HOSTILE_VALUES[:2]))
    dataset = by_name(input_datasets(df))[str(root)]
    assert {p["dimensions"]["part"] for p in condition_of(dataset)["partitions"]} == set(
        HOSTILE_VALUES[:2]
    )
    assert df.count() == 2
    (read,) = _completed(capture, tmp_path)
    assert [d["name"] for d in read["inputs"]] == [str(root)]


def test_hostile_partition_values_are_read_as_values(spark: SparkSession, tmp_path: Path) -> None:
    root = tmp_path / "values"
    _rows(spark).write.partitionBy("part").parquet(str(root))
    for value in HOSTILE_VALUES:
        df = spark.read.parquet(str(root)).where(F.col("part") == value)
        (dataset,) = by_name(input_datasets(df)).values()
        (partition,) = condition_of(dataset)["partitions"]
        assert partition["dimensions"] == {"part": value} == dims(partition["identifier"])
        assert partition["identifier"] in partition_dirs(root)


def test_a_name_holding_hadoops_separators_degrades_to_the_whole_dataset(
    spark: SparkSession, capture: Capture, tmp_path: Path
) -> None:
    # The listing of what a write created prints each file as {path=...; isDirectory=...}.
    root = tmp_path / "out; isDirectory=false; modification_time=1;"
    _rows(spark).write.partitionBy("part").parquet(str(root))
    (write,) = _completed(capture, tmp_path)
    (output,) = write["outputs"]
    assert output["name"] == str(root)
    facet = (output.get("outputFacets") or {}).get("subset")
    if facet is not None:  # read for sure after all: then it must be exact
        written = {p["identifier"] for p in facet["outputCondition"]["partitions"]}
        assert written == partition_dirs(root)
    assert capture.handle.counts["errors"] == 0
