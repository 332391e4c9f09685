"""Partitions from paths over ``POST /api/v1/lineage``: the store's partition_directories setting
holds for what the service stores, read for each batch (set while it runs, it holds next)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from openlineage_subset.lineage import LineageStore, set_partition_directories
from tests.service.conftest import Server
from tests.service.helpers import dataset_names

DATA = Path(__file__).parent.parent / "data" / "openlineage_spark"


def test_posted_partition_directories_follow_the_stores_setting(
    serve: Callable[..., Server],
) -> None:
    server = serve()
    lines = (DATA / "pipeline_directories.jsonl").read_bytes().splitlines()
    for line in lines[:4]:  # the two writes of /lake/raw: grouped (the default)
        assert server.request("POST", "/api/v1/lineage", line)[0] == 201
    assert dataset_names(server.db) == {"/lake/raw"}
    with LineageStore.open(server.db) as store:
        set_partition_directories(store, "as-datasets")
    for line in lines[4:]:  # the aggregations: their directories stay datasets
        assert server.request("POST", "/api/v1/lineage", line)[0] == 201
    assert dataset_names(server.db) == {
        "/lake/raw",
        "/lake/raw/day=2024-11-03/country=DE",
        "/lake/raw/day=2024-11-03/country=FR",
        "/lake/raw/day=2024-11-04/country=DE",
        "/lake/raw/day=2024-11-04/country=FR",
        "/lake/agg/day=2024-11-03",
        "/lake/agg/day=2024-11-04",
    }
    assert json.loads(lines[0])["outputs"][0]["name"].startswith("/lake/raw/")
