"""What a failed write's outputs say it may have changed (pure logic: WriteFacts built here)."""

from __future__ import annotations

from typing import Any

import pytest

from openlineage_subset import dump, matches, validate
from openlineage_subset.spark._facts import WriteFacts
from openlineage_subset.spark._writes import output_datasets_from_writes

ROOT = "file:/lake/sales"
COLUMNS = ("business_date", "country")
# Partitions of the dataset, each with whether a failed write into it could have changed it.
EVERY_PARTITION = [
    {"business_date": "2024-10-15", "country": "DE"},
    {"business_date": "2024-10-15", "country": "PL"},
    {"business_date": "2024-10-16", "country": "DE"},
    {"business_date": "2024-10-16", "country": None},
]


def _write(root: str = ROOT, **given: Any) -> WriteFacts:
    facts: dict[str, Any] = {
        "command": "InsertIntoHadoopFsRelationCommand",
        "root": root,
        "table": None,
        "partition_columns": COLUMNS,
        "static_partitions": {},
        # A failed write is not listed: what is on disk says nothing of what it meant to write.
        "files": None,
        "num_files": None,
        "num_parts": None,
    }
    facts.update(given)
    return WriteFacts(**facts)


def _failed(write: WriteFacts) -> dict[str, Any]:
    (dataset,) = output_datasets_from_writes([write], started_ms=None, failed=True)
    dumped: dict[str, Any] = dump(dataset)
    return dumped


def _may_have_changed(output: dict[str, Any]) -> list[dict[str, str | None]]:
    from openlineage_subset import parse_facet

    facet = (output.get("outputFacets") or {}).get("subset")
    if facet is None:
        return list(EVERY_PARTITION)
    condition = parse_facet(facet).output_condition
    return [partition for partition in EVERY_PARTITION if matches(condition, partition)]


@pytest.mark.parametrize(
    ("static", "expected"),
    [
        # INSERT OVERWRITE ... PARTITION (business_date='2024-10-15', country='DE'): Spark deleted
        # that partition before writing, and wrote nowhere else.
        ({"business_date": "2024-10-15", "country": "DE"}, [EVERY_PARTITION[0]]),
        # PARTITION (business_date='2024-10-16'): every country of that date may be gone.
        ({"business_date": "2024-10-16"}, EVERY_PARTITION[2:]),
    ],
)
def test_a_failed_static_overwrite_may_have_changed_its_static_region(
    static: dict[str, str], expected: list[dict[str, str | None]]
) -> None:
    output = _failed(_write(overwrite=True, static_partitions=static))
    assert _may_have_changed(output) == expected
    assert "facets" not in output, "no lifecycleStateChange: the overwrite did not complete"
    assert validate({"subset": output["outputFacets"]["subset"]}, strict=True) == []


def test_a_failed_write_into_a_partition_directory_is_that_partition() -> None:
    output = _failed(_write(root=f"{ROOT}/business_date=2024-10-16/country=DE", overwrite=True))
    assert output["name"] == "/lake/sales"
    assert _may_have_changed(output) == [EVERY_PARTITION[2]]


@pytest.mark.parametrize(
    "mode",
    [
        {"overwrite": False},  # an append: committed tasks may have left files anywhere
        {"overwrite": True, "dynamic_overwrite": True},  # may have deleted what it did not replace
        {"overwrite": True},  # a static overwrite of the whole dataset
    ],
)
def test_a_failed_write_without_static_values_may_have_changed_everything(
    mode: dict[str, bool],
) -> None:
    output = _failed(_write(**mode))
    assert "outputFacets" not in output and "facets" not in output
    assert _may_have_changed(output) == EVERY_PARTITION


def test_a_completed_overwrite_keeps_its_lifecycle_and_a_failed_one_does_not() -> None:
    write = _write(overwrite=True, static_partitions={"business_date": "2024-10-15"})
    (completed,) = output_datasets_from_writes([write], started_ms=None)
    assert dump(completed)["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert "facets" not in _failed(write)


JOB = "0190a1b2-0000-7000-8000-00000000beef"


def _files(*partitions: str) -> tuple[tuple[str, int], ...]:
    """The files a write of ``partitions`` left, one a partition, all of one job."""
    return tuple(
        (f"{ROOT}/{path}/part-0000{n}-{JOB}.c000.snappy.parquet", 1_700_000_000_000)
        for n, path in enumerate(partitions)
    )


def _completed(write: WriteFacts, **config: Any) -> dict[str, Any]:
    from openlineage_subset.spark import SubsetConfig

    (dataset,) = output_datasets_from_writes(
        [write], started_ms=1_700_000_000_000, config=SubsetConfig(**config)
    )
    dumped: dict[str, Any] = dump(dataset)
    return dumped


LEFT = ("business_date=2024-10-15/country=DE", "business_date=2024-10-16/country=PL")


def test_an_overwrite_of_the_whole_dataset_is_all_of_it_and_lists_the_partitions_it_left() -> None:
    # mode("overwrite") in static mode, no static value: everything there was is gone, and the
    # partitions there are now are those this write left: each listed, beside the root.
    output = _completed(_write(overwrite=True, files=_files(*LEFT), num_files=2))
    assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    facet = output["outputFacets"]["subset"]
    assert validate({"subset": facet}, strict=True) == []
    condition = facet["outputCondition"]
    for values in EVERY_PARTITION:  # all of it: the rest was deleted
        directory = "/".join(f"{k}={v or '__HIVE_DEFAULT_PARTITION__'}" for k, v in values.items())
        assert matches(condition, values, path=f"/lake/sales/{directory}/part-0.parquet")
    assert condition["operator"] == "OR"
    assert {"type": "location", "locations": [ROOT]} in (condition["left"], condition["right"])
    from openlineage_subset.lineage import listed_partitions

    listed, _ = listed_partitions(condition)
    assert [identifier for _, identifier in listed] == list(LEFT)
    assert [dict(dimensions) for dimensions, _ in listed] == [
        {"business_date": "2024-10-15", "country": "DE"},
        {"business_date": "2024-10-16", "country": "PL"},
    ]


def test_an_overwrite_whose_partitions_do_not_fit_is_the_whole_dataset() -> None:
    many = tuple(f"business_date=2024-10-15/country=C{n:03}" for n in range(400))
    write = _write(overwrite=True, files=_files(*many), num_files=len(many))
    output = _completed(write, max_condition_bytes=4096)
    assert "outputFacets" not in output, "condensed, a list says nothing the root does not"
    # Unknown files (not listed): the whole dataset, as before.
    assert "outputFacets" not in _completed(_write(overwrite=True))
