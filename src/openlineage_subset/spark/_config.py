"""Settings of the PySpark adapter."""

from __future__ import annotations

from dataclasses import dataclass, field

from openlineage_subset import __version__
from openlineage_subset.spark._naming import DEFAULT_TRIM_RULES, TrimRules

PRODUCER = f"https://github.com/openlineage-subset/openlineage-subset/tree/v{__version__}"
"""The ``_producer`` of the facets the adapter writes."""


@dataclass(frozen=True)
class SubsetConfig:
    """How the adapter chooses and bounds subset conditions.

    The condition of a read is the first level that applies: the partitions read (when they
    are a part of the dataset's partitions, at most ``max_partitions``), else the locations read
    (when a part of the dataset was read by path or glob, at most ``max_locations``), else the
    row filter Spark applied, else none. ``combine_levels=True`` joins every level that applies
    with ``AND`` instead. A condition whose JSON exceeds ``max_condition_bytes`` is dropped.

    >>> SubsetConfig(max_partitions=100).max_partitions
    100
    """

    max_partitions: int = 1000
    max_locations: int = 500
    max_condition_bytes: int = 256_000
    combine_levels: bool = False
    trim_rules: TrimRules = field(default=DEFAULT_TRIM_RULES)
    producer: str = PRODUCER

    def __post_init__(self) -> None:
        for name in ("max_partitions", "max_locations", "max_condition_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(
                    f"SubsetConfig.{name} must be a non-negative integer, got {value!r}"
                )
        if not isinstance(self.trim_rules, TrimRules):
            raise TypeError(
                f"SubsetConfig.trim_rules must be a TrimRules, got {type(self.trim_rules).__name__}"
            )
        if not isinstance(self.producer, str) or not self.producer:
            raise ValueError("SubsetConfig.producer must be a non-empty URI")
