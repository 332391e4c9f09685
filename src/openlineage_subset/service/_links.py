"""Where the web UI links a run, a dataset and a partition: one place, so that every page
links each alike and every link is to a page that exists (the templates call these).

A partition links to its impact (``/answer?...&p=JSON``, whose page holds the backfill plan
at :func:`plan_anchor`) and to its dataset's page with it selected (``/dataset?...&p=JSON``),
the value as the dataset page's checkboxes send it
(:func:`~openlineage_subset.service._partition_grid.partition_value`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal
from urllib.parse import quote_plus

from openlineage_subset.lineage import DatasetRef, PartitionRef
from openlineage_subset.report import Links
from openlineage_subset.service._partition_grid import partition_value


def plan_anchor(index: int = 0) -> str:
    """The id of an answer page's backfill plan: of the ``index``-th partition asked."""
    return f"plan-{index}"


def _query(pairs: Iterable[tuple[str, str]]) -> str:
    """``pairs`` as a URL's query, spelled as :func:`~urllib.parse.urlencode` spells them; the
    names, the UI's own words, are not quoted (a page of runs links hundreds)."""
    return "&".join(f"{name}={quote_plus(value)}" for name, value in pairs)


def dataset_link(
    dataset: DatasetRef, partitions: Iterable[PartitionRef] = (), *, before: str | None = None
) -> str:
    """The dataset's page; with ``partitions``, those selected on it (its grid draws the
    rows of the first); with ``before``, its grid's rows before that value."""
    query = [("namespace", dataset.namespace), ("name", dataset.name)]
    query += [("p", partition_value(item)) for item in partitions]
    query += [("before", before)] if before else []
    return "/dataset?" + _query(query)


def run_link(run_id: str, before: str | None = None) -> str:
    """The run's page; with ``before``, its list of the runs it started from that cursor."""
    return "/run?" + _query([("id", run_id), *([("before", before)] if before else [])])


def answer_link(
    dataset: DatasetRef,
    partitions: Iterable[PartitionRef] = (),
    query: Literal["impact", "provenance"] = "impact",
) -> str:
    """The answer page of ``query`` for ``partitions`` of ``dataset`` (none: the whole)."""
    pairs = [("namespace", dataset.namespace), ("name", dataset.name), ("query", query)]
    pairs += [("p", partition_value(item)) for item in partitions]
    return "/answer?" + _query(pairs)


LINKS = Links(run=run_link, dataset=dataset_link)
"""What the answers' graphs and grids link to."""
