"""The read hierarchy and merging, on hand-written scan facts (no JVM needed)."""

from __future__ import annotations

from typing import Any

from openlineage_subset import dump, render
from openlineage_subset.spark import SubsetConfig
from openlineage_subset.spark._facts import ScanFacts
from openlineage_subset.spark._reads import input_datasets_from_scans
from openlineage_subset.spark._trees import Node

SALES = "file:/lake/sales"


def facts(**changes: Any) -> ScanFacts:
    base: dict[str, Any] = {
        "source": "FileSourceScanExec",
        "format": "parquet",
        "root_paths": (SALES,),
    }
    base.update(changes)
    return ScanFacts(**base)


def files(*dirs: str) -> tuple[str, ...]:
    return tuple(f"{SALES}/{d}" for d in dirs)


def one(*scans: ScanFacts, config: SubsetConfig | None = None) -> tuple[str, str, str | None]:
    (dataset,) = [dump(d) for d in input_datasets_from_scans(scans, config)]
    facet = (dataset.get("inputFacets") or {}).get("subset")
    return dataset["namespace"], dataset["name"], render(facet) if facet else None


COUNTRY_PL = Node(
    "EqualTo",
    {"left": 0, "right": 1},
    (
        Node("AttributeReference", {"name": "country", "dataType": "string"}),
        Node("Literal", {"value": "PL", "dataType": "string"}),
    ),
)


def test_pruned_partitions_are_the_first_level() -> None:
    scan = facts(
        directories=files("d=1/country=PL", "d=2/country=PL"),
        total_partitions=4,
        filters=(COUNTRY_PL,),
        partition_filters=(COUNTRY_PL,),
    )
    assert one(scan) == (
        "file",
        "/lake/sales",
        "PARTITION (d = '1', country = 'PL') OR PARTITION (d = '2', country = 'PL')",
    )


def test_all_partitions_is_not_a_subset_so_the_filter_is_used() -> None:
    scan = facts(directories=files("d=1", "d=2"), total_partitions=2, filters=(COUNTRY_PL,))
    assert one(scan)[2] == "country = 'PL'"


def test_unknown_totals_use_the_partition_filters() -> None:
    table = facts(
        table="db.sales", table_location=SALES, directories=files("d=1"), partition_filters=()
    )
    assert one(table)[2] is None
    pruned = facts(
        table="db.sales",
        table_location=SALES,
        directories=files("d=1"),
        partition_filters=(COUNTRY_PL,),
    )
    assert one(pruned)[2] == "PARTITION (d = '1')"
    only_not_null = Node("IsNotNull", {"child": 0}, (COUNTRY_PL.children[0],))
    assert (
        one(
            facts(
                table="db.sales",
                table_location=SALES,
                directories=files("d=1"),
                partition_filters=(only_not_null,),
            )
        )[2]
        is None
    )


def test_sub_paths_are_partitions_or_locations() -> None:
    sub = facts(root_paths=(f"{SALES}/d=1",), directories=files("d=1/c=PL", "d=1/c=DE"))
    assert one(sub) == (
        "file",
        "/lake/sales",
        "PARTITION (d = '1', c = 'DE') OR PARTITION (d = '1', c = 'PL')",
    )
    logs = "file:/lake/logs"
    dated = facts(
        root_paths=(f"{logs}/2024/10/15", f"{logs}/2024/10/16"),
        directories=(f"{logs}/2024/10/15", f"{logs}/2024/10/16"),
    )
    assert one(dated) == (
        "file",
        "/lake/logs",
        "LOCATION IN ('file:/lake/logs/2024/10/15', 'file:/lake/logs/2024/10/16')",
    )


def test_globs_name_the_dataset_after_their_root() -> None:
    scan = facts(
        root_paths=("file:/lake/raw/a.csv", "file:/lake/raw/b.csv"),
        given_path="/lake/raw/*.csv",
        directories=("file:/lake/raw",),
    )
    assert one(scan) == (
        "file",
        "/lake/raw",
        "LOCATION IN ('file:/lake/raw/a.csv', 'file:/lake/raw/b.csv')",
    )


def test_hive_partition_names() -> None:
    scan = facts(
        source="HiveTableScanExec",
        table="db.t",
        table_location=SALES,
        directories=None,
        partition_filters=(COUNTRY_PL,),
        partition_names=("country=PL",),
    )
    assert one(scan)[2] == "PARTITION (country = 'PL')"


def test_reads_of_one_dataset_merge() -> None:
    pl = facts(directories=files("c=PL"), total_partitions=3)
    de = facts(directories=files("c=DE"), total_partitions=3)
    assert one(pl, de)[2] == "PARTITION (c = 'DE') OR PARTITION (c = 'PL')"
    assert one(pl, facts(directories=files("c=PL", "c=DE", "c=FR"), total_partitions=3))[2] is None
    assert (
        one(
            pl,
            facts(
                directories=files("c=PL", "c=DE", "c=FR"), total_partitions=3, filters=(COUNTRY_PL,)
            ),
        )[2]
        == "PARTITION (c = 'PL') OR country = 'PL'"
    )


def test_limits_and_combination() -> None:
    scan = facts(directories=files("c=PL", "c=DE"), total_partitions=3, filters=(COUNTRY_PL,))
    # More partitions than are listed: condensed (here exactly), not a fall to the next level.
    assert one(scan, config=SubsetConfig(max_partitions=1))[2] == "c = 'DE' OR c = 'PL'"
    # Nothing sound fits in 10 bytes at any level: the whole dataset.
    assert one(scan, config=SubsetConfig(max_condition_bytes=10))[2] is None
    combined = one(scan, config=SubsetConfig(combine_levels=True))[2]
    assert combined == "(PARTITION (c = 'DE') OR PARTITION (c = 'PL')) AND country = 'PL'"


def test_secrets_never_reach_names_or_locations() -> None:
    secret = "s3a://AKIAEXAMPLE:s3cr3t@bucket/logs/2024/10/15?X-Amz-Signature=abc123"
    scan = facts(
        root_paths=(secret,), directories=("s3a://AKIAEXAMPLE:s3cr3t@bucket/logs/2024/10/15",)
    )
    namespace, name, condition = one(scan)
    text = f"{namespace} {name} {condition}"
    for leaked in ("AKIAEXAMPLE", "s3cr3t", "Signature", "abc123"):
        assert leaked not in text
    assert (namespace, name) == ("s3://bucket", "logs")


def test_config_is_checked() -> None:
    import pytest

    with pytest.raises(ValueError, match="max_partitions"):
        SubsetConfig(max_partitions=-1)
    with pytest.raises(TypeError, match="trim_rules"):
        SubsetConfig(trim_rules="dates")  # type: ignore[arg-type]
