"""POST /api/v1/lineage reads the subset facet where Airflow's all-facets system test puts it
(``facets.inputSubset`` / ``facets.outputSubset``), as ``ingest`` does: events sent by
openlineage-python's real HttpTransport to a real ``ol-subset lineage serve``, the answer as
precise as for the spec's place, and one line in the service's log for the producer."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

import pytest

from tests.lineage.alias_events import AIRFLOW, AIRFLOW_PLACES, moved, pipeline
from tests.lineage.events import LAKE
from tests.service.conftest import Server

http = pytest.importorskip("openlineage.client.transport.http", reason="openlineage-python")
pytest.importorskip("requests", reason="openlineage-python's HTTP client")


def test_posted_aliased_facets_are_read_and_noted_once(serve: Callable[..., Server]) -> None:
    server = serve()
    sender = http.HttpTransport(http.HttpConfig.from_dict({"url": server.url}))
    events = moved(pipeline(), AIRFLOW, AIRFLOW_PLACES)
    for event in events:
        assert sender.emit(event).status_code == 201

    query = urlencode({"dataset": f"{LAKE}/raw", "partition": "day=2024-11-03"})
    status, answer = server.get(f"/api/v1/impact?{query}")
    assert status == 200, answer
    # Only the aggregation that read that day (the other read 2024-11-04), definitely.
    assert [(run["job"]["name"], run["label"]) for run in answer["runs"]] == [("job3", "definite")]
    (plan,) = answer["backfill"]
    assert plan["dataset"]["name"] == f"{LAKE}/agg"
    assert [item["identifier"] for item in plan["definite"]] == ["day=2024-11-03"]

    assert server.stop() == 0
    _, err = server.process.communicate()
    noted = [line for line in err.splitlines() if "put the subset facet under" in line]
    # The outputs' place first: the first event with a facet is the load's COMPLETE.
    assert noted == [
        f"events of producer {AIRFLOW!r} put the subset facet under facets.outputSubset "
        "(read as outputFacets.subset): not the spec's place; ask its maintainers to put it "
        "there (said once per producer and place)",
        f"events of producer {AIRFLOW!r} put the subset facet under facets.inputSubset "
        "(read as inputFacets.subset): not the spec's place; ask its maintainers to put it "
        "there (said once per producer and place)",
    ]
