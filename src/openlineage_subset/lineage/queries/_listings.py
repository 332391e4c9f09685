"""What a database holds, listed: its datasets (most recently written first) and its runs
(most recently started first), for ``ol-subset lineage datasets|runs`` and the service; and
how much of a dataset a question about the whole of it starts from (:func:`check_whole`)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from openlineage_subset.lineage.engine import Engine, PartitionCatalog
from openlineage_subset.lineage.model import (
    AccessConditions,
    AnswerTooLarge,
    DatasetRef,
    RunRef,
    Side,
    shown_time,
)
from openlineage_subset.lineage.queries._questions import (
    HistoryQuery,
    ImpactQuery,
    PartitionsQuery,
    ProvenanceQuery,
    RunsQuery,
)
from openlineage_subset.lineage.store import Database, LineageStore, opened


@dataclasses.dataclass(frozen=True)
class DatasetSummary:
    """A dataset, when it was last written, and how many runs read and wrote it."""

    dataset: DatasetRef
    last_written_at: str | None
    """The end (or, while it runs, the start) of the latest run that wrote it; None: never."""
    writes: int
    reads: int
    partitions: int
    """Partitions some read or write listed."""

    def as_json(self) -> dict[str, Any]:
        return {
            **self.dataset.as_json(),
            "lastWrittenAt": None
            if self.last_written_at is None
            else shown_time(self.last_written_at),
            "writes": self.writes,
            "reads": self.reads,
            "partitions": self.partitions,
        }


@dataclasses.dataclass(frozen=True)
class DatasetsReport:
    datasets: tuple[DatasetSummary, ...]

    def as_json(self) -> dict[str, Any]:
        return {"datasets": [item.as_json() for item in self.datasets]}


@dataclasses.dataclass(frozen=True)
class RunAccess:
    """What a run read or wrote of a dataset, and its condition rendered (None: whole)."""

    dataset: DatasetRef
    condition: str | None

    def as_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset.as_json(), "condition": self.condition}


@dataclasses.dataclass(frozen=True)
class RunFamily:
    """The runs of one job under one parent run (a streaming query's micro-batches): listed as
    one row, its newest run's."""

    parent_run_id: str
    runs: int

    def as_json(self) -> dict[str, Any]:
        return {"parentRunId": self.parent_run_id, "runs": self.runs}


@dataclasses.dataclass(frozen=True)
class RunSummary:
    run: RunRef
    inputs: tuple[RunAccess, ...]
    outputs: tuple[RunAccess, ...]
    family: RunFamily | None = None
    """The runs of its job under its parent, when there are several: this row stands for them
    all (it is the newest); None: it stands for itself."""

    def as_json(self) -> dict[str, Any]:
        found = {
            **self.run.as_json(),
            "inputs": [item.as_json() for item in self.inputs],
            "outputs": [item.as_json() for item in self.outputs],
        }
        if self.family is not None:
            found["family"] = self.family.as_json()
        return found


@dataclasses.dataclass(frozen=True)
class RunsReport:
    runs: tuple[RunSummary, ...]
    total: int
    """How many runs the database holds (of the job, when one was asked for)."""

    @property
    def shown(self) -> int:
        """How many runs the rows stand for (a family's row for all its runs)."""
        return sum(1 if item.family is None else item.family.runs for item in self.runs)

    def as_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "shown": self.shown,
            "runs": [item.as_json() for item in self.runs],
        }


def datasets(db: Database) -> DatasetsReport:
    """Every dataset of the database, the most recently written first (never written: last,
    by namespace and name)."""
    with opened(db) as store:
        return datasets_answer(store)


def datasets_answer(store: LineageStore, only: DatasetRef | None = None) -> DatasetsReport:
    """:func:`datasets`'s answer from the open ``store`` (of the dataset ``only`` alone, when
    given: a page about it counts its partitions, not every dataset's)."""
    where = ""
    named: tuple[str, ...] = ()
    if only is not None:
        where, named = "WHERE d.namespace = ? AND d.name = ? ", (only.namespace, only.name)
    # The counts kept at ingest (dataset_counts) and each dataset's latest write, one search
    # of the index of writes by time: nothing here grows with the history.
    rows = store.connection.execute(
        "SELECT namespace, name, last, writes, reads, partitions FROM ("
        "SELECT d.namespace, d.name, (SELECT max(a.written_at) FROM accesses a "
        "INDEXED BY writes_by_time WHERE a.dataset_id = d.dataset_id "
        "AND a.direction = 'output') AS last, "
        "coalesce(c.writes, 0) AS writes, coalesce(c.reads, 0) AS reads, "
        "coalesce(c.known_partitions, 0) AS partitions FROM datasets d "
        f"LEFT JOIN dataset_counts c ON c.dataset_id = d.dataset_id {where}) "
        "ORDER BY last IS NULL, last DESC, namespace, name",
        named,
    ).fetchall()
    return DatasetsReport(
        tuple(
            DatasetSummary(DatasetRef(namespace, name), last, writes, reads, partitions)
            for namespace, name, last, writes, reads, partitions in rows
        )
    )


def runs(db: Database, *, job: str | None = None, limit: int | None = 100) -> RunsReport:
    """The runs of the database (of the job named ``job``, ``NAMESPACE.NAME`` or its name
    alone), the most recently started first, at most ``limit`` rows (None: all); each with
    what it read and wrote. The runs of one job under one parent run (a streaming query's
    micro-batches, a loop's actions) are one row: the newest of them, with their count."""
    query = RunsQuery(job, limit)
    with opened(db) as store:
        return runs_answer(store, query)


_RUN_COLUMNS = "r.run_id, r.job_namespace, r.job_name, r.status, r.started_at, r.ended_at"
_OF_JOB = "(? IS NULL OR r.job_name = ? OR r.job_namespace || '.' || r.job_name = ?)"


def runs_answer(store: LineageStore, query: RunsQuery) -> RunsReport:
    """The answer to ``query`` from the open ``store``: :func:`runs`'s. The rows are the runs
    with no parent (newest first, by the index of them alone) and the families of runs under
    a parent (by their newest), merged: neither reads the runs it does not list."""
    job, limit = query.job, query.limit
    most = -1 if limit is None else limit
    named = (job, job, job)
    alone = store.connection.execute(
        f"SELECT {_RUN_COLUMNS}, NULL, 1 FROM runs r INDEXED BY runs_alone_by_start "
        f"WHERE r.parented = 0 AND {_OF_JOB} ORDER BY r.started_at DESC, r.run_id LIMIT ?",
        (*named, most),
    ).fetchall()
    families = store.connection.execute(
        f"SELECT {_RUN_COLUMNS}, f.parent_run_id, f.runs FROM run_families f "
        f"JOIN runs r ON r.run_id = f.newest_run WHERE {_OF_JOB} "
        "ORDER BY f.newest_at DESC, f.newest_run LIMIT ?",
        (*named, most),
    ).fetchall()
    # As SQLite orders each: the latest start first, the least run id among equals.
    found = sorted(alone + families, key=lambda row: row[0])
    found.sort(key=lambda row: row[4], reverse=True)
    if limit is not None:
        found = found[:limit]
    # All of them: SQLite counts the table's rows without stepping through each.
    (total,) = store.connection.execute(
        "SELECT count(*) FROM runs"
        if job is None
        else f"SELECT count(*) FROM runs r WHERE {_OF_JOB}",
        () if job is None else named,
    ).fetchone()
    accesses: dict[tuple[str, Side], list[RunAccess]] = {}
    catalog = PartitionCatalog(store.connection)
    texts = AccessConditions(lambda dataset_id: catalog.of(dataset_id).column_order())
    for run_id, direction, namespace, name, dataset_id, condition in store.connection.execute(
        "SELECT a.run_id, a.direction, d.namespace, d.name, a.dataset_id, a.condition "
        "FROM accesses a JOIN datasets d ON d.dataset_id = a.dataset_id "
        "WHERE a.run_id IN (SELECT value FROM json_each(?)) ORDER BY d.namespace, d.name",
        (json.dumps([row[0] for row in found]),),
    ):
        accesses.setdefault((run_id, Side(direction)), []).append(
            RunAccess(DatasetRef(namespace, name), texts.text(dataset_id, condition))
        )
    return RunsReport(
        tuple(
            RunSummary(
                RunRef(*row[:6]),
                tuple(accesses.get((row[0], Side.INPUT), ())),
                tuple(accesses.get((row[0], Side.OUTPUT), ())),
                None if row[7] == 1 else RunFamily(row[6], row[7]),
            )
            for row in found
        ),
        total,
    )


WholeQuestion = ImpactQuery | ProvenanceQuery | HistoryQuery | PartitionsQuery


def check_whole(store: LineageStore, query: WholeQuestion, most: int) -> None:
    """Raise :class:`~openlineage_subset.lineage.AnswerTooLarge` when ``query`` is about the
    whole of its dataset (no partition, no location) and its answer starts from more than
    ``most`` of it: reads for an impact (those from its ``since`` on), writes or known
    partitions for a provenance, both reads and writes for a history, known partitions for the
    partitions' states. Counted from the counts
    kept at ingest (a search of an index of at most ``most`` entries for ``since``), before
    the answer is worked out: at ten million events a whole answer is millions of runs."""
    if getattr(query, "partition", None) or getattr(query, "location", None):
        return
    dataset_id = Engine(store).resolve(query.dataset, query.namespace)
    row = store.connection.execute(
        "SELECT d.namespace, d.name, c.reads, c.writes, c.known_partitions FROM datasets d "
        "JOIN dataset_counts c USING (dataset_id) WHERE d.dataset_id = ?",
        (dataset_id,),
    ).fetchone()
    if row is None:
        return
    dataset = DatasetRef(row[0], row[1])
    reads, writes, partitions = row[2:]
    counted = ""  # "+": counted up to the limit only
    if isinstance(query, ImpactQuery):
        kind, found, what = "impact", reads, "reads"
        if query.since is not None:
            (found,) = store.connection.execute(
                "SELECT count(*) FROM (SELECT 1 FROM accesses INDEXED BY reads_by_start "
                "WHERE dataset_id = ? AND started_at >= ? AND direction = 'input' LIMIT ?)",
                (dataset_id, str(query.since), most + 1),
            ).fetchone()
            what, counted = f"reads from {shown_time(str(query.since))} on", "+"
    elif isinstance(query, ProvenanceQuery):
        # It starts from each known partition (its writers are looked for partition by
        # partition), and from the writes: the more of the two.
        kind, found, what = "provenance", max(writes, partitions), "writes or known partitions"
    elif isinstance(query, HistoryQuery):
        kind, found, what = "history", reads + writes, "reads and writes"
    else:
        kind, found, what = "partitions", partitions, "known partitions"
    if found > most:
        later = ", from a later since," if kind == "impact" else ""
        raise AnswerTooLarge(
            f"{kind} of the whole of {dataset}: its answer starts from more than {most:,} "
            f"{what} ({found:,}{counted}), more than this server works out in one answer; ask "
            f"about partitions of it{later} or run 'ol-subset lineage {kind}' on its database"
        )
