"""openlineage-python's real ``OpenLineageClient`` and ``HttpTransport`` posting, to ``lineage
serve``, the events openlineage-spark (1.39 and later) sends for a small pipeline: two writes of
``/lake/raw`` by day and country, and two daily aggregations into ``/lake/agg``, one per day.

openlineage-spark's ``DatasetReducer`` trims each path to the table's root (here: its
``key=value`` directories) and lists the untrimmed paths in a subset facet of its own, a
``location`` condition, on inputs (``inputCondition``) and outputs (``outputCondition``); the
dataset name is the trimmed path, in the ``file`` namespace. The events are built with the
client's own classes, as the integration builds them with the Java client's.

The answers by partition are as precise as for this package's own events: the store reads such
locations as partitions (``lineage/_directories.py``).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tests.real_producers.conftest import api, lineage_text, runs_of
from tests.service.conftest import Server
from tests.service.helpers import fetch, page_path

pytest.importorskip("openlineage.client", reason="openlineage-python (the producers' client)")
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import (
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
)
from openlineage.client.facet_v2 import (
    base_subset_dataset,
    datasource_dataset,
    processing_engine_run,
    schema_dataset,
)
from openlineage.client.transport.http import HttpConfig, HttpTransport

SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.39.0/integration/spark"
NAMESPACE = "file"
RAW, AGG = "/lake/raw", "/lake/agg"
DAYS = ("2024-11-02", "2024-11-03")
WRITES = {DAYS[0]: ("DE", "FR", "IT"), DAYS[1]: ("DE", "FR")}
"""The countries each write of ``/lake/raw`` wrote that day: five partition directories."""
BEGIN = dt.datetime(2024, 11, 4, 1, 0, tzinfo=dt.timezone.utc)

Access = tuple[str, Sequence[str]]  # (trimmed name, untrimmed paths)


def _dataset_facets(columns: Sequence[str]) -> dict[str, Any]:
    fields = [schema_dataset.SchemaDatasetFacetFields(name=c, type="string") for c in columns]
    return {
        "dataSource": datasource_dataset.DatasourceDatasetFacet(
            name=NAMESPACE, uri=NAMESPACE, producer=SPARK
        ),
        "schema": schema_dataset.SchemaDatasetFacet(fields=fields, producer=SPARK),
    }


def _input(name: str, paths: Sequence[str]) -> InputDataset:
    condition = base_subset_dataset.LocationSubsetCondition(locations=list(paths))
    facet = base_subset_dataset.InputSubsetInputDatasetFacet(
        inputCondition=condition, producer=SPARK
    )
    return InputDataset(
        NAMESPACE,
        name,
        facets=_dataset_facets(("country", "amount")),
        inputFacets={"subset": facet},
    )


def _output(name: str, paths: Sequence[str]) -> OutputDataset:
    condition = base_subset_dataset.LocationSubsetCondition(locations=list(paths))
    facet = base_subset_dataset.OutputSubsetOutputDatasetFacet(
        outputCondition=condition, producer=SPARK
    )
    return OutputDataset(
        NAMESPACE,
        name,
        facets=_dataset_facets(("country", "amount")),
        outputFacets={"subset": facet},
    )


def _run(
    job: str, minute: int, reads: Sequence[Access], writes: Sequence[Access]
) -> list[RunEvent]:
    """A START and a COMPLETE of one Spark action, five minutes apart, as openlineage-spark
    sends them (the same datasets on both)."""
    run = Run(
        runId=str(uuid.UUID(int=minute + 1, version=4)),
        facets={
            "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
                version="3.5.3", name="spark", openlineageAdapterVersion="1.39.0", producer=SPARK
            )
        },
    )
    events = []
    for state, at in ((RunState.START, minute), (RunState.COMPLETE, minute + 5)):
        events.append(
            RunEvent(
                eventType=state,
                eventTime=(BEGIN + dt.timedelta(minutes=at)).isoformat(),
                run=run,
                job=Job(namespace="spark", name=job),
                producer=SPARK,
                inputs=[_input(name, paths) for name, paths in reads],
                outputs=[_output(name, paths) for name, paths in writes],
            )
        )
    return events


def pipeline() -> list[RunEvent]:
    """The raw writes, then each day's aggregation (it reads that day's directory)."""
    events = []
    for number, (day, countries) in enumerate(WRITES.items()):
        written = [f"{RAW}/day={day}/country={country}" for country in countries]
        job = "raw_load.execute_insert_into_hadoop_fs_relation_command.lake_raw"
        events += _run(job, 10 * number, [], [(RAW, written)])
    for number, day in enumerate(DAYS):
        job = f"daily_agg_{day.replace('-', '')}.execute_insert_into_hadoop_fs_relation_command"
        reads = [(RAW, [f"{RAW}/day={day}"])]
        events += _run(job, 30 + 10 * number, reads, [(AGG, [f"{AGG}/day={day}"])])
    return events


@pytest.fixture
def server(serve: Callable[..., Server]) -> Server:
    """A server holding the pipeline's events, sent by openlineage-python's HttpTransport."""
    started = serve()
    client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=started.url)))
    for event in pipeline():
        client.emit(event)
    return started


def test_the_events_are_stored_under_the_trimmed_names_and_shown(server: Server) -> None:
    sent = pipeline()
    with sqlite3.connect(server.db) as connection:
        (stored,) = connection.execute("SELECT count(*) FROM events").fetchone()
    connection.close()
    assert stored == len(sent)
    runs = runs_of(server)
    assert len(runs) == len(sent) // 2 and all(run["status"] == "COMPLETE" for run in runs)
    datasets = {(item["namespace"], item["name"]) for item in api(server, "datasets")["datasets"]}
    assert datasets == {(NAMESPACE, RAW), (NAMESPACE, AGG)}
    for name in (RAW, AGG):
        status, _, page = fetch(server, page_path("/dataset", namespace=NAMESPACE, name=name))
        assert status == 200 and name in page


def test_impact_of_one_day_names_only_that_days_aggregation(server: Server) -> None:
    answer = api(server, "impact", dataset=RAW, namespace=NAMESPACE, partition=f"day={DAYS[1]}")
    affected = [(run["job"]["name"], run["label"]) for run in answer["runs"]]
    assert affected == [
        ("daily_agg_20241103.execute_insert_into_hadoop_fs_relation_command", "definite")
    ]
    (plan,) = answer["backfill"]
    assert plan["dataset"]["name"] == AGG
    assert [p["dimensions"] for p in plan["definite"]] == [{"day": DAYS[1]}]
    assert plan["possible"] == [] and plan.get("whole") is None


def test_the_written_locations_are_the_raw_datasets_partitions(server: Server) -> None:
    text = lineage_text(server, "partitions", RAW, "--namespace", NAMESPACE)
    listed = {line.split(":", 1)[0].strip() for line in text.splitlines()[2:]}
    written = {f"day={d}/country={c}" for d, countries in WRITES.items() for c in countries}
    # each aggregation read its day's directory: that day is a partition of /lake/raw too
    assert listed == written | {f"day={day}" for day in DAYS}
