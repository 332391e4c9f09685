"""What a lineage query raises for a question it cannot answer as asked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openlineage_subset import OpenLineageSubsetError
from openlineage_subset.lineage.model._answers import DatasetRef


class LineageQueryError(ValueError, OpenLineageSubsetError):
    """A query that cannot be answered as asked: an unknown or ambiguous dataset, a bad time."""


class AnswerTooLarge(LineageQueryError):
    """An answer about a whole dataset that starts from more of it (reads, writes, partitions)
    than the caller works out in one answer (``lineage serve --max-whole-answer``): asked about
    partitions of it, or from a later time, it is answered; the command line answers it whole."""


class UnknownPartitionColumnError(LineageQueryError):
    """The partition asked about names a column the dataset never had: none of its known
    partitions has it and no condition on it names it (a typo such as ``dayy`` for ``day``).

    >>> error = UnknownPartitionColumnError(
    ...     DatasetRef("file", "/lake/sales"), ("dayy",), ("day", "country"), (), {"dayy": "day"})
    >>> print(error)
    file:/lake/sales has no partition column 'dayy' (did you mean 'day'?): its partition \
columns are day, country; ask about a partition by those
    """

    dataset: DatasetRef
    unknown: tuple[str, ...]
    """The columns asked about that the dataset never had."""
    columns: tuple[str, ...]
    """Its partition columns (those of its known partitions), in the order its events give."""
    named: tuple[str, ...]
    """Other columns its conditions name (compared, or in a location's directories)."""
    closest: dict[str, str]
    """For an unknown column, the known one closest to it, when one is close."""

    def __init__(
        self,
        dataset: DatasetRef,
        unknown: tuple[str, ...],
        columns: tuple[str, ...],
        named: tuple[str, ...] = (),
        closest: Mapping[str, str] | None = None,
    ) -> None:
        self.dataset = dataset
        self.unknown = tuple(unknown)
        self.columns = tuple(columns)
        self.named = tuple(named)
        self.closest = dict(closest or {})
        asked = ", ".join(
            repr(column)
            + (f" (did you mean {self.closest[column]!r}?)" if column in self.closest else "")
            for column in self.unknown
        )
        if self.columns:
            has = f"its partition columns are {', '.join(self.columns)}"
        else:
            has = "no read or write of it listed a partition"
        if self.named:
            has += f"; its conditions name {', '.join(self.named)}"
        plural = "s" if len(self.unknown) > 1 else ""
        super().__init__(
            f"{dataset} has no partition column{plural} {asked}: {has}; ask about a partition "
            "by those"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            type(self),
            (self.dataset, self.unknown, self.columns, self.named, self.closest),
        )
