"""The conditions of one query's accesses as text, in each dataset's column order."""

from __future__ import annotations

from openlineage_subset.lineage.engine._partition_catalog import PartitionCatalog
from openlineage_subset.lineage.engine._timeline import Access
from openlineage_subset.lineage.model import ConditionText


class AccessText:
    """The conditions of one query's accesses as text, each made once."""

    def __init__(self, catalog: PartitionCatalog) -> None:
        self.catalog = catalog
        self._text = ConditionText()

    def rendered(self, access: Access) -> str | None:
        """The access's condition as text (None: the whole dataset), the columns of the
        partitions it lists in the dataset's ``column_order``."""
        if access.text is None:
            return None
        order = self.catalog.of(access.dataset_id).column_order()
        return self._text.text(access.text, access.condition, order)
