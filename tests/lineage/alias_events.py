"""Events in the shapes of producers that put the subset facet elsewhere than the spec's place:
Airflow's all-facets system test (``facets.inputSubset`` / ``facets.outputSubset``) and the Go
client (``inputFacets.inputSubset`` / ``outputFacets.outputSubset``)."""

from __future__ import annotations

import copy
from typing import Any

from tests.lineage.events import day, run

AIRFLOW = "https://github.com/apache/airflow/tree/providers-openlineage/2.0.0"
GO = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/client/go"
# (where an input's facet goes, where an output's goes): the facets' dictionary and key
AIRFLOW_PLACES = (("facets", "inputSubset"), ("facets", "outputSubset"))
GO_PLACES = (("inputFacets", "inputSubset"), ("outputFacets", "outputSubset"))


def moved(events: list[dict[str, Any]], producer: str, places: Any) -> list[dict[str, Any]]:
    """The events with each subset facet moved from the spec's place to ``places``."""
    events = copy.deepcopy(events)
    for event in events:
        event["producer"] = producer
        for (list_key, facets_key), (place, key) in zip(
            (("inputs", "inputFacets"), ("outputs", "outputFacets")), places, strict=True
        ):
            for dataset in event[list_key]:
                facet = dataset.pop(facets_key, {}).get("subset")
                if facet is not None:
                    dataset.setdefault(place, {})[key] = facet
    return events


def pipeline() -> list[dict[str, Any]]:
    """The issue's pipeline: raw written for two days, one aggregation per day reading it."""
    return [
        *run(1, 0, 1, writes=[("raw", day("2024-11-03"))], job="load"),
        *run(2, 2, 3, writes=[("raw", day("2024-11-04"))], job="load"),
        *run(3, 4, 5, reads=[("raw", day("2024-11-03"))], writes=[("agg", day("2024-11-03"))]),
        *run(4, 6, 7, reads=[("raw", day("2024-11-04"))], writes=[("agg", day("2024-11-04"))]),
    ]
