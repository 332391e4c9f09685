"""What the service's and the report's pages draw that no lineage query answers, read for the
page alone.

- ``_as_stored``: one run and a dataset's facets as the database holds them;
- ``_dataset_page``: a dataset page's axis, partitions and latest runs (and a whole dataset's
  partitions or history a piece at a time);
- ``_run_partitions``: the partitions each read and write of a run may cover;
- ``_picture_facts``: what the report's picture needs besides an answer.

Other sub-rooms import these names from here; modules of the room import each other.
"""

from openlineage_subset.lineage.pages._as_stored import (
    DatasetFacets,
    Facet,
    RunDetails,
    dataset_facets,
    run_details,
)
from openlineage_subset.lineage.pages._dataset_page import (
    PagePartitions,
    PartitionAxis,
    history_in_pieces,
    latest_history,
    partitions_in_pieces,
)
from openlineage_subset.lineage.pages._picture_facts import (
    DatasetColumns,
    DatasetPartitions,
    JobUse,
    PictureSource,
    Touched,
    picture_source,
)
from openlineage_subset.lineage.pages._run_partitions import RunPartitions, run_partitions

__all__ = [
    "DatasetColumns",
    "DatasetFacets",
    "DatasetPartitions",
    "Facet",
    "JobUse",
    "PagePartitions",
    "PartitionAxis",
    "PictureSource",
    "RunDetails",
    "RunPartitions",
    "Touched",
    "dataset_facets",
    "history_in_pieces",
    "latest_history",
    "partitions_in_pieces",
    "picture_source",
    "run_details",
    "run_partitions",
]
