"""Impact and provenance over an event archive too large for one file, with Spark.

The archive is JSON Lines files, or Parquet files with each event's JSON text in one string
column, at any path Spark reads (``s3a://``, ``hdfs://``, ``abfss://``, ``file:``). Spark reads
and checks every event on the executors (the strict parsing and validation of
:func:`~openlineage_subset.lineage.ingestion`) and narrows the archive to what a question can
depend on: the datasets it can reach at dataset level (for impact, forward: what the readers of
a reached dataset wrote, and so on; for provenance, backward: what the writers of a reached
dataset read), and every event of every run that reads or writes one of those. Only those
events come to the driver, streamed into a temporary lineage database, where the same
:func:`~openlineage_subset.lineage.impact` and :func:`~openlineage_subset.lineage.provenance`
answer. The answer is the one a database of the whole archive gives: a query only looks at the
accesses of datasets it can reach, and the narrowing keeps all of those
(``tests/spark/test_lineage_archive.py`` compares the two on the same events).

What stays on the driver is the part of the history the question touches (for a question about
a dataset near the start of a long pipeline, much of it); what never does is the rest of the
archive, and the reading and checking of every event, which runs on the executors.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from openlineage_subset.lineage.engine import Engine
from openlineage_subset.lineage.ingestion import ingest, parse, problem, surrogate_problem
from openlineage_subset.lineage.model import ImpactReport, LineageQueryError, ProvenanceReport
from openlineage_subset.lineage.queries._impact import impact
from openlineage_subset.lineage.queries._provenance import provenance
from openlineage_subset.lineage.store import LineageStore

if TYPE_CHECKING:  # the spark extra
    from pyspark.sql import DataFrame, SparkSession

Dataset = tuple[str, str]
"""(namespace, name)."""
_SHOWN_PROBLEMS = 20
_RECORD_SCHEMA = (
    "run_id string, source string, position long, event string, "
    "accesses array<struct<namespace: string, name: string, direction: string>>, "
    "problem string"
)


@dataclasses.dataclass
class ArchiveProblems:
    """The archive's events that were left out, and why (the first few of them)."""

    invalid: int = 0
    """Lines that are not valid OpenLineage RunEvents (as ingest() would reject them)."""
    examples: list[str] = dataclasses.field(default_factory=list)
    """``file: message`` of the first ones; Spark does not number lines."""

    def __str__(self) -> str:
        shown = "".join(f"\n  {example}" for example in self.examples)
        return f"{self.invalid} invalid event(s) left out{shown}"


class EventArchive:
    """A large OpenLineage event archive, read with Spark, asked impact and provenance.

    ``path`` is a folder or file (anything ``spark.read`` takes, a glob too). ``format``:
    ``"json"`` for JSON Lines (one event per line), ``"parquet"`` for Parquet whose
    ``json_column`` holds each event as JSON text, or ``"auto"`` (Parquet when the path ends in
    ``.parquet`` or holds ``.parquet`` files). The executors need this package installed (as
    the driver does: ``pip install openlineage-subset`` on the cluster's Python, or
    ``--py-files``).

    Example (with a running SparkSession ``spark``)::

        archive = EventArchive(spark, "s3a://lineage/events/")
        report = archive.impact("lake/sales", partition={"business_date": "2024-10-15"})
        report.as_json()                            # as `ol-subset lineage impact --format json`
        print(archive.problems)                     # invalid events left out, if any
    """

    def __init__(
        self,
        spark: SparkSession,
        path: str | os.PathLike[str],
        *,
        format: Literal["auto", "json", "parquet"] = "auto",
        json_column: str = "event",
    ) -> None:
        if format not in ("auto", "json", "parquet"):
            raise ValueError(f"format is 'auto', 'json' or 'parquet', not {format!r}")
        self.spark = spark
        self.path = os.fspath(path)
        self.format = _format_of(self.path) if format == "auto" else format
        self.json_column = json_column
        self.problems = ArchiveProblems()
        self._records: DataFrame | None = None
        self._datasets: list[Dataset] | None = None

    def impact(
        self,
        dataset: str,
        *,
        partition: Mapping[str, str | None] | None = None,
        since: str | None = None,
        depth: int | None = None,
        namespace: str | None = None,
    ) -> ImpactReport:
        """:func:`~openlineage_subset.lineage.impact` over the archive."""
        with self._narrowed(dataset, namespace, "forward") as db:
            return impact(
                db, dataset, partition=partition, since=since, depth=depth, namespace=namespace
            )

    def provenance(
        self,
        dataset: str,
        *,
        partition: Mapping[str, str | None] | None = None,
        depth: int | None = None,
        namespace: str | None = None,
    ) -> ProvenanceReport:
        """:func:`~openlineage_subset.lineage.provenance` over the archive."""
        with self._narrowed(dataset, namespace, "backward") as db:
            return provenance(db, dataset, partition=partition, depth=depth, namespace=namespace)

    # The Spark side -----------------------------------------------------------------------

    def records(self) -> DataFrame:
        """One row per event: run id, file and position, the event's JSON, the datasets it
        reads and writes, or why it is left out. Read once and kept (memory and disk)."""
        if self._records is None:
            from pyspark import StorageLevel  # noqa: PLC0415  (the spark extra)
            from pyspark.sql import functions as F  # noqa: PLC0415

            if self.format == "json":
                lines = self.spark.read.text(self.path).select(F.col("value").alias("event"))
            else:
                read = self.spark.read.parquet(self.path)
                if self.json_column not in read.columns:
                    raise LineageQueryError(
                        f"the Parquet archive {self.path} has no column {self.json_column!r} "
                        f"holding the events' JSON (its columns: {', '.join(read.columns)}); "
                        "name it with json_column="
                    )
                lines = read.select(F.col(self.json_column).cast("string").alias("event"))
            lines = lines.select(
                F.input_file_name().alias("source"),
                F.monotonically_increasing_id().alias("position"),
                "event",
            )
            records = lines.rdd.mapPartitions(_checked_records).toDF(_RECORD_SCHEMA)
            self._records = records.persist(StorageLevel.MEMORY_AND_DISK)
            self._count_problems(self._records)
        return self._records

    def _count_problems(self, records: DataFrame) -> None:
        bad = records.where("problem IS NOT NULL")
        examples = bad.select("source", "problem").limit(_SHOWN_PROBLEMS).collect()
        self.problems = ArchiveProblems(
            bad.count(), [f"{row['source']}: {row['problem']}" for row in examples]
        )

    def _accesses(self) -> DataFrame:
        return (
            self.records()
            .where("problem IS NULL")
            .selectExpr("run_id", "explode(accesses) AS access")
            .selectExpr("run_id", "access.namespace", "access.name", "access.direction")
            .distinct()
        )

    def datasets(self) -> list[Dataset]:
        """Every dataset the archive's valid events read or write."""
        if self._datasets is None:
            rows = self._accesses().select("namespace", "name").distinct().collect()
            self._datasets = sorted((row["namespace"], row["name"]) for row in rows)
        return self._datasets

    def reachable(self, start: Dataset, direction: Literal["forward", "backward"]) -> set[Dataset]:
        """The datasets reachable from ``start`` through runs, at dataset level: forward, what
        runs that read a reached dataset wrote; backward, what runs that wrote one read."""
        from pyspark.sql import functions as F  # noqa: PLC0415  (the spark extra)

        accesses = self._accesses()
        via, onward = ("input", "output") if direction == "forward" else ("output", "input")
        reached, frontier = {start}, {start}
        while frontier:
            edge = self.spark.createDataFrame(sorted(frontier), "namespace string, name string")
            runs = (
                accesses.where(F.col("direction") == via)
                .join(F.broadcast(edge), ["namespace", "name"])
                .select("run_id")
                .distinct()
            )
            found = (
                accesses.where(F.col("direction") == onward)
                .join(runs, "run_id")
                .select("namespace", "name")
                .distinct()
                .collect()
            )
            frontier = {(row["namespace"], row["name"]) for row in found} - reached
            reached |= frontier
        return reached

    def events_touching(self, datasets: Iterable[Dataset]) -> Iterator[str]:
        """Every valid event of every run that reads or writes one of ``datasets``, in archive
        order (by file, then position in it), streamed to the driver."""
        from pyspark.sql import functions as F  # noqa: PLC0415  (the spark extra)

        wanted = self.spark.createDataFrame(sorted(datasets), "namespace string, name string")
        runs = self._accesses().join(F.broadcast(wanted), ["namespace", "name"]).select("run_id")
        chosen = (
            self.records()
            .where("problem IS NULL")
            .join(runs.distinct(), "run_id")
            .orderBy("source", "position")
            .select("event")
        )
        for row in chosen.toLocalIterator():
            yield row["event"]

    # The driver side ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _narrowed(
        self, dataset: str, namespace: str | None, direction: Literal["forward", "backward"]
    ) -> Iterator[LineageStore]:
        """A temporary lineage database of the part of the archive the question can reach.

        Every dataset of the archive is named in it, so that a name resolves (or is unknown,
        or ambiguous) exactly as in a database of the whole archive.
        """
        with tempfile.TemporaryDirectory(prefix="ol-subset-archive-") as folder:
            db = Path(folder) / "lineage.db"
            with LineageStore.open(db, create=True) as store:
                with store.connection:
                    store.connection.executemany(
                        "INSERT OR IGNORE INTO datasets (namespace, name) VALUES (?, ?)",
                        self.datasets(),
                    )
                engine = Engine(store)
                start = engine.partitions(engine.resolve(dataset, namespace)).dataset()
            reached = self.reachable((start.namespace, start.name), direction)
            events = Path(folder) / "events.jsonl"
            with events.open("w", encoding="utf-8") as out:
                for line in self.events_touching(reached):
                    out.write(line.rstrip("\n") + "\n")
            report = ingest([events], db)
            if report.invalid or report.unreadable:  # checked on the executors already
                raise LineageQueryError(f"the narrowed events did not ingest: {report.summary()}")
            with LineageStore.open(db) as store:
                yield store


def _format_of(path: str) -> Literal["json", "parquet"]:
    if path.rstrip("/").endswith(".parquet"):
        return "parquet"
    local = Path(path.removeprefix("file:"))
    if local.is_dir() and any(local.rglob("*.parquet")):
        return "parquet"
    return "json"


def _checked_records(rows: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """Executor side: each line parsed and checked as ingest() does, with what it accesses."""
    for row in rows:
        text = row["event"]
        if text is None or not text.strip():
            continue
        try:
            document = parse(text.lstrip("\ufeff"))
        except ValueError as error:
            yield None, row["source"], row["position"], text, [], str(error)
            continue
        if (
            isinstance(document, dict)
            and "run" not in document
            and ("dataset" in document or "job" in document)
        ):
            continue  # a DatasetEvent or JobEvent: ingest() skips it too
        found = surrogate_problem(text, document) or problem(document)
        if found is not None:
            yield None, row["source"], row["position"], text, [], found
            continue
        accesses = [
            (item["namespace"], item["name"], direction)
            for key, direction in (("inputs", "input"), ("outputs", "output"))
            for item in document.get(key) or []
        ]
        run_id = document["run"]["runId"]
        yield run_id, row["source"], row["position"], text, accesses, None
