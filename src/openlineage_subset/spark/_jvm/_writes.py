"""Writes: what one executed write command wrote, read from Spark's JVM.

:func:`write_facts` returns :class:`~openlineage_subset.spark._facts.WriteFacts`, plain data;
the written partitions and the output datasets are worked out from them in pure Python
(``spark/_writes.py``). The listing of a partitioned write's files is one Hadoop glob, read
back in one py4j round trip.
"""

from __future__ import annotations

import json
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
from openlineage_subset.spark._trees import Node, decode

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
_ATTRIBUTE_ID = re.compile(r"#(\d+)L?\Z")
MAX_QUERY_JSON = 4 << 20
"""The longest ``toJSON()`` of a write's query read for partition mappings (characters)."""


def attribute_id(text: str) -> int | None:
    """The id of an attribute as Spark prints it (``day#19`` -> 19); None if it has none."""
    match = _ATTRIBUTE_ID.search(text)
    return int(match.group(1)) if match else None


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
    printed = strings_of(command.partitionColumns())
    partition_columns = tuple(_ATTRIBUTE_ID.sub("", name) for name in printed)
    partition_ids = tuple(attribute_id(name) for name in printed)
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
    query = None
    if list_files and partition_columns and set(static) != set(partition_columns):
        files = _list_data_files(query_execution, root, len(partition_columns))
        query = _written_query(query_execution, command, kind)
        if kind == "InsertIntoHiveTable":
            partition_ids = _ids_by_name(query, partition_columns)
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
            query=query,
            partition_ids=tuple(
                None if column in static else attribute
                for column, attribute in zip(partition_columns, partition_ids, strict=False)
            ),
        )
    ]


def _written_query(query_execution: JavaObject, command: JavaObject, kind: str) -> Node | None:
    """The command's query as Spark optimized it, for the partition mappings; None when it
    cannot be read or is too large to walk (no mapping then, never a failed capture).

    Taken from the action's optimized plan, where the command is (through the single-child
    nodes above it): the command run holds its query as adaptive execution left it, with
    finished stages in place of the plans they ran.
    """
    try:
        node = query_execution.optimizedPlan()
        while str(node.getClass().getSimpleName()) != kind:
            children = node.children()
            if int(children.size()) != 1:
                node = command
                break
            node = children.apply(0)
        text = str(node.query().toJSON())
        if len(text) > MAX_QUERY_JSON:
            log.debug("a write's query of %d characters is not walked for mappings", len(text))
            return None
        return decode(json.loads(text))
    except Exception:
        log.debug("a write's query could not be read for mappings", exc_info=True)
        return None


def _ids_by_name(query: Node | None, columns: Sequence[str]) -> tuple[int | None, ...]:
    """A Hive insert's partition columns, by the names of its query's output (its last
    columns, named as the table's by Spark's analysis)."""
    if query is None:
        return tuple(None for _ in columns)
    names: dict[str, int] = {}
    node = query
    while "projectList" not in node.fields and len(node.children) == 1:
        node = node.children[0]
    for flat in node.fields.get("projectList") or ():
        head = flat[0] if flat else {}
        name = head.get("name")
        if isinstance(name, str) and isinstance(head.get("exprId"), dict):
            names[name.lower()] = int(head["exprId"]["id"])
    return tuple(names.get(column.lower()) for column in columns)


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
