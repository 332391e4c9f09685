"""Partitions from paths, the rules alone: OpenLineage's trimmers (the cases of openlineage-java's
own trimmer tests, expected as those tests expect them) and which partition a path is."""

from __future__ import annotations

import pytest

from openlineage_subset.lineage.ingestion._directories import (
    location_partition,
    location_partitions,
    read_directories,
)
from openlineage_subset.lineage.ingestion._trimmers import trimmed_name


@pytest.mark.parametrize(
    ("name", "root"),
    [
        # KeyValueTrimmerTest
        ("/tmp/cat", "/tmp/cat"),
        ("/tmp/key=value", "/tmp"),
        ("tmp/key=value", "tmp"),
        ("/tmp/a=b=c", "/tmp/a=b=c"),
        ("key=value", "key=value"),
        ("/key=value", "/key=value"),
        # DateTrimmerTest
        ("/tmp/20250721", "/tmp"),
        ("tmp/20250721", "tmp"),
        ("/tmp/20250722T0901Z", "/tmp"),
        ("/tmp/2025-07-22", "/tmp"),
        ("/tmp/20250722T901Z", "/tmp"),
        ("/tmp/20122321", "/tmp/20122321"),
        ("/tmp/dataset_20122321", "/tmp/dataset_20122321"),
        ("20250721", "20250721"),
        ("/20250721", "/20250721"),
        # MultiDirDateTrimmerTest
        ("/tmp", "/tmp"),
        ("/a/b", "/a/b"),
        ("/tmp/2025/07", "/tmp"),
        ("tmp/2025/07", "tmp"),
        ("/tmp/2025/07/21", "/tmp"),
        ("/tmp/2025/14", "/tmp/2025/14"),
        ("/tmp/2025/07/50", "/tmp/2025/07/50"),
        ("2025/07", "2025/07"),
        ("2025/07/21", "2025/07/21"),
        ("/2025/07", "/2025/07"),
        ("/2025/07/21", "/2025/07/21"),
        # YearMonthTrimmerTest
        ("/tmp/202507", "/tmp"),
        ("/tmp/2025-07", "/tmp"),
        ("tmp/2025-07", "tmp"),
        ("/tmp/202540", "/tmp/202540"),
        ("202507", "202507"),
        ("/202507", "/202507"),
        # DatasetReducerTest
        ("/tmp/some/tested-path/20250721/20250722T901Z/key=value", "/tmp/some/tested-path"),
        ("/tmp/some/tested-path/20250721/20250722T901Z/key=value/", "/tmp/some/tested-path"),
        ("/tmp/some/tested-path/date=20250721/20250722T901Z", "/tmp/some/tested-path"),
        ("some_table_20250923", "some_table_20250923"),
        ("20250722T0901Z", "20250722T0901Z"),
        ("202504", "202504"),
    ],
)
def test_names_are_cut_as_openlineage_trimmers_cut_them(name: str, root: str) -> None:
    assert trimmed_name(name) == root


@pytest.mark.parametrize(
    ("path", "dimensions"),
    [
        ("day=2024-11-03/country=DE", {"day": "2024-11-03", "country": "DE"}),
        ("day=2024-11-03/country=DE/", {"day": "2024-11-03", "country": "DE"}),
        ("2024-11-03", {"date": "2024-11-03"}),
        ("20241103", {"date": "2024-11-03"}),
        ("2024/11/03", {"date": "2024-11-03"}),
        ("2024-11", {"month": "2024-11"}),
        ("202411", {"month": "2024-11"}),
        ("2024/11", {"month": "2024-11"}),
        ("2024/11/03/country=DE", {"date": "2024-11-03", "country": "DE"}),
        # Hive's escapes: %2F is "/", %3D is "=" (in keys and values alike)
        ("country=A%2FB", {"country": "A/B"}),
        ("expr=a%3Db", {"expr": "a=b"}),
        ("note=100%", {"note": "100%"}),  # not an escape: kept
        ("country=__HIVE_DEFAULT_PARTITION__", {"country": None}),
    ],
)
def test_partition_directories_are_read(path: str, dimensions: dict[str, str | None]) -> None:
    read = read_directories(path)
    assert read is not None
    assert dict(read.dimensions) == dimensions
    assert read.identifier == path.strip("/")


@pytest.mark.parametrize(
    "path",
    [
        "k=",  # Spark refuses an empty partition value: no partition
        "=v",
        "a=b=c",  # Hive escapes "=" in values: not a partition directory
        "2024-13-45",
        "2025-02-30",  # no such day (openlineage-java's lenient parse trims it)
        "20250722T0901Z",
        "202540",
        "day=1/day=2",  # one column, two values
        "day=1/other",
        "",
        "day=1//country=DE",
    ],
)
def test_what_is_no_partition_is_not_read(path: str) -> None:
    assert read_directories(path) is None


@pytest.mark.parametrize(
    ("namespace", "name", "location", "identifier"),
    [
        ("file", "/lake/raw", "/lake/raw/day=2024-11-03", "day=2024-11-03"),
        ("file", "/lake/raw", "file:/lake/raw/day=2024-11-03", "day=2024-11-03"),
        ("file", "/lake/raw", "file:///lake/raw/day=2024-11-03/", "day=2024-11-03"),
        ("file", "/lake/raw/", "/lake/raw/day=2024-11-03", "day=2024-11-03"),
        ("s3://bucket", "raw/events", "s3://bucket/raw/events/day=2024-11-03", "day=2024-11-03"),
        ("s3://bucket", "raw/events", "raw/events/2024/11/03", "2024/11/03"),
        ("hdfs://nn:8020", "/warehouse/t", "hdfs://nn:8020/warehouse/t/m=2024-11", "m=2024-11"),
        ("file", "/lake/raw", "/lake/rawx/day=2024-11-03", None),  # another dataset
        ("file", "/lake/raw", "/elsewhere/day=2024-11-03", None),
        ("file", "/lake/raw", "/lake/raw", None),  # the whole dataset: no partition
        ("s3://bucket", "raw/events", "s3://other/raw/events/day=2024-11-03", None),
        ("file", "/lake/raw", "/lake/raw/day=2024-11-03/part-0000.parquet", None),
    ],
)
def test_locations_under_the_root_are_its_partitions(
    namespace: str, name: str, location: str, identifier: str | None
) -> None:
    read = location_partition(namespace, name, location)
    assert (None if read is None else read.identifier) == identifier


def test_a_location_condition_becomes_partitions_where_every_location_reads() -> None:
    condition = {
        "type": "location",
        "locations": ["/lake/raw/day=2024-11-03/country=DE", "/lake/raw/day=2024-11-03"],
    }
    assert location_partitions("file", "/lake/raw", condition) == {
        "type": "partition",
        "partitions": [
            {
                "dimensions": {"day": "2024-11-03", "country": "DE"},
                "identifier": "day=2024-11-03/country=DE",
            },
            {"dimensions": {"day": "2024-11-03"}, "identifier": "day=2024-11-03"},
        ],
    }


def test_the_locations_the_rules_cannot_read_stay_locations() -> None:
    condition = {"type": "location", "locations": ["/lake/raw/day=1", "/elsewhere/day=2"]}
    read = location_partitions("file", "/lake/raw", condition)
    assert read == {
        "type": "binary",
        "operator": "OR",
        "left": {
            "type": "partition",
            "partitions": [{"dimensions": {"day": "1"}, "identifier": "day=1"}],
        },
        "right": {"type": "location", "locations": ["/elsewhere/day=2"]},
    }
    only_outside = {"type": "location", "locations": ["/elsewhere/day=2"]}
    assert location_partitions("file", "/lake/raw", only_outside) is None
    assert location_partitions("file", "/lake/raw", {"type": "partition", "partitions": []}) is None
