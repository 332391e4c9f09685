"""The walk every lineage query shares: which dataset a name means, its known partitions, its
readers and writers in time order, and whether a condition may select a partition.

- ``_engine``: ``Engine``, the parts below put together for one query;
- ``_partition_catalog``: each dataset's known partitions (``DatasetCatalog``), read once
  per query;
- ``_timeline``: who read and wrote a dataset, and when (``Access``);
- ``_evaluation``: what a read or write condition may select, with its caches;
- ``_narrowing``: the SQL that reads only the partitions, reads and writes a question needs;
- ``_resolving``: which dataset a name means, which partition columns it has;
- ``_certainty``: how sure it is that a read touches what was asked about;
- ``_access_text``: the accesses' conditions as text, in each dataset's column order.

Other sub-rooms import these names from here; modules of the room import each other.
"""

from openlineage_subset.lineage.engine._certainty import read_label
from openlineage_subset.lineage.engine._engine import Access, Engine, region
from openlineage_subset.lineage.engine._partition_catalog import DatasetCatalog, PartitionCatalog

__all__ = [
    "Access",
    "DatasetCatalog",
    "Engine",
    "PartitionCatalog",
    "read_label",
    "region",
]
