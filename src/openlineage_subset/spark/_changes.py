"""The datasets a DDL or ``LOAD DATA`` statement changed, with what happened to them.

Pure Python over :class:`~openlineage_subset.spark._facts.ChangeFacts`. The changed table is the
run's output, named by its location like every other dataset, with the standard
``lifecycleStateChange`` dataset facet (and ``previousIdentifier`` for a rename). A change
scoped to partitions gets an output ``subset`` facet: the partitions themselves when each spec
names every partition column, else the condition the specs state (``TRUNCATE TABLE t
PARTITION (day = '2024-10-15')`` on a table partitioned by day and country empties every
country of that day: ``day = '2024-10-15'``), which holds for every row the change touched.

=====================================================  ==================  ==============
statement                                              lifecycle           output subset
=====================================================  ==================  ==============
``CREATE TABLE`` (not ``... AS SELECT``)               CREATE              none
``DROP TABLE``                                         DROP                none
``TRUNCATE TABLE t [PARTITION (...)]``                 TRUNCATE            the partitions
``ALTER TABLE t ADD COLUMNS``                          ALTER               none
``ALTER TABLE t RENAME TO u``                          RENAME (previous)   none
``ALTER TABLE t ADD|DROP PARTITION (...)``             ALTER               the partitions
``LOAD DATA [LOCAL] INPATH p [OVERWRITE] INTO TABLE``  OVERWRITE or none    the partition
=====================================================  ==================  ==============

Dropping a partition is an ALTER of the table, not a DROP: a consumer that reads only the
lifecycle facet must not take the whole table for gone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from openlineage_subset import all_of, any_of, dump, field, input_facet, output_facet, spec
from openlineage_subset.producer import (
    NULL_PARTITION,
    Report,
    clean_location,
    dataset_identity,
    partition_path,
    split_dataset_root,
    warn_once,
)
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._facts import ChangeFacts, TableFacts
from openlineage_subset.spark._jdbc import jdbc_table_identity
from openlineage_subset.spark._translate import redact_condition

_ACTIONS = {
    "LoadDataCommand": "load",
    "AppendData": "append",
    "OverwriteByExpression": "overwrite",
    "OverwritePartitionsDynamic": "overwrite_partitions",
    "SaveIntoDataSourceCommand": "write",
}
"""Job name parts of the statements whose lifecycle change does not say what they did."""

LIFECYCLE_SCHEMA = (
    "https://openlineage.io/spec/facets/1-0-1/LifecycleStateChangeDatasetFacet.json"
    "#/$defs/LifecycleStateChangeDatasetFacet"
)


@dataclass(frozen=True)
class ChangedDatasets:
    """The JSON of a statement's input and output datasets."""

    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    action: str | None = None
    """What the statement did, for the job name (``create``, ``drop``, ``load``...)."""


def datasets_of_changes(
    changes: Iterable[ChangeFacts],
    config: SubsetConfig | None = None,
    *,
    report: Report = warn_once,
) -> ChangedDatasets:
    """The datasets of DDL and ``LOAD DATA`` statements, as OpenLineage JSON.

    A table that cannot be named (it has no location) is left out and ``report`` says so.
    """
    config = config or SubsetConfig()
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    changes_list = list(changes)
    for change in changes_list:
        if change.table.catalog_only:
            continue  # a catalog entry for another system's table: no dataset changed
        if change.location_guessed:
            report(
                change.table.identifier,
                "its location was not known before the statement (the catalog was first used "
                "by it); named after the catalog's default location for a managed table",
            )
        identity = _identity(change.table, report)
        if identity is None:
            continue
        lifecycle: dict[str, Any] | None = None
        if change.lifecycle is not None:
            lifecycle = {"lifecycleStateChange": change.lifecycle}
            previous = None if change.previous is None else _identity(change.previous, report)
            if previous is not None:
                lifecycle["previousIdentifier"] = {"namespace": previous[0], "name": previous[1]}
        output: dict[str, Any] = {"namespace": identity[0], "name": identity[1]}
        if lifecycle is not None:
            facet = {"_producer": config.producer, "_schemaURL": LIFECYCLE_SCHEMA, **lifecycle}
            output["facets"] = {"lifecycleStateChange": facet}
        if change.partition_specs is not None:
            condition = _redacted(
                partition_change_condition(change.table.partition_columns, change.partition_specs),
                config,
            )
            if condition is not None:
                output["outputFacets"] = {
                    "subset": dump(output_facet(condition, producer=config.producer))
                }
        outputs.append(output)
        if change.source is not None:
            inputs.append(_source_dataset(change.source, config))
    action = None
    if outputs:
        first = next(change for change in changes_list if not change.table.catalog_only)
        action = _ACTIONS.get(first.command) or (first.lifecycle or "change").lower()
    return ChangedDatasets(inputs, outputs, action)


def partition_change_condition(columns: Iterable[str], specs: Iterable[Mapping[str, str]]) -> Any:
    """The subset condition of a change to the partitions that match any of ``specs``.

    Column names are matched without regard to case, as Spark does; a value
    ``__HIVE_DEFAULT_PARTITION__`` is the null partition.

    >>> from openlineage_subset import render
    >>> render(partition_change_condition(["day", "country"], [{"DAY": "d1", "country": "PL"}]))
    "PARTITION (day = 'd1', country = 'PL')"
    >>> render(partition_change_condition(["day", "country"], [{"day": "d1"}, {"day": "d2"}]))
    "day = 'd1' OR day = 'd2'"
    """
    columns = tuple(columns)
    by_lower = {column.lower(): column for column in columns}
    normalized = [
        {by_lower.get(key.lower(), key): _value(value) for key, value in spec_map.items()}
        for spec_map in specs
    ]
    models = spec().models
    if all(set(item) == set(columns) for item in normalized):
        paths = sorted({partition_path(columns, item) for item in normalized})
        rows = {partition_path(columns, item): item for item in normalized}
        return models.PartitionSubsetCondition(
            partitions=[
                models.Partition(dimensions=dict(rows[path]), identifier=path) for path in paths
            ]
        )
    return any_of(
        all_of(field(column) == value for column, value in item.items() if value is not None)
        for item in normalized
    )


def _redacted(condition: Any, config: SubsetConfig) -> Any:
    """``condition`` without the values of the columns ``config`` redacts (None: all of it)."""
    return redact_condition(condition, config.redacts) if config.redact_columns else condition


def _value(text: str) -> str | None:
    return None if text == NULL_PARTITION else text


def _identity(table: TableFacts, report: Report) -> tuple[str, str] | None:
    if table.location is None and table.jdbc is not None:
        return jdbc_table_identity(table.jdbc, table.identifier)
    if table.location is None:
        report(table.identifier, "left out: the catalog gives it no location to name it by")
        return None
    try:
        return dataset_identity(clean_location(table.location))
    except ValueError as error:
        report(table.identifier, f"left out: it cannot be named ({error})")
        return None


def _source_dataset(path: str, config: SubsetConfig) -> dict[str, Any]:
    """What ``LOAD DATA`` read: the dataset its path lies in, and the path as its location."""
    root, trimmed = split_dataset_root(path)
    namespace, name = dataset_identity(root)
    dataset: dict[str, Any] = {"namespace": namespace, "name": name}
    if trimmed:
        models = spec().models
        condition = _redacted(
            models.LocationSubsetCondition(locations=[clean_location(path)]), config
        )
        if condition is not None:
            dataset["inputFacets"] = {
                "subset": dump(input_facet(condition, producer=config.producer))
            }
    return dataset
