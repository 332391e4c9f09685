"""Bounded events on real Spark plans: every event within its byte budget, conditions condensed
soundly instead of dropped, for reads and for writes."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from openlineage_subset import matches, validate
from openlineage_subset.producer import json_size
from openlineage_subset.spark import SubsetConfig, enable
from tests.spark.conftest import MemoryTransport, covered_by_output, dims, partition_dirs

BUDGET = 65_536


def _runs(transport: MemoryTransport) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {}
    for event in transport.events:
        if "parent" in event["run"].get("facets", {}):
            runs.setdefault(event["run"]["runId"], []).append(event)
    return runs


def test_five_large_reads_share_one_event_budget(spark: SparkSession, tmp_path: Path) -> None:
    picked = random.Random(7)
    wanted: dict[str, set[int]] = {}
    frames = []
    for index in range(5):
        path = tmp_path / f"customers_{index}"
        spark.range(3_000).withColumnRenamed("id", "customer_id").write.parquet(str(path))
        ids = set(picked.sample(range(3_000), 700))
        wanted[str(path)] = ids
        frames.append(spark.read.parquet(str(path)).where(F.col("customer_id").isin(*ids)))
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    transport = MemoryTransport()
    handle = enable(
        spark,
        transport=transport,
        quarantine=tmp_path / "q.jsonl",
        config=SubsetConfig(max_event_bytes=BUDGET),
    )
    try:
        assert union.count() == 5 * 700, "the job's result is unchanged"
        handle.flush()
    finally:
        handle.close()
    (events,) = _runs(transport).values()
    assert events[0]["eventType"] == "START"
    assert events[-1]["eventType"] == "COMPLETE"
    for event in events:
        assert len(json.dumps(event)) <= BUDGET  # as the transport serialised it
        assert validate(event, strict=True) == []
    inputs = {d["name"]: d for e in events if e["eventType"] == "COMPLETE" for d in e["inputs"]}
    assert set(inputs) == set(wanted), "no dataset lost to the budget"
    for name, ids in wanted.items():
        facet = inputs[name]["inputFacets"]["subset"]
        # Sound: every row the job read holds for the condensed condition.
        for customer_id in ids:
            assert matches(facet, {"customer_id": customer_id}, {"customer_id": "bigint"})
    assert handle.counts["datasets degraded"] == 0


def test_an_overwrite_of_many_partitions_is_condensed_exactly(
    spark: SparkSession, tmp_path: Path
) -> None:
    target = tmp_path / "daily"
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=n) for n in range(40)]
    rows = [(day, shop, 1) for day in days for shop in range(1, 11)]
    frame = spark.createDataFrame(rows, "business_date date, shop int, qty int")
    frame.repartition("business_date", "shop").write.partitionBy("business_date", "shop").parquet(
        str(target)
    )
    rewrite = frame.where(F.col("business_date").between(days[10], days[29]))
    transport = MemoryTransport()
    handle = enable(
        spark,
        transport=transport,
        quarantine=tmp_path / "q.jsonl",
        config=SubsetConfig(max_partitions=50),
    )
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        rewrite.repartition("business_date", "shop").write.mode("overwrite").partitionBy(
            "business_date", "shop"
        ).parquet(str(target))
        handle.flush()
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
        handle.close()
    (events,) = _runs(transport).values()
    (output,) = events[-1]["outputs"]
    condition = output["outputFacets"]["subset"]["outputCondition"]
    assert condition["type"] != "partition", "200 partitions, 50 listed at most: condensed"
    on_disk = partition_dirs(target)
    assert len(on_disk) == 400
    rewritten = {
        p
        for p in on_disk
        if days[10].isoformat() <= dims(p)["business_date"] <= days[29].isoformat()
    }
    assert len(rewritten) == 200
    # Exact on the dataset's partitions: the ones rewritten, and none of the others.
    assert covered_by_output(output, on_disk) == rewritten
    assert json_size(condition) < 1_000


def test_an_over_long_app_name_never_makes_an_event_over_the_budget(
    spark: SparkSession, tmp_path: Path
) -> None:
    from openlineage_subset.spark import LineageSettingsWarning

    path = tmp_path / "numbers"
    spark.range(10).write.parquet(str(path))
    transport = MemoryTransport()
    with pytest.warns(LineageSettingsWarning, match="cut"):
        handle = enable(
            spark,
            app_name="A" * 1_100_000,
            transport=transport,
            quarantine=tmp_path / "q.jsonl",
            config=SubsetConfig(max_event_bytes=BUDGET),
        )
    try:
        assert spark.read.parquet(str(path)).count() == 10
        handle.flush()
    finally:
        handle.close()
    assert len(transport.events) == 4, "the application's START and COMPLETE, the action's"
    for event in transport.events:
        assert len(json.dumps(event)) <= BUDGET
        assert event["job"]["name"].startswith("a" * 100)
        assert "_cut" in event["job"]["name"]


def test_an_event_that_cannot_be_bounded_is_quarantined_not_sent(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openlineage_subset.spark import _capture

    def cannot(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("the event cannot be made to fit")

    monkeypatch.setattr(_capture, "bound_event", cannot)
    transport = MemoryTransport()
    quarantine = tmp_path / "q.jsonl"
    handle = enable(spark, transport=transport, quarantine=quarantine)
    handle.close()
    assert transport.events == []
    assert handle.counts["quarantined (over max_event_bytes)"] == 2
    records = [json.loads(line) for line in quarantine.read_bytes().splitlines()]
    assert [r["event"]["eventType"] for r in records] == ["START", "COMPLETE"]
