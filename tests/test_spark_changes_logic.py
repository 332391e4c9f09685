"""DDL and LOAD DATA lineage on hand-written change facts (no JVM needed)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openlineage_subset import dump, matches, render, validate
from openlineage_subset.spark._changes import datasets_of_changes, partition_change_condition
from openlineage_subset.spark._facts import ChangeFacts, JdbcSource, TableFacts

SALES = TableFacts("db.sales", "file:/warehouse/db.db/sales", ("day", "country"))


def _only_output(change: ChangeFacts, said: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    notes = [] if said is None else said
    changed = datasets_of_changes([change], report=lambda *item: notes.append(item))
    (output,) = changed.outputs
    return output


def test_a_drop_is_the_table_with_its_lifecycle() -> None:
    output = _only_output(ChangeFacts("DropTable", "DROP", SALES))
    assert (output["namespace"], output["name"]) == ("file", "/warehouse/db.db/sales")
    facet = output["facets"]["lifecycleStateChange"]
    assert facet["lifecycleStateChange"] == "DROP"
    assert "outputFacets" not in output, "the whole table"


def test_a_rename_names_the_previous_dataset() -> None:
    before = TableFacts("db.old", "file:/warehouse/db.db/old")
    output = _only_output(ChangeFacts("AlterTableRenameCommand", "RENAME", SALES, previous=before))
    facet = output["facets"]["lifecycleStateChange"]
    assert facet["previousIdentifier"] == {"namespace": "file", "name": "/warehouse/db.db/old"}


def test_full_specs_are_partitions_and_partial_ones_conditions() -> None:
    full = partition_change_condition(("day", "country"), [{"day": "1", "country": "A/B"}])
    assert full.partitions[0].identifier == "day=1/country=A%2FB"
    assert full.partitions[0].dimensions == {"day": "1", "country": "A/B"}
    partial = partition_change_condition(("day", "country"), [{"Day": "d1"}, {"day": "d2"}])
    assert render(partial) == "day = 'd1' OR day = 'd2'"
    for row, inside in (
        ({"day": "d1", "country": "PL"}, True),
        ({"day": "d3", "country": "PL"}, False),
    ):
        assert matches(partial, row) is inside


def test_a_truncated_partition_is_the_output_subset() -> None:
    change = ChangeFacts(
        "TruncateTableCommand", "TRUNCATE", SALES, partition_specs=({"day": "2024-10-15"},)
    )
    output = _only_output(change)
    assert render(output["outputFacets"]["subset"]) == "day = '2024-10-15'"
    event_like = {"subset": output["outputFacets"]["subset"]}
    assert validate(event_like, strict=True) == []


def test_the_null_partition_in_a_spec() -> None:
    condition = partition_change_condition(
        ("country",), [{"country": "__HIVE_DEFAULT_PARTITION__"}]
    )
    assert condition.partitions[0].dimensions == {"country": None}


def test_load_data_reads_its_source() -> None:
    change = ChangeFacts(
        "LoadDataCommand",
        "OVERWRITE",
        SALES,
        partition_specs=({"day": "1", "country": "PL"},),
        source="file:/staging/2024-10-15",
    )
    changed = datasets_of_changes([change])
    (source,) = changed.inputs
    assert (source["namespace"], source["name"]) == ("file", "/staging"), "named like a read"
    assert render(source["inputFacets"]["subset"]) == "LOCATION IN ('file:/staging/2024-10-15')"
    (output,) = changed.outputs
    assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"


@pytest.mark.parametrize("location", [None, "s3a:///no-bucket"])
def test_a_table_that_cannot_be_named_is_said_and_left_out(location: str | None) -> None:
    said: list[tuple[str, str]] = []
    table = TableFacts("db.odd", location)
    changed = datasets_of_changes(
        [ChangeFacts("DropTable", "DROP", table), ChangeFacts("DropTable", "DROP", SALES)],
        report=lambda *item: said.append(item),
    )
    assert [output["name"] for output in changed.outputs] == ["/warehouse/db.db/sales"]
    assert [dataset for dataset, _ in said] == ["db.odd"]


def test_a_guessed_location_is_said() -> None:
    said: list[tuple[str, str]] = []
    _only_output(ChangeFacts("DropTable", "DROP", SALES, location_guessed=True), said)
    assert len(said) == 1 and "default location" in said[0][1]


def test_redacted_partition_columns_leave_no_values_in_outputs() -> None:
    from openlineage_subset.spark import SubsetConfig
    from openlineage_subset.spark._facts import WriteFacts
    from openlineage_subset.spark._writes import output_datasets_from_writes

    config = SubsetConfig(redact_columns={"Country"})
    change = ChangeFacts(
        "TruncateTableCommand", "TRUNCATE", SALES, partition_specs=({"country": "PL"},)
    )
    (output,) = datasets_of_changes([change], config).outputs
    assert "outputFacets" not in output, "the whole table: its partition values are redacted"
    write = WriteFacts(
        command="InsertIntoHadoopFsRelationCommand",
        root="file:/warehouse/db.db/sales",
        table="db.sales",
        partition_columns=("day", "country"),
        static_partitions={"day": "2024-10-15", "country": "PL"},
        files=None,
        num_files=1,
        num_parts=None,
    )
    (dataset,) = output_datasets_from_writes([write], None, config)
    assert dataset.output_facets is None
    (plain,) = output_datasets_from_writes([write], None, SubsetConfig())
    assert "PL" in json.dumps(dump(plain)), "without redaction the partition is listed"


def test_a_jdbc_write_outputs_its_table_named_by_its_database() -> None:
    source = JdbcSource("jdbc:sqlserver://db:1433;databaseName=shop;password=***", table="dbo.t")
    change = ChangeFacts(
        "SaveIntoDataSourceCommand", "OVERWRITE", TableFacts("dbo.t", None, jdbc=source)
    )
    changed = datasets_of_changes([change])
    (output,) = changed.outputs
    assert (output["namespace"], output["name"]) == ("sqlserver://db:1433", "shop.dbo.t")
    assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert changed.action == "write"


def test_a_catalog_entry_for_a_jdbc_table_changes_no_dataset() -> None:
    entry = TableFacts("default.orders", "file:/warehouse/orders", catalog_only=True)
    changed = datasets_of_changes([ChangeFacts("CreateDataSourceTableCommand", "CREATE", entry)])
    assert changed.outputs == [] and changed.action is None
