"""Which partitions a write created: the output datasets of an executed query.

How written partitions are obtained, and what it costs:

- a static partition spec that names every partition column (``INSERT ... PARTITION (d='x',
  c='y')``) is the answer itself: no I/O;
- otherwise the output location is listed once, with one Hadoop glob over its partition
  directories (``root/*=*/*=*/*``), after the write. The files this write created are the ones
  that appeared since the action started and share the job's UUID in their names
  (``part-00000-<uuid>...``); Spark's own write metrics (number of files and of dynamic
  partitions, collected in the same pass as the write) confirm the choice. Their directories
  are the written partitions.

The listing costs one glob per partitioned write (its directories, not the files' contents),
in one py4j round trip for the whole result.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from openlineage_subset._builders import all_of, field, output_facet
from openlineage_subset._versions import spec
from openlineage_subset.spark._changes import LIFECYCLE_SCHEMA
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._degrade import warn_once
from openlineage_subset.spark._jvm import (
    CLOCK_SLACK_MS,
    JavaObject,
    java_class,
    qualified_path,
    string_map,
    string_of,
    strings_of,
)
from openlineage_subset.spark._naming import (
    clean_location,
    dataset_identity,
    partition_dimensions,
    partition_path,
    split_dataset_root,
)
from openlineage_subset.spark._reads import partition_condition
from openlineage_subset.spark._translate import redact_condition

log = logging.getLogger("openlineage_subset.spark")

_WRITE_COMMANDS = frozenset(
    {"InsertIntoHadoopFsRelationCommand", "InsertIntoHiveTable", "InsertIntoHiveDirCommand"}
)
# A path may hold any character but NUL (newlines too): matched across lines, and checked.
_FILE_STATUS = re.compile(
    r"\{path=(?P<path>.*?); isDirectory=(?P<dir>true|false)"
    r"(?:; length=\d+; replication=\d+; blocksize=\d+)?; modification_time=(?P<mtime>\d+);",
    re.DOTALL,
)
_JOB_UUID = re.compile(r"-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
_ATTRIBUTE_ID = re.compile(r"#\d+L?$")


@dataclass(frozen=True)
class WriteFacts:
    """What one write command wrote, as plain data."""

    command: str
    root: str
    """Where the dataset lives: the write's output path or the table's location (raw)."""
    table: str | None
    partition_columns: tuple[str, ...]
    static_partitions: dict[str, str]
    files: tuple[tuple[str, int], ...] | None
    """(path, modification time in ms) of the data files under ``root`` after the write."""
    num_files: int | None
    num_parts: int | None
    overwrite: bool = False
    """The write replaced data (``mode("overwrite")``, ``INSERT OVERWRITE``)."""
    dynamic_overwrite: bool = False
    """An overwrite that replaced only the partitions it wrote (dynamic partition overwrite, and
    every Hive table overwrite); otherwise an overwrite replaced all the partitions matching its
    static partition values, written or not."""


def write_facts(
    query_execution: JavaObject,
    *,
    list_files: bool = True,
    commands: Sequence[JavaObject] | None = None,
) -> list[WriteFacts]:
    """The writes of an executed query (none for a query that only reads).

    ``list_files=False`` skips the listing (for a failed write, whose files say nothing).
    ``commands``: the query's ``DataWritingCommandExec`` nodes, when a walk of its plan found
    them already (see ``plan_facts``); else they are looked for at the plan's root.
    """
    if commands is None:
        plan = query_execution.executedPlan()
        kind = str(plan.getClass().getSimpleName())
        # Adaptive execution wraps a write that shuffles: AdaptiveSparkPlanExec, then (Spark 4)
        # a ResultQueryStageExec around the DataWritingCommandExec.
        while kind in ("AdaptiveSparkPlanExec", "ResultQueryStageExec"):
            plan = plan.executedPlan() if kind == "AdaptiveSparkPlanExec" else plan.plan()
            kind = str(plan.getClass().getSimpleName())
        commands = [plan] if kind == "DataWritingCommandExec" else []
    return [
        facts
        for node in commands
        for facts in _command_write_facts(query_execution, node.cmd(), list_files=list_files)
    ]


def _command_write_facts(
    query_execution: JavaObject, command: JavaObject, *, list_files: bool
) -> list[WriteFacts]:
    """The write of one data-writing command (none for a command that is not a file write)."""
    kind = str(command.getClass().getSimpleName())
    if kind not in _WRITE_COMMANDS:
        return []
    if kind == "InsertIntoHiveDirCommand":  # INSERT OVERWRITE [LOCAL] DIRECTORY ... STORED AS
        return [_directory_write(query_execution, command)]
    # Attribute names only: the command's toJSON() would carry its whole logical query.
    partition_columns = tuple(
        _ATTRIBUTE_ID.sub("", name) for name in strings_of(command.partitionColumns())
    )
    if kind == "InsertIntoHiveTable":
        table = command.table()
        root = str(table.location().toString())
        name: str | None = str(table.identifier().unquotedString())
        partition_columns = strings_of(table.partitionColumnNames())
        static = _static_hive_partitions(command.partition())
        overwrite = dynamic = bool(command.overwrite())
    else:
        root = str(command.outputPath().toString())
        catalog_table = command.catalogTable()
        name = (
            str(catalog_table.get().identifier().unquotedString())
            if catalog_table.isDefined()
            else None
        )
        static = string_map(command.staticPartitions())
        overwrite = str(command.mode().toString()) == "Overwrite"
        dynamic = overwrite and _dynamic_partition_overwrite(command)
    metrics = command.metrics()
    files = None
    if list_files and partition_columns and set(static) != set(partition_columns):
        files = _list_data_files(query_execution, root, len(partition_columns))
    return [
        WriteFacts(
            command=kind,
            root=root,
            table=name,
            partition_columns=partition_columns,
            static_partitions=static,
            files=files,
            num_files=_metric(metrics, "numFiles"),
            num_parts=_metric(metrics, "numParts"),
            overwrite=overwrite,
            dynamic_overwrite=dynamic,
        )
    ]


def _directory_write(query_execution: JavaObject, command: JavaObject) -> WriteFacts:
    """``INSERT OVERWRITE [LOCAL] DIRECTORY`` through Hive: the directory, replaced whole."""
    location = command.storage().locationUri()
    if not location.isDefined():
        raise ValueError("INSERT OVERWRITE DIRECTORY without a location")
    root = qualified_path(
        query_execution.sparkSession(),
        str(location.get().toString()),
        local=bool(command.isLocal()),
    )
    metrics = command.metrics()
    return WriteFacts(
        command="InsertIntoHiveDirCommand",
        root=root,
        table=None,
        partition_columns=(),
        static_partitions={},
        files=None,
        num_files=_metric(metrics, "numFiles"),
        num_parts=None,
        overwrite=bool(command.overwrite()),
    )


def _dynamic_partition_overwrite(command: JavaObject) -> bool:
    """Whether Spark ran the overwrite in dynamic mode; static (a superset) if unknown."""
    try:
        return bool(command.dynamicPartitionOverwrite())
    except Exception:  # a Spark without the accessor: static mode claims more, soundly
        log.debug("dynamicPartitionOverwrite unavailable", exc_info=True)
        return False


def output_datasets_from_writes(
    writes: Iterable[WriteFacts], started_ms: int | None, config: SubsetConfig | None = None
) -> list[Any]:
    """``OutputDataset`` models with the partitions each write created (none if unpartitioned)."""
    config = config or SubsetConfig()
    models = spec().models
    datasets = []
    for write in writes:
        root, segments = split_dataset_root(clean_location(write.root), config.trim_rules)
        prefix = "/".join(segments) if all("=" in s for s in segments) else None
        namespace, name = dataset_identity(root)
        condition = None
        if prefix is None:
            pass
        elif write.overwrite and not write.dynamic_overwrite:
            # Spark deleted every partition under the static values first, written or not.
            condition = _replaced_condition(segments, write, config)
        elif write.partition_columns or segments:
            partitions = written_partitions(write, started_ms)
            if partitions is not None:
                paths = sorted({"/".join(p for p in (prefix, path) if p) for path in partitions})
                condition = _partition_condition(paths, config)
        if condition is not None and config.redact_columns:
            condition = redact_condition(condition, config.redacts)
        facets = (
            None
            if condition is None
            else {"subset": output_facet(condition, producer=config.producer)}
        )
        dataset_facets = None
        if write.overwrite:
            dataset_facets = {
                "lifecycleStateChange": models.DatasetFacet(
                    producer=config.producer,
                    schema_url=LIFECYCLE_SCHEMA,
                    additional_properties={"lifecycleStateChange": "OVERWRITE"},
                )
            }
        datasets.append(
            models.OutputDataset(
                namespace=namespace, name=name, facets=dataset_facets, output_facets=facets
            )
        )
    return datasets


def _replaced_condition(prefix: tuple[str, ...], write: WriteFacts, config: SubsetConfig) -> Any:
    """What a static-mode overwrite replaced: every partition under its static values (and under
    the partition directory it wrote into), written or not; None for the whole dataset."""
    static = write.static_partitions
    if static and set(static) != set(write.partition_columns):
        fixed = {**partition_dimensions(prefix), **static}
        return all_of(field(column) == value for column, value in fixed.items())
    segments = [*prefix, partition_path(write.partition_columns, static)] if static else prefix
    if not segments:
        return None
    return _partition_condition(["/".join(segments)], config)


def written_partitions(write: WriteFacts, started_ms: int | None) -> list[str] | None:
    """Partition paths (``k=v/k2=v2``, relative to the write's root) the write created.

    ``started_ms`` (when the action started) narrows the files to the recent ones; without it
    the job's files are told apart by their UUID and Spark's file count alone.
    """
    columns = write.partition_columns
    if not columns:
        return [""]
    if set(write.static_partitions) == set(columns):
        return [partition_path(columns, write.static_partitions)]
    if write.files is None:
        return None
    earliest = -1 if started_ms is None else started_ms - CLOCK_SLACK_MS
    groups: dict[str, list[tuple[str, int]]] = {}
    for path, mtime in write.files:
        if mtime >= earliest:
            match = _JOB_UUID.search(path.rpartition("/")[2])
            groups.setdefault(match.group(1) if match else "", []).append((path, mtime))
    chosen = _job_files(groups, write.num_files)
    root = write.root.rstrip("/")
    return sorted({path[len(root) + 1 :].rpartition("/")[0] for path in chosen})


def _job_files(groups: dict[str, list[tuple[str, int]]], num_files: int | None) -> list[str]:
    """The files of this write: the one job's group, told apart by Spark's file count.

    Of several groups with the right count, the newest is this write (the listing ran right
    after it). With no group of the right count, every recent file is taken: a superset.
    """
    if len(groups) == 1:
        return [path for path, _ in next(iter(groups.values()))]
    matching = [files for files in groups.values() if len(files) == num_files]
    if matching:
        newest = max(matching, key=lambda files: max(mtime for _, mtime in files))
        return [path for path, _ in newest]
    if groups:
        log.warning(
            "could not tell this write's files from %d other groups written meanwhile; its "
            "written partitions include theirs",
            len(groups) - 1,
        )
    return [path for files in groups.values() for path, _ in files]


def _partition_condition(paths: list[str], config: SubsetConfig) -> Any:
    rows = [{"dimensions": partition_dimensions(p.split("/")), "identifier": p} for p in paths if p]
    return partition_condition(rows, config)


def _list_data_files(
    query_execution: JavaObject, root: str, depth: int
) -> tuple[tuple[str, int], ...] | None:
    """Data files ``depth`` partition levels below ``root``, with their modification times;
    None when the listing cannot be read for sure."""
    hadoop_path = java_class("org.apache.hadoop.fs.Path")
    hadoop_conf = query_execution.sparkSession().sessionState().newHadoopConf()
    base = hadoop_path(root)
    pattern = _glob_escape(root.rstrip("/")) + "/*=*" * depth + "/[!._]*"
    filesystem = base.getFileSystem(hadoop_conf)
    try:
        statuses = filesystem.globStatus(hadoop_path(pattern))
    except Exception as error:  # Hadoop's glob takes a directory holding ":" for a scheme
        warn_once(root, f"written partitions unknown: its listing failed ({error})")
        return None
    if statuses is None:
        return ()
    text = string_of(statuses)
    matches = list(_FILE_STATUS.finditer(text))
    prefix = root.rstrip("/") + "/"
    if len(matches) != text.count("; isDirectory=") or not all(
        match["path"].startswith(prefix) for match in matches
    ):
        # A name holding Hadoop's own field separators: the listing cannot be read for sure, so
        # the written partitions are unknown (the whole dataset).
        warn_once(root, "written partitions unknown: its listing cannot be read unambiguously")
        return None
    return tuple(
        (match["path"], int(match["mtime"])) for match in matches if match["dir"] == "false"
    )


def _glob_escape(path: str) -> str:
    return re.sub(r"([\\{}\[\]*?])", r"\\\1", path)


def _static_hive_partitions(spec_map: JavaObject) -> dict[str, str]:
    """Static values of a Hive insert's ``Map[String, Option[String]]`` partition spec."""
    found = {}
    entries = spec_map.iterator()
    while entries.hasNext():
        entry = entries.next()
        value = entry._2()
        if value.isDefined():
            found[str(entry._1())] = str(value.get())
    return found


def _metric(metrics: JavaObject, name: str) -> int | None:
    return int(metrics.apply(name).value()) if metrics.contains(name) else None
