"""Writes: what one executed write command wrote, read from Spark's JVM.

:func:`write_facts` returns :class:`~openlineage_subset.spark._facts.WriteFacts`, plain data;
the written partitions and the output datasets are worked out from them in pure Python
(``spark/_writes.py``). The listing of a partitioned write's files is one Hadoop glob, read
back in one py4j round trip.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from openlineage_subset.producer import scrubbed_logger, warn_once
from openlineage_subset.spark._facts import WriteFacts
from openlineage_subset.spark._jvm._bridge import (
    JavaObject,
    java_class,
    qualified_path,
    string_map,
    string_of,
    strings_of,
)

log = scrubbed_logger("openlineage_subset.spark")

_WRITE_COMMANDS = frozenset(
    {"InsertIntoHadoopFsRelationCommand", "InsertIntoHiveTable", "InsertIntoHiveDirCommand"}
)
# A path may hold any character but NUL (newlines too): matched across lines, and checked.
_FILE_STATUS = re.compile(
    r"\{path=(?P<path>.*?); isDirectory=(?P<dir>true|false)"
    r"(?:; length=\d+; replication=\d+; blocksize=\d+)?; modification_time=(?P<mtime>\d+);",
    re.DOTALL,
)
_ATTRIBUTE_ID = re.compile(r"#\d+L?\Z")


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
