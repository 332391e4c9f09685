"""Settings of the PySpark adapter."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from typing import Literal

from openlineage_subset import (
    MAX_LINE_BYTES_VARIABLE,
    __version__,
)
from openlineage_subset.delivery import outbox_line_limit
from openlineage_subset.producer import DEFAULT_TRIM_RULES, MIN_EVENT_BYTES, TrimRules

PRODUCER = f"https://github.com/openlineage-subset/openlineage-subset/tree/v{__version__}"
"""The ``_producer`` of the facets the adapter writes."""

ALL_COLUMNS: Literal["all"] = "all"
"""``SubsetConfig(redact_columns="all")``: redact the values of every column."""


@dataclass(frozen=True, kw_only=True)
class SubsetConfig:
    """How the adapter chooses and bounds subset conditions; every option is a keyword.

    The condition of a read is the first level that applies: the partitions read (when they
    are a part of the dataset's partitions), else the locations read (when a part of the dataset
    was read by path or glob), else the row filter Spark applied, else none.
    ``combine_levels=True`` joins every level that applies with ``AND`` instead.
    ``row_filters=False`` turns the row-filter level off (partitions and locations stay).

    Sizes are bounded without giving up soundness. Up to ``max_partitions`` partitions and
    ``max_locations`` locations are listed as they are; more, or a condition whose JSON exceeds
    ``max_condition_bytes``, are condensed (value lists and ranges per partition column, parent
    directories, ranges for long ``IN`` lists; see
    :mod:`openlineage_subset.producer._condense`). Every event is at most ``max_event_bytes``
    (at least 65,536): its datasets' conditions share it, condensed further where they must.

    ``redact_columns`` (a set of column names, or ``"all"``) keeps the values of those columns
    out of the input conditions, soundly (the condition still holds for every row read; it
    may cover more):

    - a comparison of a redacted column with a literal is removed as an inexpressible one is:
      inside ``AND`` the conjunct goes, an ``OR`` holding one goes whole; the rest of the
      condition keeps its shape. Comparisons of two columns stay (they carry no value);
    - partitions with a redacted partition column are not listed (their values and paths are
      the same secret): the next level that applies is used instead, usually the row filter,
      redacted as above (a read of ``day = 'd1' AND ssn = 'x'`` gives ``day = 'd1'``);
    - locations with a ``column=value`` directory of a redacted column are not listed either.

    Names match without regard to case (as Spark resolves them), and a redacted struct column
    redacts its fields (``customer`` covers ``customer.ssn``). Dataset names are paths and are
    never redacted: a dataset whose own path holds a value keeps it.

    >>> SubsetConfig(max_partitions=100).max_partitions
    100
    >>> SubsetConfig(redact_columns={"ssn", "Customer"}).redacts("customer.email")
    True
    """

    max_partitions: int = 1000
    max_locations: int = 500
    max_condition_bytes: int = 256_000
    max_event_bytes: int = 1_000_000
    combine_levels: bool = False
    trim_rules: TrimRules = field(default=DEFAULT_TRIM_RULES)
    producer: str = PRODUCER
    redact_columns: Set[str] | Literal["all"] = frozenset()
    row_filters: bool = True
    _redacted: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("max_partitions", "max_locations", "max_condition_bytes", "max_event_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(
                    f"SubsetConfig.{name} must be a non-negative integer, got {value!r}"
                )
        if self.max_event_bytes < MIN_EVENT_BYTES:
            raise ValueError(
                f"SubsetConfig.max_event_bytes must be at least {MIN_EVENT_BYTES} (room for one "
                f"dataset of the longest path and its facets), got {self.max_event_bytes}"
            )
        line_limit = outbox_line_limit()
        if self.max_event_bytes > line_limit:
            raise ValueError(
                f"SubsetConfig.max_event_bytes is {self.max_event_bytes}, over the {line_limit} "
                "bytes the outbox reads back in a line: lower it, or raise "
                f"${MAX_LINE_BYTES_VARIABLE} for the capture and the readers of its events"
            )
        if not isinstance(self.trim_rules, TrimRules):
            raise TypeError(
                f"SubsetConfig.trim_rules must be a TrimRules, got {type(self.trim_rules).__name__}"
            )
        if not isinstance(self.producer, str) or not self.producer:
            raise ValueError("SubsetConfig.producer must be a non-empty URI")
        if not isinstance(self.row_filters, bool):
            raise TypeError(
                f"SubsetConfig.row_filters must be True or False, got {self.row_filters!r}"
            )
        object.__setattr__(self, "redact_columns", _redact_columns(self.redact_columns))
        redacted = frozenset() if self.redact_columns == ALL_COLUMNS else self.redact_columns
        object.__setattr__(self, "_redacted", frozenset(name.lower() for name in redacted))

    def redacts(self, column: str) -> bool:
        """Whether the values of ``column`` (a dotted path for a nested field) are redacted.

        >>> config = SubsetConfig(redact_columns={"ssn"})
        >>> config.redacts("SSN"), config.redacts("ssn_hash"), SubsetConfig().redacts("ssn")
        (True, False, False)
        """
        if self.redact_columns == ALL_COLUMNS:
            return True
        path = column.lower()
        return any(path == name or path.startswith(name + ".") for name in self._redacted)


def _redact_columns(value: object) -> frozenset[str] | Literal["all"]:
    if value == ALL_COLUMNS:
        return ALL_COLUMNS
    if isinstance(value, str):
        raise TypeError(
            "SubsetConfig.redact_columns takes a set of column names or 'all', not a single "
            f"column name; write redact_columns={{{value!r}}}"
        )
    if not isinstance(value, (Set, list, tuple)):
        raise TypeError(
            "SubsetConfig.redact_columns takes a set of column names or 'all', "
            f"got {type(value).__name__}"
        )
    for name in value:
        if not isinstance(name, str):
            raise TypeError(
                f"SubsetConfig.redact_columns holds {name!r} ({type(name).__name__}); each item "
                "must be a column name"
            )
        if not name:
            raise ValueError("SubsetConfig.redact_columns holds an empty column name")
    return frozenset(value)
