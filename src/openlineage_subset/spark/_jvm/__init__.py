"""The py4j layer: everything the adapter reads from Spark's JVM, in a few bulk calls per scan.

A plan is walked node by node (its class and children), filter expressions cross as one
``toJSON()`` string each, and the partitions a scan selected cross as one string (the
file index's pruned ``PartitionPath`` list), whatever their number. The calls made per plan
are bounded by its size, never by the number of partitions or files. The rest of the adapter
is pure Python and works on the facts (``spark/_facts.py``) this package returns.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from openlineage_subset.producer._degrade import warn_once
from openlineage_subset.spark._facts import ChangeFacts, ScanFacts, TableFacts
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
# DataSource V2 writes through a V1 fallback: the query they write is a logical plan.
_V1_FALLBACK_WRITES = frozenset({"AppendDataExecV1", "OverwriteByExpressionExecV1"})
_CACHED_PLANS: OrderedDict[tuple[int, int, bool], tuple[JavaObject, tuple[ScanFacts, ...]]] = (
    OrderedDict()
)
"""The scans of the cached plans seen last (see ``_Collector._cached``), newest last."""
_CACHED_PLANS_KEPT = 64
_WITHOUT_EXPRESSIONS = frozenset(
    {
        "AdaptiveSparkPlanExec",
        "ShuffleQueryStageExec",
        "BroadcastQueryStageExec",
        "ResultQueryStageExec",
        "TableCacheQueryStageExec",
    }
)
"""Nodes that hold plans but no expressions: their subqueries are in the plans they hold."""
_ACTED_ON_AT_ROOT = (
    _SCANS
    | _V1_FALLBACK_WRITES
    | {
        "AdaptiveSparkPlanExec",
        "InMemoryTableScanExec",
        "ReusedExchangeExec",
    }
)
_CACHED_PLANS_LOCK = threading.Lock()
# Hadoop prints a file as ...{path=<uri>; isDirectory=false; length=..}; a path may hold any
# character but NUL, newlines included.
_FILE_PATH = re.compile(r"\{path=(.*?); isDirectory=", re.DOTALL)
_FILE_PATH_END = "; isDirectory="
_SEPARATOR = "\u0000"
"""Joins the texts of a collection crossing py4j: no path or name can hold it."""
_URI_OR_PATH = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|/)")
_HSET_SEPARATOR = "\u0000"

JavaObject = Any


class SparkConnectNotSupportedError(TypeError):
    """A Spark Connect session or DataFrame was given where capture needs a classic one.

    A Spark Connect client (``SparkSession.builder.remote(...)``, PySpark 3.4 and later) has no
    JVM in the Python process: its query plans live in the Connect server, out of reach.
    """


_CONNECT_HOW = (
    "capture needs a classic SparkSession, whose JVM runs in this Python process; build the "
    "session without .remote() (and without SPARK_REMOTE or SPARK_CONNECT_MODE_ENABLED in the "
    "environment), e.g. SparkSession.builder.master(...).getOrCreate() or a spark-submit'ed "
    "script"
)


def is_spark_connect(subject: object) -> bool:
    """Whether ``subject`` (a session, DataFrame, ...) belongs to a Spark Connect client."""
    return type(subject).__module__.startswith("pyspark.sql.connect")


def require_classic(subject: object, what: str) -> None:
    """Raise :class:`SparkConnectNotSupportedError` when ``subject`` is a Spark Connect object;
    ``what`` names the call (``"enable()"``)."""
    if is_spark_connect(subject):
        kind = type(subject).__name__
        raise SparkConnectNotSupportedError(
            f"{what} was given a Spark Connect {kind} ({type(subject).__module__}): it has no "
            f"JVM in this process, so its query plans cannot be read here; {_CONNECT_HOW}"
        )


def query_execution_of(subject: Any, caller: str) -> tuple[JavaObject, bool]:
    """The JVM ``QueryExecution`` of a DataFrame or QueryExecution, and whether it ran.

    A DataFrame has not necessarily run: only what planning decides is used (static partition
    pruning). A QueryExecution handed over after an action has: runtime decisions such as
    dynamic partition pruning are used too. ``caller`` names the public call in errors.
    """
    from py4j.java_gateway import JavaObject as Py4jObject  # noqa: PLC0415  (pyspark is optional)

    require_classic(subject, caller)
    if isinstance(subject, Py4jObject):
        if str(subject.getClass().getName()).endswith("QueryExecution"):
            return subject, True
    elif getattr(subject, "_jdf", None) is not None:
        return subject._jdf.queryExecution(), False
    raise TypeError(
        "expected a pyspark DataFrame or a JVM QueryExecution (df._jdf.queryExecution(), or "
        f"the one a QueryExecutionListener receives), got {type(subject).__name__}"
    )


@dataclass(frozen=True)
class PlanFacts:
    """What one walk of an executed plan found: its scans, its root, the writes on the way."""

    scans: tuple[ScanFacts, ...]
    root: JavaObject = field(compare=False)
    """The executed plan (None when the query read cached data only: it was not walked)."""
    root_class: str
    """The class of the plan's root (``ExecutedCommandExec``, ``AdaptiveSparkPlanExec``...)."""
    writes: tuple[JavaObject, ...] = field(default=(), compare=False)
    """The ``DataWritingCommandExec`` nodes met, in AQE stages too."""


def plan_facts(query_execution: JavaObject, *, executed: bool) -> PlanFacts:
    """Walk a query's physical plan once: every scan (subqueries, AQE stages and cached plans
    included) and every write command.

    Scans that adaptive execution removed at run time (a stage it found empty, and whatever
    that emptied in turn) are taken from the plan as it was before AQE rewrote it: the query
    read, or would have read, those datasets too.
    """
    if executed:
        from_cache = _read_from_cache_only(query_execution)
        if from_cache is not None:
            return PlanFacts(from_cache, None, "")
    root = query_execution.executedPlan()
    collector = _Collector(executed, query_execution)
    collector.plan(root)
    return PlanFacts(
        tuple(collector.scans), root, collector.root_kind or "", tuple(collector.writes)
    )


_LOCAL_LEAVES = frozenset({"LocalRelation", "Range", "OneRowRelation"})
"""Logical leaves that read no dataset."""


def _read_from_cache_only(query_execution: JavaObject) -> tuple[ScanFacts, ...] | None:
    """The scans of a query that reads only cached plans seen before; None for any other.

    The short actions a job repeats most (``count()`` of a cached DataFrame) read nothing but
    cached data: their optimized logical plan is a query (not a command) without subqueries
    whose leaves are cached relations and local data. Their scans are those of the cached
    plans, remembered from the first action that walked them (see ``_Collector._cached``):
    about ten round trips instead of a walk of the physical plan.
    """
    logical = query_execution.optimizedPlan()
    if java_member(_LOGICAL_COMMAND, "isInstance")(logical):
        return None
    if int(logical.subqueriesAll().size()):
        return None
    leaves = logical.collectLeaves()
    scans: list[ScanFacts] = []
    for index in range(leaves.size()):
        leaf = leaves.apply(index)
        kind = str(leaf.nodeName())
        if kind in _LOCAL_LEAVES:
            continue
        if kind != "InMemoryRelation":
            return None
        known = _known_cached_plan(leaf.cachedPlan(), executed=True)
        if known is None:
            return None
        scans.extend(known)
    return tuple(scans)


_LOGICAL_COMMAND = "java.lang.Class:org.apache.spark.sql.catalyst.plans.logical.Command"
"""The class of logical commands (writes, DDL), as :func:`java_member` looks it up."""


def _known_cached_plan(jplan: JavaObject, *, executed: bool) -> tuple[ScanFacts, ...] | None:
    """The scans remembered for a cached plan (see ``_Collector._cached``), if any."""
    key = _cached_plan_key(jplan, executed=executed)
    with _CACHED_PLANS_LOCK:
        known = _CACHED_PLANS.get(key)
    if known is not None and known[0].equals(jplan):
        return known[1]
    return None


def _cached_plan_key(jplan: JavaObject, *, executed: bool) -> tuple[int, int, bool]:
    identity_hash = java_member("java.lang.System", "identityHashCode")
    return (id(jvm_view()), int(identity_hash(jplan)), executed)


def scan_facts(query_execution: JavaObject, *, executed: bool) -> list[ScanFacts]:
    """The facts of every scan in a query's physical plan (see :func:`plan_facts`)."""
    return list(plan_facts(query_execution, executed=executed).scans)


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

    def __init__(self, executed: bool, query_execution: JavaObject = None) -> None:
        self.executed = executed
        self.query_execution = query_execution
        self.scans: list[ScanFacts] = []
        self.writes: list[JavaObject] = []
        self.root_kind: str | None = None
        """The class of the first plan walked (the query's root)."""
        self.emptied = 0
        """How many nodes standing for a stage that adaptive execution found empty were seen."""

    def plan(self, jplan: JavaObject) -> None:
        kind = self._tree(jplan)
        if self.root_kind is None:
            self.root_kind = kind
        if kind in _WITHOUT_EXPRESSIONS:
            return  # its subqueries are in the plans it holds, walked as plans of their own
        subqueries = jplan.subqueriesAll()
        for index in range(subqueries.size()):
            self.plan(subqueries.apply(index))

    def _tree(self, jroot: JavaObject) -> str:
        """One tree (a plan, an adaptive stage's plan): through its leaves when no scan is one
        of them, node by node otherwise (a scan needs the filters above it).

        What the walk acts on besides scans sits at a tree's root (adaptive plans, writes) or
        is a leaf (query stages, cached plans, emptied stages), so the nodes in between can be
        skipped: a few round trips instead of a few per node. Returns the root's kind.
        """
        kind = _kind(jroot)
        if kind in _ACTED_ON_AT_ROOT:
            self._visit_known(jroot, kind, [])
            return kind
        leaves = jroot.collectLeaves()
        found = [(leaf, _kind(leaf)) for leaf in map(leaves.apply, range(leaves.size()))]
        if any(leaf_kind in _SCANS for _, leaf_kind in found):
            self._visit_known(jroot, kind, [])
            return kind
        if kind == "DataWritingCommandExec":
            self.writes.append(jroot)
        for leaf, leaf_kind in found:
            self._visit_known(leaf, leaf_kind, [])
        return kind

    def _visit(self, jnode: JavaObject, ancestors: list[tuple[str, JavaObject]]) -> None:
        self._visit_known(jnode, _kind(jnode), ancestors)

    def _visit_known(
        self, jnode: JavaObject, kind: str, ancestors: list[tuple[str, JavaObject]]
    ) -> None:
        if kind in _SCANS:
            try:
                facts = self._scan(kind, jnode, ancestors)
            except Exception as error:  # the scan still names what it read, if it can
                facts = _whole_scan(kind, jnode, error)
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
            self._cached(jnode.relation().cachedPlan())
            return
        if kind == "DataWritingCommandExec":
            self.writes.append(jnode)
        if kind == "ReusedExchangeExec":
            return  # the exchange it reuses is walked where it first appears
        if kind in _V1_FALLBACK_WRITES:
            self._v1_fallback_query(jnode)
            return
        children = jnode.children()
        for index in range(children.size()):
            self._visit(children.apply(index), [*ancestors, (kind, jnode)])

    def _cached(self, jplan: JavaObject) -> None:
        """The scans of a cached plan: walked once, then remembered for as long as it is cached.

        Every action on a cached DataFrame reads through the very same cached plan object; its
        scans, fixed when the cache was built, need not cross py4j again. The plan is known by
        its identity hash, confirmed by ``equals`` (one round trip each).
        """
        known = _known_cached_plan(jplan, executed=self.executed)
        if known is not None:
            self.scans.extend(known)
            return
        key = _cached_plan_key(jplan, executed=self.executed)
        walked = _Collector(self.executed, self.query_execution)
        walked.plan(jplan)
        self.scans.extend(walked.scans)
        self.emptied += walked.emptied
        with _CACHED_PLANS_LOCK:
            _CACHED_PLANS[key] = (jplan, tuple(walked.scans))
            _CACHED_PLANS.move_to_end(key)
            while len(_CACHED_PLANS) > _CACHED_PLANS_KEPT:
                _CACHED_PLANS.popitem(last=False)

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

    def _v1_fallback_query(self, jnode: JavaObject) -> None:
        """The scans of the query a V1-fallback V2 write (a JDBC catalog's table) wrote.

        Such a write holds its query as a logical plan, run later in an action of its own; it
        is planned here (not run) so that the write's run names what it read.
        """
        if self.query_execution is None:
            return
        jsession = self.query_execution.sparkSession()
        mode = java_class("org.apache.spark.sql.execution.CommandExecutionMode").ALL()
        planned = _Collector(executed=False)
        planned.plan(jsession.sessionState().executePlan(jnode.plan(), mode).executedPlan())
        self.scans.extend(planned.scans)

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
        root_paths = strings_of(location.rootPaths())
        partition_columns = _field_names(relation.partitionSchema().json())
        directories: tuple[str, ...] | None = None
        if not partition_columns:
            directories = root_paths
        elif self.executed and any(_is_dynamic(tree) for tree in partition_filters):
            directories = _directories(self._dynamically_selected(jscan), root_paths)
        if directories is None:
            directories = _pruned_directories(location, jfilters, partition_filters, root_paths)
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
        root_paths = strings_of(index.rootPaths())
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
                _pruned_directories(index, jfilters, partition_filters, root_paths)
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
            partition_columns=strings_of(meta.partitionColumnNames()),
            filters=(*partition_filters, *above),
            partition_filters=tuple(partition_filters),
            partition_names=_hive_partition_names(jscan),
        )


def _whole_scan(kind: str, jscan: JavaObject, error: Exception) -> ScanFacts | None:
    """What a scan read when its details cannot be read: its paths alone (the whole dataset).

    Said once per dataset; a scan whose paths cannot be read either is left out, said too.
    """
    try:
        if kind == HIVE_SCAN:
            location = str(jscan.relation().tableMeta().location().toString())
            roots: tuple[str, ...] = (location,)
        elif kind == BATCH_SCAN:
            roots = strings_of(jscan.scan().fileIndex().rootPaths())
        else:
            roots = strings_of(jscan.relation().location().rootPaths())
    except Exception:
        warn_once(kind, f"left out: neither its details nor its paths can be read ({error!r})")
        return None
    for root in roots:
        warn_once(root, f"read without a subset facet: its {kind} could not be read ({error!r})")
    return ScanFacts(source=kind, format=None, root_paths=roots)


def _conjuncts(node: Node) -> Iterator[Node]:
    if node.kind == "And":
        yield from _conjuncts(node.child("left"))
        yield from _conjuncts(node.child("right"))
    else:
        yield node


_KINDS_BY_NODE_NAME = {
    "DropTable": "DropTableExec",
    "AppendData": "AppendDataExec",
    "OverwriteByExpression": "OverwriteByExpressionExec",
    "OverwritePartitionsDynamic": "OverwritePartitionsDynamicExec",
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
    if name.endswith("QueryStage"):  # ShuffleQueryStage is a ShuffleQueryStageExec...
        return name + "Exec"
    if "Scan" in name or name.startswith("Execute "):
        return str(jnode.getClass().getSimpleName())
    return name


def _filter_trees(jfilters: JavaObject) -> list[Node]:
    """The expression trees of a sequence of filters, with what their JSON leaves out."""
    trees = []
    for position in range(jfilters.size()):
        jexpression = jfilters.apply(position)
        tree = decoded(jexpression)
        _read_exact_values(tree, jexpression)
        trees.append(tree)
    return trees


def _filters_above(ancestors: list[tuple[str, JavaObject]]) -> Iterator[Node]:
    """Conjuncts of the Filter nodes directly above a scan (through pass-through nodes)."""
    for kind, jnode in reversed(ancestors):
        if kind == "FilterExec":
            jcondition = jnode.condition()
            condition = decoded(jcondition)
            _read_exact_values(condition, jcondition)
            yield from _conjuncts(condition)
        elif kind not in _PASS_THROUGH:
            return


def _read_exact_values(tree: Node, jexpression: JavaObject) -> None:
    """Read what the JSON of an expression leaves out: ``InSet`` values, exact timestamps.

    Nodes are fetched by their pre-order number (``TreeNode.apply``); a node whose class is not
    the expected one (numbering differs when subqueries are inside) is left without them,
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
        jnode = jexpression.apply(node.index)
        if str(jnode.getClass().getSimpleName()) != node.kind:
            continue
        if node.kind == "Literal":
            node.exact.timestamp_micros = int(jnode.value())
        else:
            values = jnode.hset()
            text = str(values.mkString(_HSET_SEPARATOR))
            parts = text.split(_HSET_SEPARATOR) if text else []
            if len(parts) == int(values.size()):
                node.exact.set_values = parts


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
    # Hive prints a partition as table(k=v/k2=v2), its name escaped like a path (no "(").
    return tuple(text.rpartition("(")[2].removesuffix(")") for text in strings_of(partitions))


def _pruned_directories(
    index: JavaObject, jfilters: JavaObject, filters: list[Node], roots: tuple[str, ...]
) -> tuple[str, ...] | None:
    """Partition directories a file index keeps under the (static) partition filters; None
    when they cannot be told for sure.

    ``prunePartitions`` returns ``PartitionPath(values, path)`` items, printed in one string
    (see :func:`_partition_path`); dynamic filters (decided at run time) are left out, which
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
        return _directories(index.listFiles(jfilters, no_data_filters), roots)
    found = []
    for text in strings_of(pruned):
        path = _partition_path(text, roots)
        if path is None:
            log.debug("partition path not under the scan's roots: %r", text[:300])
            return None
        found.append(path)
    return tuple(found)


def _partition_path(text: str, roots: tuple[str, ...]) -> str | None:
    """The path of a printed ``PartitionPath(values,path)``; None if it is not a root or below
    one.

    The values are printed raw, so they may hold anything, a path-like text included; the path
    comes last and is one of the scan's root paths or lies below one, and the partition
    directories below a root hold no ``,`` followed by a root (Spark escapes ``:`` and ``/`` in
    them). So the last ``,<root>`` that ends the text or goes on with ``/`` starts the path.

    >>> _partition_path("PartitionPath([a,file:/r/k=b],file:/r/k=a,file%3A%2Fr)", ("file:/r",))
    'file:/r/k=a,file%3A%2Fr'
    >>> _partition_path("PartitionPath([1],file:/r/k=1)", ("file:/r/k=1",))
    'file:/r/k=1'
    """
    body = text.removesuffix(")")
    best = -1
    for root in roots:
        marker = "," + root.rstrip("/")
        start = body.rfind(marker)
        while start > best:
            end = start + len(marker)
            if end == len(body) or body[end] == "/":
                best = start
                break
            start = body.rfind(marker, 0, start)
    return None if best < 0 else body[best + 1 :]


def qualified_path(jsession: JavaObject, path: str, *, local: bool = False) -> str:
    """A path as Spark resolves it: a relative one against the file system's working directory.

    ``lake/events`` on the local file system is ``file:/<JVM working directory>/lake/events``;
    with ``fs.defaultFS`` set to HDFS it is ``hdfs://namenode:8020/user/<name>/lake/events``.
    ``local=True`` resolves on the driver's local file system (``LOAD DATA LOCAL``,
    ``INSERT OVERWRITE LOCAL DIRECTORY``).
    """
    hadoop_path = java_class("org.apache.hadoop.fs.Path")(path)
    conf = jsession.sessionState().newHadoopConf()
    if local:
        filesystem = java_class("org.apache.hadoop.fs.FileSystem").getLocal(conf)
    else:
        filesystem = hadoop_path.getFileSystem(conf)
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


def _directories(listing: JavaObject, roots: tuple[str, ...]) -> tuple[str, ...] | None:
    """Directories of the files of partition directories (``PartitionDirectory``), in one call;
    None when the printed listing cannot be read for sure (a path holding ``; isDirectory=``)
    or names a file outside the scan's roots."""
    text = string_of(listing)
    paths = _FILE_PATH.findall(text)
    if len(paths) != text.count(_FILE_PATH_END):
        return None
    prefixes = tuple(root.rstrip("/") + "/" for root in roots)
    if not all(path.startswith(prefixes) for path in paths):
        return None
    return tuple(dict.fromkeys(path.rpartition("/")[0] for path in paths))


def strings_of(collection: JavaObject) -> tuple[str, ...]:
    """The text of each element of a Scala collection, in two round trips whatever its size.

    The elements cross joined by NUL, which no path or name holds; should one hold it anyway,
    the count gives it away and they are read one by one.
    """
    size = int(collection.size())
    if size == 0:
        return ()
    parts = str(collection.mkString(_SEPARATOR)).split(_SEPARATOR)
    if len(parts) == size:
        return tuple(parts)
    return tuple(str(collection.apply(index)) for index in range(size))


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


def java_member(class_name: str, member: str) -> Any:
    """A static method of a JVM class, looked up once per JVM (py4j asks the JVM each time an
    attribute of a class is read). ``java.lang.Class:<name>`` stands for the ``Class`` object
    of ``<name>``, whose instance methods (``isInstance``) are then the members.
    """
    key = (id(jvm_view()), f"{class_name}#{member}")
    if key not in _CLASSES:
        if class_name.startswith("java.lang.Class:"):
            target = java_class("java.lang.Class").forName(class_name.partition(":")[2])
        else:
            target = java_class(class_name)
        _CLASSES[key] = getattr(target, member)
    return _CLASSES[key]


# -- the session: its identity, listeners, configuration ---------------------------------------


def session_key(spark: Any) -> int:
    """What tells one SparkSession from another: its JVM session (PySpark may wrap one JVM
    session in several Python objects)."""
    return id(spark._jsparkSession)


def drain_listener_bus(spark: Any) -> None:
    """Wait until Spark's listener bus has delivered every event posted so far (our listener
    has then seen every action that ran)."""
    spark._jsc.sc().listenerBus().waitUntilEmpty()


def register_listener(spark: Any, listener: Any) -> JavaObject:
    """Register a Python ``QueryExecutionListener``; returns the JVM proxy py4j made for it,
    which alone can unregister it (py4j makes a new proxy each time an object crosses)."""
    from pyspark import java_gateway  # noqa: PLC0415  (pyspark is optional)

    # Typed loosely on purpose: pyspark types the function in some versions, not others.
    start_callback_server: Any = java_gateway.ensure_callback_server_started
    start_callback_server(spark.sparkContext._gateway)
    manager = spark._jsparkSession.listenerManager()
    manager.register(listener)
    registered = manager.listListeners()  # in registration order: ours is the last
    return registered[len(registered) - 1]


def unregister_listener(spark: Any, proxy: JavaObject) -> None:
    """Unregister the listener whose JVM proxy ``register_listener`` returned."""
    spark._jsparkSession.listenerManager().unregister(proxy)


def conf_with_prefix(spark: Any, prefix: str) -> dict[str, str]:
    """The Spark conf entries whose key starts with ``prefix`` (keys kept whole), in a few round
    trips however large the conf."""
    return {
        prefix + str(entry._1()): str(entry._2())
        for entry in spark.sparkContext._jsc.sc().conf().getAllWithPrefix(prefix)
    }


def java_error_text(exception: Any) -> tuple[str, str | None]:
    """The message and stack trace of a JVM exception, as the JVM prints them; for a Python
    exception (or with the JVM gone), its text and no trace."""
    try:
        message = str(exception.toString())
        trace = str(
            java_class("org.apache.commons.lang3.exception.ExceptionUtils").getStackTrace(exception)
        )
    except Exception:  # a Python exception, or the JVM gone: its text is enough
        return str(exception), None
    return message, trace


def spark_errors() -> tuple[type[Exception], ...]:
    """What a failing Spark raises: py4j's errors (the JVM's exceptions) and PySpark's own."""
    from py4j.protocol import Py4JError  # noqa: PLC0415  (pyspark is optional)
    from pyspark.errors import PySparkException  # noqa: PLC0415

    return (Py4JError, PySparkException)


def first_error_line(error: BaseException) -> str:
    """The first line of what went wrong: the Java exception's own, for a py4j error."""
    text = str(error)
    java_exception = getattr(error, "java_exception", None)
    if java_exception is not None:
        try:
            text = str(java_exception.toString())
        except Exception:  # the JVM is gone: py4j's message is all there is
            log.debug("cannot read the Java exception", exc_info=True)
    lines = text.strip().splitlines()
    return lines[0] if lines else type(error).__name__


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


class JvmCallback:
    """Base of the Python objects the JVM calls through py4j (listeners).

    A listener bus removes a listener by comparing it with those it holds, which calls these
    on the Python side: a proxy is equal to itself only.
    """

    def equals(self, other: object) -> bool:
        return other is self

    def hashCode(self) -> int:
        return id(self) & 0x7FFFFFFF

    def toString(self) -> str:
        return f"openlineage-subset {type(self).__name__}"


class CatalogWatch(JvmCallback):
    """Remembers where a table lived just before it is dropped or renamed.

    After ``DROP TABLE`` the catalog no longer knows the table, and the QueryExecutionListener
    is only called after the statement ran. The external catalog, though, announces each drop
    and rename to its listeners before doing it (``DropTablePreEvent``, ``RenameTablePreEvent``),
    on the thread running the statement: the table is looked up then, from the external catalog
    itself (never through the session catalog, whose lock that thread may hold).

    Registering needs the external catalog, which Spark creates on first use (for Hive, that
    starts the metastore): :meth:`watch` never creates it, and is called again until it exists.
    """

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str, str], list[TableFacts | None]] = {}
        self._lock = threading.Lock()
        self._catalog: JavaObject = None
        self._proxy: JavaObject = None
        self._shared: JavaObject = None
        self.watching = False
        self.since_ms: int | None = None
        """When watching started (epoch ms): statements that started before were not seen."""

    def watch(self, spark: Any) -> bool:
        """Start watching the session's external catalog if it exists yet; whether watching."""
        if self.watching:
            return True
        if self._shared is None:
            self._shared = spark._jsparkSession.sharedState()
        shared = self._shared
        if not _external_catalog_exists(shared):
            return False
        catalog = shared.externalCatalog()
        catalog.addListener(self)
        listeners = catalog.listeners()
        self._proxy = listeners.get(listeners.size() - 1)
        self._catalog = catalog
        self.since_ms = time.time_ns() // 1_000_000
        self.watching = True
        return True

    def saw(self, started_ms: int) -> bool:
        """Whether a statement that started at ``started_ms`` ran with the catalog watched."""
        return self.since_ms is not None and self.since_ms <= started_ms

    def stop(self) -> None:
        """Stop watching (the catalog calls nothing of ours afterwards)."""
        if self.watching:
            self.watching = False
            self._catalog.removeListener(self._proxy)

    def claim(self, kind: str, database: str, name: str) -> tuple[bool, TableFacts | None]:
        """Whether the catalog announced a ``kind`` event (``DropTablePreEvent``,
        ``RenameTablePreEvent``, ``CreateTablePreEvent``) for ``database.name`` not claimed
        yet, and what the table was then (None for a table about to be created)."""
        with self._lock:
            found = self._tables.get((kind, database, name))
            if not found:
                return False, None
            return True, found.pop(0)

    def onEvent(self, event: JavaObject) -> None:
        try:
            kind = str(event.getClass().getSimpleName())
            if kind not in ("DropTablePreEvent", "RenameTablePreEvent", "CreateTablePreEvent"):
                return
            database, name = str(event.database()), str(event.name())
            facts = None
            if kind != "CreateTablePreEvent":
                facts = _table_facts(self._catalog.getTable(database, name))
            with self._lock:
                self._tables.setdefault((kind, database, name), []).append(facts)
        except Exception:  # never fail the user's statement; the drop is then reported as guessed
            log.debug("could not record the table before a catalog change", exc_info=True)

    class Java:
        implements: ClassVar[list[str]] = [
            "org.apache.spark.sql.catalyst.catalog.ExternalCatalogEventListener"
        ]


def _external_catalog_exists(shared_state: JavaObject) -> bool:
    """Whether Spark created its external catalog yet, asked without creating it.

    ``SharedState.externalCatalog`` is a lazy value: its field stays null until first use.
    """
    key = (id(jvm_view()), "SharedState.externalCatalog")
    if key not in _CLASSES:
        lazy_value = shared_state.getClass().getDeclaredField("externalCatalog")
        lazy_value.setAccessible(True)
        _CLASSES[key] = lazy_value
    return _CLASSES[key].get(shared_state) is not None


_CREATE_COMMANDS = frozenset({"CreateDataSourceTableCommand", "CreateTableCommand"})
_CHANGE_COMMANDS = frozenset(
    {
        *_CREATE_COMMANDS,
        "DropTableCommand",
        "TruncateTableCommand",
        "AlterTableAddColumnsCommand",
        "AlterTableRenameCommand",
        "AlterTableAddPartitionCommand",
        "AlterTableDropPartitionCommand",
        "LoadDataCommand",
    }
)


CHANGE_ROOTS = frozenset({"ExecutedCommandExec", "DropTableExec"})
"""The plan roots of the statements :func:`change_facts` reads."""


def change_facts(
    query_execution: JavaObject,
    watch: CatalogWatch,
    *,
    started_ms: int,
    root: tuple[JavaObject, str] | None = None,
) -> list[ChangeFacts]:
    """The dataset a DDL or ``LOAD DATA`` statement changed (none for other plans).

    ``CREATE TABLE IF NOT EXISTS`` on a table that existed, and ``DROP TABLE IF EXISTS`` on
    one that did not, changed nothing and give nothing. ``root``: the executed plan and its
    class, when the caller has them already.
    """
    if root is None:
        plan = query_execution.executedPlan()
        root = (plan, str(plan.getClass().getSimpleName()))
    plan, kind = root
    if kind not in CHANGE_ROOTS:
        return []
    jsession = query_execution.sparkSession()
    if kind == "DropTableExec":
        return _dropped_v2(jsession, plan, watch)
    if kind != "ExecutedCommandExec":
        return []
    command = plan.cmd()
    name = str(command.getClass().getSimpleName())
    if name not in _CHANGE_COMMANDS:
        return []
    catalog = jsession.sessionState().catalog()
    if name in _CREATE_COMMANDS:
        identifier = command.table().identifier()
        created = catalog.getTableMetadata(identifier)
        if watch.saw(started_ms):
            seen, _ = watch.claim(
                "CreateTablePreEvent", _database_of(catalog, identifier), str(identifier.table())
            )
        else:  # the catalog keeps creation times, in seconds at worst
            seen = int(created.createTime()) >= started_ms - CLOCK_SLACK_MS
        if not seen:
            return []  # IF NOT EXISTS, and it existed
        return [ChangeFacts(name, "CREATE", _table_facts(created))]
    if name == "DropTableCommand":
        if command.isView():
            return []
        identifier = command.tableName()
        return _dropped(
            jsession,
            watch,
            _database_of(catalog, identifier),
            str(identifier.table()),
            if_exists=bool(command.ifExists()),
        )
    if name == "AlterTableRenameCommand":
        if command.isView():
            return []
        old, new = command.oldName(), command.newName()
        database = _database_of(catalog, old)
        table = _table_facts(
            catalog.getTableMetadata(_table_identifier(jsession, database, str(new.table())))
        )
        _, previous = watch.claim("RenameTablePreEvent", database, str(old.table()))
        guessed = previous is None
        if previous is None:
            previous = TableFacts(
                f"{database}.{old.table()}",
                str(
                    catalog.defaultTablePath(
                        _table_identifier(jsession, database, str(old.table()))
                    ).toString()
                ),
                table.partition_columns,
            )
        return [ChangeFacts(name, "RENAME", table, previous=previous, location_guessed=guessed)]
    identifier = (
        command.tableName()
        if name not in ("AlterTableAddColumnsCommand", "LoadDataCommand")
        else command.table()
    )
    table = _table_facts(catalog.getTableMetadata(identifier))
    if name == "TruncateTableCommand":
        spec = command.partitionSpec()
        scope = (string_map(spec.get()),) if spec.isDefined() else None
        return [ChangeFacts(name, "TRUNCATE", table, partition_specs=scope)]
    if name == "AlterTableAddColumnsCommand":
        return [ChangeFacts(name, "ALTER", table)]
    if name == "AlterTableAddPartitionCommand":
        pairs = command.partitionSpecsAndLocs()
        specs = tuple(string_map(pairs.apply(i)._1()) for i in range(pairs.size()))
        return [ChangeFacts(name, "ALTER", table, partition_specs=specs)]
    if name == "AlterTableDropPartitionCommand":
        jspecs = command.specs()
        specs = tuple(string_map(jspecs.apply(i)) for i in range(jspecs.size()))
        return [ChangeFacts(name, "ALTER", table, partition_specs=specs)]
    # LOAD DATA [LOCAL] INPATH ... [OVERWRITE] INTO TABLE t [PARTITION (...)]
    spec = command.partition()
    return [
        ChangeFacts(
            name,
            "OVERWRITE" if command.isOverwrite() else None,
            table,
            partition_specs=(string_map(spec.get()),) if spec.isDefined() else None,
            source=qualified_path(jsession, str(command.path()), local=bool(command.isLocal())),
        )
    ]


CLOCK_SLACK_MS = 2000
"""File systems and catalogs keep times in seconds at worst: look that far before an action
started for what it created."""


def _dropped(
    jsession: JavaObject, watch: CatalogWatch, database: str, name: str, *, if_exists: bool
) -> list[ChangeFacts]:
    """The table a DROP TABLE removed, as it was before (from the catalog watch)."""
    _, before = watch.claim("DropTablePreEvent", database, name)
    if before is not None:
        return [ChangeFacts("DropTable", "DROP", before)]
    if if_exists:
        # Not seen going: it did not exist, or the catalog was not watched yet. Either way,
        # nothing known to have happened is reported.
        log.warning(
            "DROP TABLE IF EXISTS %s.%s is not reported: the catalog was not watched yet (it "
            "was first used by this statement), so whether the table existed is unknown",
            database,
            name,
        )
        return []
    catalog = jsession.sessionState().catalog()
    identifier = _table_identifier(jsession, database, name)
    guess = TableFacts(f"{database}.{name}", str(catalog.defaultTablePath(identifier).toString()))
    return [ChangeFacts("DropTable", "DROP", guess, location_guessed=True)]


def _dropped_v2(jsession: JavaObject, plan: JavaObject, watch: CatalogWatch) -> list[ChangeFacts]:
    """DROP TABLE as Spark 3.5 and 4 plan it for the session catalog (``DropTableExec``)."""
    if str(plan.catalog().name()) != "spark_catalog":
        log.warning(
            "DROP TABLE in catalog %r is not reported: only the session catalog's tables are "
            "named here",
            str(plan.catalog().name()),
        )
        return []
    identifier = plan.ident()
    namespace = list(identifier.namespace())
    database = (
        str(namespace[-1])
        if namespace
        else str(jsession.sessionState().catalog().getCurrentDatabase())
    )
    return _dropped(
        jsession, watch, database, str(identifier.name()), if_exists=bool(plan.ifExists())
    )


def _database_of(catalog: JavaObject, identifier: JavaObject) -> str:
    database = identifier.database()
    return str(database.get()) if database.isDefined() else str(catalog.getCurrentDatabase())


def _table_identifier(jsession: JavaObject, database: str, name: str) -> JavaObject:
    def quoted(part: str) -> str:
        return "`" + part.replace("`", "``") + "`"

    return (
        jsession.sessionState()
        .sqlParser()
        .parseTableIdentifier(f"{quoted(database)}.{quoted(name)}")
    )


def _table_facts(table: JavaObject) -> TableFacts:
    """Name, location and partition columns of a ``CatalogTable``."""
    location = table.storage().locationUri()
    columns = table.partitionColumnNames()
    return TableFacts(
        identifier=str(table.identifier().unquotedString()),
        location=str(location.get().toString()) if location.isDefined() else None,
        partition_columns=tuple(str(columns.apply(i)) for i in range(columns.size())),
    )


def string_map(mapping: JavaObject) -> dict[str, str]:
    """A Scala ``Map[String, String]``, entry by entry (values may hold any character)."""
    found = {}
    entries = mapping.iterator()
    while entries.hasNext():
        entry = entries.next()
        found[str(entry._1())] = str(entry._2())
    return found


V2_WRITE_ROOTS = frozenset(
    {
        "AppendDataExec",
        "AppendDataExecV1",
        "OverwriteByExpressionExec",
        "OverwriteByExpressionExecV1",
        "OverwritePartitionsDynamicExec",
    }
)
"""The plan roots of the writes :func:`v2_write_facts` reads."""
_V2_WRITES = {
    "AppendData": None,
    "OverwriteByExpression": "OVERWRITE",
    "OverwritePartitionsDynamic": "OVERWRITE",
}
"""DataSource V2 writes (``df.writeTo(t)``, ``INSERT`` into a V2 catalog's table) and the
lifecycle change each is."""


def v2_write_facts(query_execution: JavaObject) -> list[ChangeFacts]:
    """The table a DataSource V2 write (``writeTo(...).append()``, ``.overwritePartitions()``,
    the data of ``.create()``/``.createOrReplace()``) wrote into, from the analyzed plan.

    A V2 table is named by its ``location`` property (Iceberg, Delta), a JDBC catalog's table by
    its database URL; which rows or partitions it wrote is not known (the whole table).
    """
    plan = query_execution.analyzed()
    kind = str(plan.getClass().getSimpleName())
    if kind not in _V2_WRITES:
        return []
    relation = plan.table()
    if str(relation.getClass().getSimpleName()) != "DataSourceV2Relation":
        return []
    table = relation.table()
    identifier = relation.identifier()
    catalog = relation.catalog()
    name = str(identifier.get().toString()) if identifier.isDefined() else str(table.name())
    location = table.properties().get("location")
    jdbc_url = None
    if location is None and str(table.getClass().getSimpleName()) == "JDBCTable":
        jdbc_url = str(table.jdbcOptions().url())
    elif catalog.isDefined():
        name = f"{catalog.get().name()}.{name}"
    facts = TableFacts(
        identifier=name,
        location=None if location is None else str(location),
        jdbc_url=jdbc_url,
    )
    return [ChangeFacts(kind, _V2_WRITES[kind], facts)]
