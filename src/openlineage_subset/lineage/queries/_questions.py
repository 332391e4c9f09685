"""The questions a lineage database answers, each one frozen dataclass checked once when it is
made: :class:`ImpactQuery`, :class:`ProvenanceQuery`, :class:`HistoryQuery`,
:class:`PartitionsQuery` and :class:`RunsQuery`. Python callers make them with typed values;
the command line and the service's query strings with ``from_text``, from the words they are
given. The checks and their errors are those of :mod:`._arguments`, in one order for every
caller: the partition, then ``since``, then ``depth`` (or ``limit``)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Mapping, Sequence

from openlineage_subset.lineage.model import LineageQueryError
from openlineage_subset.lineage.queries._arguments import (
    checked_count,
    checked_depth,
    checked_location,
    checked_partition,
    checked_since,
    count_from_text,
    partition_from_text,
)

__all__ = ["HistoryQuery", "ImpactQuery", "PartitionsQuery", "ProvenanceQuery", "RunsQuery"]


def _count(name: str, value: int | str | None) -> int | None:
    """A count given as a number (Python, an option argparse read) or as text (a query
    string): checked either way."""
    return count_from_text(name, value) if isinstance(value, str) else value


@dataclasses.dataclass(frozen=True)
class ImpactQuery:
    """What depends on ``partition`` of ``dataset`` (None: the whole dataset), as present from
    ``since`` on, ``depth`` run hops at most: see :func:`~openlineage_subset.lineage.impact`.

    ``partition`` is kept as checked (``__HIVE_DEFAULT_PARTITION__`` read as None, the null
    partition) and ``since`` as the database stores times:

    >>> ImpactQuery("lake/sales", partition={"day": "2024-10-15"}, since="2024-10-15").since
    '2024-10-15T00:00:00.000000000Z'
    >>> ImpactQuery.from_text("sales", ["day=2024-10-15"], depth="2").depth
    2
    """

    dataset: str
    partition: Mapping[str, str | None] | None = None
    since: str | _dt.datetime | None = None
    depth: int | None = None
    namespace: str | None = None
    location: str | None = None
    """A file or directory of the dataset (a bad file that landed): only the readers that may
    have read it are affected (kept as a location, ``file:/...`` for a local path)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "partition", checked_partition(self.partition))
        object.__setattr__(self, "since", checked_since(self.since))
        object.__setattr__(self, "depth", checked_depth(self.depth))
        object.__setattr__(self, "location", checked_location(self.location))

    @classmethod
    def from_text(
        cls,
        dataset: str,
        partition: Sequence[str] | None = None,
        *,
        since: str | None = None,
        depth: int | str | None = None,
        namespace: str | None = None,
        option: str = "--partition",
        location: str | None = None,
    ) -> ImpactQuery:
        """The query of ``COLUMN=VALUE`` items (``option`` names them in an error) and a depth
        given as text or as a number."""
        values = partition_from_text(partition, option)
        return cls(dataset, values, since, _count("depth", depth), namespace, location)


@dataclasses.dataclass(frozen=True)
class ProvenanceQuery:
    """Where ``partition`` of ``dataset`` came from, ``depth`` levels of runs at most: see
    :func:`~openlineage_subset.lineage.provenance`."""

    dataset: str
    partition: Mapping[str, str | None] | None = None
    depth: int | None = None
    namespace: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "partition", checked_partition(self.partition))
        object.__setattr__(self, "depth", checked_depth(self.depth))

    @classmethod
    def from_text(
        cls,
        dataset: str,
        partition: Sequence[str] | None = None,
        *,
        depth: int | str | None = None,
        namespace: str | None = None,
        option: str = "--partition",
    ) -> ProvenanceQuery:
        """As :meth:`ImpactQuery.from_text`."""
        values = partition_from_text(partition, option)
        return cls(dataset, values, _count("depth", depth), namespace)


@dataclasses.dataclass(frozen=True)
class HistoryQuery:
    """The runs that read or wrote ``dataset`` (or may have touched ``partition`` of it): see
    :func:`~openlineage_subset.lineage.history`."""

    dataset: str
    partition: Mapping[str, str | None] | None = None
    namespace: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "partition", checked_partition(self.partition))

    @classmethod
    def from_text(
        cls,
        dataset: str,
        partition: Sequence[str] | None = None,
        *,
        namespace: str | None = None,
        option: str = "--partition",
    ) -> HistoryQuery:
        """As :meth:`ImpactQuery.from_text`."""
        return cls(dataset, partition_from_text(partition, option), namespace)


@dataclasses.dataclass(frozen=True)
class PartitionsQuery:
    """Each known partition of ``dataset``, its last writer and its readers since: see
    :func:`~openlineage_subset.lineage.dataset_partitions`."""

    dataset: str
    namespace: str | None = None


@dataclasses.dataclass(frozen=True)
class RunsQuery:
    """The runs (of the job named ``job``, ``NAMESPACE.NAME`` or its name alone), the most
    recently started first, at most ``limit`` of them (None: all).

    >>> RunsQuery.from_text(limit="ten")
    Traceback (most recent call last):
    ...
    openlineage_subset.lineage.model._errors.LineageQueryError: limit must be a whole number \
from 1 to 1000000000, got 'ten'
    """

    job: str | None = None
    limit: int | None = 100

    def __post_init__(self) -> None:
        checked_count("limit", self.limit)
        if self.job is not None and (not isinstance(self.job, str) or not self.job):
            raise LineageQueryError("job: name the job (its name, or NAMESPACE.NAME)")

    @classmethod
    def from_text(cls, job: str | None = None, limit: int | str | None = None) -> RunsQuery:
        """The query of a limit given as text or as a number (None: not given, 100)."""
        return cls(job, 100 if limit is None else _count("limit", limit))
