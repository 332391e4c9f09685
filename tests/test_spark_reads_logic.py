"""The read hierarchy and merging, on hand-written scan facts (no JVM needed)."""

from __future__ import annotations

from typing import Any

from openlineage_subset import dump, render
from openlineage_subset.spark import SubsetConfig
from openlineage_subset.spark._facts import JdbcSource, ScanFacts
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


# -- JDBC scans: the tables their options name, the condition of the filters the database applied


def jdbc_scan(source: JdbcSource, *filters: Node) -> ScanFacts:
    return ScanFacts(
        source="RowDataSourceScanExec", format="jdbc", root_paths=(), filters=filters, jdbc=source
    )


def _compare(kind: str, column: str, data_type: str, value: str) -> Node:
    return Node(
        kind,
        {"left": 0, "right": 1},
        (
            Node("AttributeReference", {"name": column, "dataType": data_type}),
            Node("Literal", {"value": value, "dataType": data_type}),
        ),
    )


POSTGRES = "jdbc:postgresql://db.example.com/shop"
ID_ABOVE_40 = _compare("GreaterThan", "id", "integer", "40")


def test_a_jdbc_table_read_has_the_condition_of_its_filters() -> None:
    scan = jdbc_scan(JdbcSource(POSTGRES, table="public.orders"), ID_ABOVE_40, COUNTRY_PL)
    assert one(scan) == (
        "postgres://db.example.com:5432",
        "shop.public.orders",
        "id > 40 AND country = 'PL'",
    )


def test_a_query_of_one_table_keeps_the_condition_and_a_join_drops_it() -> None:
    plain = JdbcSource(POSTGRES, query="SELECT id, country FROM public.orders WHERE x = 1")
    assert one(jdbc_scan(plain, ID_ABOVE_40))[1:] == ("shop.public.orders", "id > 40")
    joined = JdbcSource(POSTGRES, table="(SELECT o.id FROM orders o JOIN items i USING (id)) q")
    found = [dump(d) for d in input_datasets_from_scans([jdbc_scan(joined, ID_ABOVE_40)])]
    assert {d["name"] for d in found} == {"shop.orders", "shop.items"}
    assert not any("inputFacets" in d for d in found), "a join: its rows are no table's rows"
    renamed = JdbcSource(POSTGRES, query="SELECT amount AS id FROM orders")
    assert one(jdbc_scan(renamed, ID_ABOVE_40))[2] is None, "id is not the table's id"


def test_a_query_that_cannot_be_read_for_sure_names_the_query_and_says_so() -> None:
    query = "SELECT * FROM orders, LATERAL f(orders.id)"
    said: list[tuple[str, str]] = []
    scan = jdbc_scan(JdbcSource(POSTGRES, query=query), ID_ABOVE_40)
    found = [dump(d) for d in input_datasets_from_scans([scan], report=lambda *a: said.append(a))]
    assert found == [{"namespace": "postgres://db.example.com:5432", "name": query}]
    assert said == [
        (
            f"postgres://db.example.com:5432/{query}",
            "named after its query: the tables it reads cannot be told for sure",
        )
    ]
    redacting = SubsetConfig(redact_columns={"ssn"})
    left_out = input_datasets_from_scans([scan], redacting, report=lambda *a: said.append(a))
    assert left_out == [] and "may hold redacted values" in said[-1][1]


def test_a_prepare_query_makes_the_tables_unsure() -> None:
    source = JdbcSource(POSTGRES, query="SELECT * FROM tmp", prepare_query=True)
    assert one(jdbc_scan(source))[1:] == ("SELECT * FROM tmp", None)


def test_reads_of_one_table_by_two_scans_merge() -> None:
    source = JdbcSource(POSTGRES, table="orders")
    assert one(jdbc_scan(source, ID_ABOVE_40), jdbc_scan(source, COUNTRY_PL))[2] == (
        "id > 40 OR country = 'PL'"
    )
    assert one(jdbc_scan(source, ID_ABOVE_40), jdbc_scan(source))[2] is None
