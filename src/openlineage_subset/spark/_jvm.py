"""The py4j layer: everything the adapter reads from Spark's JVM, in a few bulk calls per scan.

A plan is walked node by node (its class and children), filter expressions cross as one
``toJSON()`` string each, and the partitions a scan selected cross as one string (the
file index's pruned ``PartitionPath`` list), whatever their number. The calls made per plan
are bounded by its size, never by the number of partitions or files. The rest of the adapter
is pure Python and works on the :class:`ScanFacts` this module returns.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

from openlineage_subset.spark._trees import Node, decode

log = logging.getLogger("openlineage_subset.spark")

FILE_SCAN = "FileSourceScanExec"
BATCH_SCAN = "BatchScanExec"
HIVE_SCAN = "HiveTableScanExec"
_SCANS = frozenset({FILE_SCAN, BATCH_SCAN, HIVE_SCAN})
# Unary nodes between a scan and the Filter that Spark plans right above it.
_PASS_THROUGH = frozenset({"ColumnarToRowExec", "InputAdapter", "WholeStageCodegenExec"})
# What adaptive execution puts where it found a stage empty: the scans below it leave the plan.
_EMPTIED_BY_AQE = frozenset({"EmptyRelation", "EmptyRelationExec", "LocalTableScanExec"})
# Hadoop prints a file as ...{path=<uri>; isDirectory=false; length=..}.
_FILE_PATH = re.compile(r"path=(.*?); isDirectory=")
_URI_OR_PATH = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|/)")
_HSET_SEPARATOR = "\u0000"

JavaObject = Any


@dataclass(frozen=True)
class ScanFacts:
    """What one scan of a plan read, as plain data."""

    source: str
    """The scan node: ``FileSourceScanExec``, ``BatchScanExec`` or ``HiveTableScanExec``."""
    format: str | None
    root_paths: tuple[str, ...]
    """The paths Spark lists (globs already resolved to what matched)."""
    given_path: str | None = None
    """The path as the user wrote it (a glob stays a glob), when Spark keeps it."""
    table: str | None = None
    table_location: str | None = None
    partition_columns: tuple[str, ...] = ()
    filters: tuple[Node, ...] = ()
    """Conjuncts every row the scan passes on satisfies: partition filters and the Filter above."""
    partition_filters: tuple[Node, ...] = ()
    directories: tuple[str, ...] | None = None
    """The directories holding the files read after partition pruning; None when unknown."""
    total_partitions: int | None = None
    """Partitions of the whole relation, where known without extra listing."""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def query_execution_of(subject: Any) -> tuple[JavaObject, bool]:
    """The JVM ``QueryExecution`` of a DataFrame or QueryExecution, and whether it ran.

    A DataFrame has not necessarily run: only what planning decides is used (static partition
    pruning). A QueryExecution handed over after an action has: runtime decisions such as
    dynamic partition pruning are used too.
    """
    from py4j.java_gateway import JavaObject as Py4jObject  # noqa: PLC0415  (pyspark is optional)

    if isinstance(subject, Py4jObject):
        if str(subject.getClass().getName()).endswith("QueryExecution"):
            return subject, True
    elif getattr(subject, "_jdf", None) is not None:
        return subject._jdf.queryExecution(), False
    raise TypeError(
        "expected a pyspark DataFrame or a JVM QueryExecution (df._jdf.queryExecution(), or "
        f"the one a QueryExecutionListener receives), got {type(subject).__name__}"
    )


def scan_facts(query_execution: JavaObject, *, executed: bool) -> list[ScanFacts]:
    """The facts of every scan in a query's physical plan, subqueries and AQE stages included.

    Scans that adaptive execution removed at run time (a stage it found empty, and whatever
    that emptied in turn) are taken from the plan as it was before AQE rewrote it: the query
    read, or would have read, those datasets too.
    """
    collector = _Collector(executed)
    collector.plan(query_execution.executedPlan())
    return collector.scans


def scan_key(facts: ScanFacts) -> tuple[object, ...]:
    """What tells one scan from another, whatever runtime pruning decided about it.

    Two scans with the same key read the same relation under the same static filters; the one
    in the plan as executed knows more (dynamic pruning), so it is the one kept.
    """
    static_filters = sorted(
        json.dumps([node.fields for node in tree.walk()], sort_keys=True, default=str)
        for tree in facts.filters
        if not _is_dynamic(tree)
    )
    return (
        facts.source,
        facts.root_paths,
        facts.given_path,
        facts.table,
        facts.partition_columns,
        tuple(static_filters),
    )


class _Collector:
    """Walks a physical plan through py4j, node by node.

    ``toJSON()`` of a whole plan would be one call, but Spark writes into it every plan a
    node holds besides its children (a write's whole logical query, each adaptive stage's
    plan), which makes it slow on exactly the plans that matter. So the walk asks each node
    only its class and children, and serializes just the filter expressions it needs.
    """

    def __init__(self, executed: bool) -> None:
        self.executed = executed
        self.scans: list[ScanFacts] = []
        self.emptied = 0
        """How many nodes standing for a stage that adaptive execution found empty were seen."""

    def plan(self, jplan: JavaObject) -> None:
        self._visit(jplan, [])
        subqueries = jplan.subqueriesAll()
        for index in range(subqueries.size()):
            self.plan(subqueries.apply(index))

    def _visit(self, jnode: JavaObject, ancestors: list[tuple[str, JavaObject]]) -> None:
        kind = _kind(jnode)
        if kind in _SCANS:
            try:
                facts = self._scan(kind, jnode, ancestors)
            except Exception:  # a scan we cannot read is skipped, the plan's others are not
                log.warning(
                    "could not read the %s of this plan; it is left out", kind, exc_info=True
                )
            else:
                if facts is not None:
                    self.scans.append(facts)
            return
        if kind == "AdaptiveSparkPlanExec":
            self._adaptive(jnode)
            return
        if kind in _EMPTIED_BY_AQE:
            self.emptied += 1
        if kind.endswith("QueryStageExec"):
            self.plan(jnode.plan())
            return
        if kind == "InMemoryTableScanExec":
            self.plan(jnode.relation().cachedPlan())
            return
        if kind == "ReusedExchangeExec":
            return  # the exchange it reuses is walked where it first appears
        children = jnode.children()
        for index in range(children.size()):
            self._visit(children.apply(index), [*ancestors, (kind, jnode)])

    def _adaptive(self, jnode: JavaObject) -> None:
        """An adaptive plan: its current plan, and the scans AQE dropped from its initial one.

        The initial plan is only walked when the current one shows an emptied stage, which is
        how AQE drops scans (``AQEPropagateEmptyRelation``); its scans are taken as planned
        (static pruning), which covers what they would have read.
        """
        emptied, first = self.emptied, len(self.scans)
        self.plan(jnode.executedPlan())
        if self.emptied == emptied:
            return
        initial = _Collector(executed=False)
        initial.plan(jnode.initialPlan())
        kept = {scan_key(facts) for facts in self.scans[first:]}
        self.scans.extend(facts for facts in initial.scans if scan_key(facts) not in kept)

    def _scan(
        self, kind: str, jscan: JavaObject, ancestors: list[tuple[str, JavaObject]]
    ) -> ScanFacts | None:
        filters = list(_filters_above(ancestors))
        if kind == FILE_SCAN:
            return self._file_scan(jscan, filters)
        if kind == BATCH_SCAN:
            return self._batch_scan(jscan, filters)
        return self._hive_scan(jscan, filters)

    def _file_scan(self, jscan: JavaObject, above: list[Node]) -> ScanFacts:
        relation = jscan.relation()
        location = relation.location()
        jfilters = jscan.partitionFilters()
        partition_filters = _filter_trees(jfilters)
        table, table_location = _catalog_table(jscan, relation)
        total = None
        if table is None and location.getClass().getSimpleName() == "InMemoryFileIndex":
            total = int(location.partitionSpec().partitions().size())
        root_paths = _lines(location.rootPaths().mkString("\n"))
        partition_columns = _field_names(relation.partitionSchema().json())
        if not partition_columns:
            directories = root_paths
        elif self.executed and any(_is_dynamic(tree) for tree in partition_filters):
            directories = _directories(self._dynamically_selected(jscan))
        else:
            directories = _pruned_directories(location, jfilters, partition_filters)
        return ScanFacts(
            source=FILE_SCAN,
            format=_format_name(relation.fileFormat()),
            root_paths=root_paths,
            given_path=_qualified(relation.sparkSession(), _option(relation.options().get("path"))),
            table=table,
            table_location=table_location,
            partition_columns=partition_columns,
            filters=(*partition_filters, *above),
            partition_filters=tuple(partition_filters),
            directories=directories,
            total_partitions=total,
        )

    def _dynamically_selected(self, jscan: JavaObject) -> JavaObject:
        """The partition directories left after dynamic partition pruning, as Spark ran it."""
        try:
            listing = jscan.dynamicallySelectedPartitions()
        except Exception:  # not run after all: static pruning is still a sound superset
            log.debug("dynamically selected partitions unavailable", exc_info=True)
            listing = jscan.selectedPartitions()
        if not isinstance(listing, _java_array_type()):  # Spark 4: a ScanFileListing
            listing = listing.partitionDirectories()
        return listing

    def _batch_scan(self, jscan: JavaObject, above: list[Node]) -> ScanFacts | None:
        scan = jscan.scan()
        if not _is_instance(scan, "org.apache.spark.sql.execution.datasources.v2.FileScan"):
            log.debug("DataSource V2 scan %s is not a file scan; left out", scan)
            return None
        index = scan.fileIndex()
        jfilters = scan.partitionFilters()
        partition_filters = _filter_trees(jfilters)
        name = str(scan.getClass().getSimpleName())
        root_paths = _lines(index.rootPaths().mkString("\n"))
        partition_columns = _field_names(index.partitionSchema().json())
        return ScanFacts(
            source=BATCH_SCAN,
            format=name.removesuffix("Scan").lower() or None,
            root_paths=root_paths,
            given_path=_qualified(scan.sparkSession(), _none_if_null(scan.options().get("path"))),
            partition_columns=partition_columns,
            filters=(*partition_filters, *above),
            partition_filters=tuple(partition_filters),
            directories=(
                _pruned_directories(index, jfilters, partition_filters)
                if partition_columns
                else root_paths
            ),
            total_partitions=int(index.partitionSpec().partitions().size()),
        )

    def _hive_scan(self, jscan: JavaObject, above: list[Node]) -> ScanFacts:
        relation = jscan.relation()
        meta = relation.tableMeta()
        partition_filters = _filter_trees(jscan.partitionPruningPred())
        location = str(meta.location().toString())
        return ScanFacts(
            source=HIVE_SCAN,
            format="hive",
            root_paths=(location,),
            table=str(meta.identifier().unquotedString()),
            table_location=location,
            partition_columns=_lines(meta.partitionColumnNames().mkString("\n")),
            filters=(*partition_filters, *above),
            partition_filters=tuple(partition_filters),
            extra={"partition_names": _hive_partition_names(jscan)},
        )


def _same(value: JavaObject) -> JavaObject:
    return value


def _conjuncts(node: Node) -> Iterator[Node]:
    if node.kind == "And":
        yield from _conjuncts(node.child("left"))
        yield from _conjuncts(node.child("right"))
    else:
        yield node


_KINDS_BY_NODE_NAME = {
    "Filter": "FilterExec",
    "ColumnarToRow": "ColumnarToRowExec",
    "InputAdapter": "InputAdapter",
    "AdaptiveSparkPlan": "AdaptiveSparkPlanExec",
    "InMemoryTableScan": "InMemoryTableScanExec",
    "ReusedExchange": "ReusedExchangeExec",
}


def _kind(jnode: JavaObject) -> str:
    """A plan node's class name, in one round trip for most nodes.

    ``nodeName`` is the class name without ``Exec`` for most nodes, which is all the walk
    needs to know of them; scans and adaptive stages (whose names carry more) are asked their
    class.
    """
    name = str(jnode.nodeName())
    if name.startswith("WholeStageCodegen"):
        return "WholeStageCodegenExec"
    if name in _KINDS_BY_NODE_NAME:
        return _KINDS_BY_NODE_NAME[name]
    if "Scan" in name or name.endswith("QueryStage"):
        return str(jnode.getClass().getSimpleName())
    return name


def _filter_trees(jfilters: JavaObject) -> list[Node]:
    """The expression trees of a sequence of filters, with what their JSON leaves out."""
    trees = []
    for position in range(jfilters.size()):
        jexpression = jfilters.apply(position)
        tree = decoded(jexpression)
        _read_extras(tree, partial(_same, jexpression))
        trees.append(tree)
    return trees


def _filters_above(ancestors: list[tuple[str, JavaObject]]) -> Iterator[Node]:
    """Conjuncts of the Filter nodes directly above a scan (through pass-through nodes)."""
    for kind, jnode in reversed(ancestors):
        if kind == "FilterExec":
            jcondition = jnode.condition()
            condition = decoded(jcondition)
            _read_extras(condition, partial(_same, jcondition))
            yield from _conjuncts(condition)
        elif kind not in _PASS_THROUGH:
            return


def _read_extras(tree: Node, jexpression: Callable[[], JavaObject]) -> None:
    """Read what the JSON of an expression leaves out: ``InSet`` values, exact timestamps.

    Nodes are fetched by their pre-order number (``TreeNode.apply``); a node whose class is not
    the expected one (numbering differs when subqueries are inside) is left without extras,
    which makes the translation drop it.
    """
    for node in tree.walk():
        wanted = node.kind == "InSet" or (
            node.kind == "Literal"
            and node.fields.get("dataType") in ("timestamp", "timestamp_ntz")
            and node.fields.get("value") is not None
        )
        if not wanted:
            continue
        jnode = jexpression().apply(node.index)
        if str(jnode.getClass().getSimpleName()) != node.kind:
            continue
        if node.kind == "Literal":
            node.extra["micros"] = int(jnode.value())
        else:
            values = jnode.hset()
            text = str(values.mkString(_HSET_SEPARATOR))
            parts = text.split(_HSET_SEPARATOR) if text else []
            if len(parts) == int(values.size()):
                node.extra["values"] = parts


def _catalog_table(jscan: JavaObject, relation: JavaObject) -> tuple[str | None, str | None]:
    """The catalog name and location of a table scan; (None, None) for a read by path."""
    identifier = jscan.tableIdentifier()
    if not identifier.isDefined():
        return None, None
    table = relation.sparkSession().sessionState().catalog().getTableMetadata(identifier.get())
    return str(identifier.get().unquotedString()), str(table.location().toString())


def _hive_partition_names(jscan: JavaObject) -> tuple[str, ...] | None:
    """Partition paths (``k=v/k2=v2``) a Hive table scan reads, in one call; None if unknown."""
    try:
        partitions = jscan.prunedPartitions()
    except Exception:  # a Spark without it: the table is then taken as read whole
        log.debug("HiveTableScanExec.prunedPartitions unavailable", exc_info=True)
        return None
    # Hive prints a partition as table(k=v/k2=v2), its name escaped like a path.
    lines = _lines(partitions.mkString("\n"))
    return tuple(line.partition("(")[2].removesuffix(")") for line in lines)


def _pruned_directories(
    index: JavaObject, jfilters: JavaObject, filters: list[Node]
) -> tuple[str, ...]:
    """Partition directories a file index keeps under the (static) partition filters.

    ``prunePartitions`` returns ``PartitionPath(values, path)`` items, printed in one string of
    about one line per partition; dynamic filters (decided at run time) are left out, which
    keeps a sound superset. An index that cannot prune this way is listed file by file.
    """
    kept = java_class("java.util.ArrayList")()
    for position, tree in enumerate(filters):
        if not _is_dynamic(tree):
            kept.add(jfilters.apply(position))
    try:
        pruned = index.prunePartitions(
            java_class("org.apache.spark.api.python.PythonUtils").toSeq(kept),
            index.partitionSpec(),
        )
    except Exception:  # not a PartitioningAwareFileIndex: list the files it selects
        log.debug("%s cannot prune partitions; listing its files", index, exc_info=True)
        no_data_filters = java_class("org.apache.spark.api.python.PythonUtils").toSeq(
            java_class("java.util.ArrayList")()
        )
        return _directories(index.listFiles(jfilters, no_data_filters))
    return tuple(_partition_path(line) for line in _lines(pruned.mkString("\n")))


def _partition_path(line: str) -> str:
    """The path of a printed ``PartitionPath([v1,v2],path)``: after the values, before ``)``."""
    start = line.find("],")
    while start != -1:
        candidate = line[start + 2 : -1]
        if _URI_OR_PATH.match(candidate):
            return candidate
        start = line.find("],", start + 1)
    raise ValueError(f"unexpected partition path form: {line[:200]!r}")


def qualified_path(jsession: JavaObject, path: str) -> str:
    """A path as Spark resolves it: a relative one against the file system's working directory.

    ``lake/events`` on the local file system is ``file:/<JVM working directory>/lake/events``;
    with ``fs.defaultFS`` set to HDFS it is ``hdfs://namenode:8020/user/<name>/lake/events``.
    """
    hadoop_path = java_class("org.apache.hadoop.fs.Path")(path)
    filesystem = hadoop_path.getFileSystem(jsession.sessionState().newHadoopConf())
    return str(filesystem.makeQualified(hadoop_path).toString())


def _qualified(jsession: JavaObject, path: str | None) -> str | None:
    """``path`` qualified when relative (no round trip for a qualified one)."""
    if path is None or _URI_OR_PATH.match(path):
        return path
    return qualified_path(jsession, path)


def string_of(value: JavaObject) -> str:
    """``ScalaRunTime.stringOf``: one string for a whole array or collection, in one call."""
    return str(java_class("scala.runtime.ScalaRunTime").stringOf(value))


def decoded(tree_node: JavaObject) -> Node:
    """A JVM plan or expression as a decoded tree, from one ``toJSON()`` call."""
    return decode(json.loads(tree_node.toJSON()))


def _directories(listing: JavaObject) -> tuple[str, ...]:
    """Directories of the files of partition directories (``PartitionDirectory``), in one call."""
    paths = _FILE_PATH.findall(string_of(listing))
    return tuple(dict.fromkeys(path.rpartition("/")[0] for path in paths))


def _is_dynamic(tree: Node) -> bool:
    return any(
        node.kind == "DynamicPruningExpression" or "Subquery" in node.kind for node in tree.walk()
    )


def _is_instance(value: JavaObject, class_name: str) -> bool:
    target = java_class("java.lang.Class").forName(class_name)
    return bool(target.isAssignableFrom(value.getClass()))


def _java_array_type() -> type:
    from py4j.java_collections import JavaArray  # noqa: PLC0415  (pyspark is optional)

    return cast(type, JavaArray)


def jvm_view() -> Any:
    """The JVM of the active SparkContext."""
    from pyspark import SparkContext  # noqa: PLC0415  (pyspark is optional)

    jvm = SparkContext._jvm
    if jvm is None:
        raise RuntimeError("no active SparkContext")
    return jvm


_CLASSES: dict[tuple[int, str], Any] = {}


def java_class(name: str) -> Any:
    """A JVM class by its full name, looked up once per JVM.

    Reaching a class through py4j's JVM view (``jvm.org.apache...``) costs one round trip per
    dotted name, every time; the class object, kept, costs none.
    """
    jvm = jvm_view()
    key = (id(jvm), name)
    if key not in _CLASSES:
        target = jvm
        for part in name.split("."):
            target = getattr(target, part)
        _CLASSES[key] = target
    return _CLASSES[key]


def _format_name(file_format: JavaObject) -> str | None:
    try:
        return str(file_format.shortName())
    except Exception:  # not a DataSourceRegister: its class name says enough
        return str(file_format.toString()).lower() or None


def _field_names(schema_json: str) -> tuple[str, ...]:
    return tuple(str(f["name"]) for f in json.loads(schema_json).get("fields", []))


def _option(value: JavaObject) -> str | None:
    return str(value.get()) if value.isDefined() else None


def _none_if_null(value: object) -> str | None:
    return None if value is None else str(value)


def _lines(text: str) -> tuple[str, ...]:
    return tuple(line for line in str(text).split("\n") if line)
