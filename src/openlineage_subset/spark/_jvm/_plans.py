"""The walk of a physical plan: every scan (subqueries, adaptive stages and cached plans
included) and every write command, in a number of round trips bounded by the plan's size.

A plan is walked node by node (its class and children); each scan is read by ``_scans``. The
scans of cached plans are remembered, so that the short actions a job repeats on a cached
DataFrame (``count()``) need about ten round trips instead of a walk.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from openlineage_subset.producer import warn_once
from openlineage_subset.spark._facts import ScanFacts, StreamScanFacts
from openlineage_subset.spark._jvm._bridge import JavaObject, java_class, java_member, jvm_view
from openlineage_subset.spark._jvm._jdbc import is_jdbc_save
from openlineage_subset.spark._jvm._rdds import rdd_reads
from openlineage_subset.spark._jvm._scans import SCANS, Ancestors, is_dynamic, read_scan, whole_scan
from openlineage_subset.spark._jvm._streams import stream_scan_facts

# What adaptive execution puts where it found a stage empty: the scans below it leave the plan.
_EMPTIED_BY_AQE = frozenset({"EmptyRelation", "EmptyRelationExec", "LocalTableScanExec"})
# DataSource V2 writes through a V1 fallback: the query they write is a logical plan.
_V1_FALLBACK_WRITES = frozenset({"AppendDataExecV1", "OverwriteByExpressionExecV1"})
_CACHED_PLANS: OrderedDict[tuple[int, int, bool], tuple[JavaObject, tuple[ScanFacts, ...]]] = (
    OrderedDict()
)
"""The scans of the cached plans seen last (see ``_Collector._cached``), newest last."""
_CACHED_PLANS_KEPT = 64
_CACHED_PLANS_LOCK = threading.Lock()
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
    SCANS
    | _V1_FALLBACK_WRITES
    | {
        "AdaptiveSparkPlanExec",
        "InMemoryTableScanExec",
        "ReusedExchangeExec",
    }
)
_RDD_SCANS = frozenset({"RDDScanExec", "ExternalRDDScanExec"})
_STREAM_SCAN = "MicroBatchScanExec"
"""A micro-batch's scan of a streaming source of DataSource V2 (see ``_streams``)."""
"""Scans of the RDD a DataFrame was made of."""
_LOCAL_LEAVES = frozenset({"LocalRelation", "Range", "OneRowRelation"})
"""Logical leaves that read no dataset."""
_LOGICAL_COMMAND = "java.lang.Class:org.apache.spark.sql.catalyst.plans.logical.Command"
"""The class of logical commands (writes, DDL), as :func:`java_member` looks it up."""
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
    streams: tuple[StreamScanFacts, ...] = ()
    """The micro-batch scans of streaming sources of DataSource V2 (Kafka...)."""


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
        tuple(collector.scans),
        root,
        collector.root_kind or "",
        tuple(collector.writes),
        tuple(collector.streams),
    )


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
        if not is_dynamic(tree)
    )
    return (
        facts.source,
        facts.root_paths,
        facts.given_path,
        facts.table,
        facts.partition_columns,
        facts.jdbc,
        tuple(static_filters),
    )


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
        self.streams: list[StreamScanFacts] = []
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
        if any(leaf_kind in SCANS for _, leaf_kind in found):
            self._visit_known(jroot, kind, [])
            return kind
        if kind == "DataWritingCommandExec":
            self.writes.append(jroot)
        for leaf, leaf_kind in found:
            self._visit_known(leaf, leaf_kind, [])
        return kind

    def _visit(self, jnode: JavaObject, ancestors: Ancestors) -> None:
        self._visit_known(jnode, _kind(jnode), ancestors)

    def _visit_known(self, jnode: JavaObject, kind: str, ancestors: Ancestors) -> None:
        if kind in SCANS:
            try:
                facts = read_scan(kind, jnode, ancestors, executed=self.executed)
            except Exception as error:  # the scan still names what it read, if it can
                facts = whole_scan(kind, jnode, error)
            if facts is not None:
                self.scans.append(facts)
            return
        if kind == "AdaptiveSparkPlanExec":
            self._adaptive(jnode)
            return
        if kind in _RDD_SCANS or kind == _STREAM_SCAN:
            self._other_source(jnode, kind)
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
            self._planned(jnode.plan())
            return
        if kind == "ExecutedCommandExec":
            self._command_query(jnode.cmd())
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

    def _other_source(self, jnode: JavaObject, kind: str) -> None:
        """A leaf that reads no file relation: an RDD's scan, or a stream's micro-batch."""
        if kind == _STREAM_SCAN:
            self.streams.append(stream_scan_facts(jnode))
        else:
            self._rdd(jnode)

    def _rdd(self, jnode: JavaObject) -> None:
        """The files read by the RDD a DataFrame was made of (``spark.createDataFrame(rdd)``,
        ``rdd.toDF()``): Hadoop input formats' paths, the file scans of DataFrames it came from.
        What it read that names no dataset is said once; the plan's other scans stay."""
        try:
            reads = rdd_reads(jnode.rdd())
        except Exception as error:
            warn_once("(an RDD scan)", f"its inputs are not named: {type(error).__name__}")
            return
        self.scans.extend(reads.scans)
        for kind in reads.unnamed:
            warn_once(f"(an input read by {kind})", "left out: it names no dataset capture knows")

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

    def _command_query(self, jcommand: JavaObject) -> None:
        """The scans of the query a JDBC write (``SaveIntoDataSourceCommand``) wrote."""
        name = str(jcommand.getClass().getSimpleName())
        if name == "SaveIntoDataSourceCommand" and is_jdbc_save(jcommand):
            self._planned(jcommand.query())

    def _planned(self, jlogical: JavaObject) -> None:
        """The scans of a query a write holds as a logical plan: a V1-fallback V2 write (a JDBC
        catalog's table), a JDBC write.

        Such a write runs its query later, in an action of its own (``foreachPartition``); it
        is planned here (not run) so that the write's run names what it read.
        """
        if self.query_execution is None:
            return
        jsession = self.query_execution.sparkSession()
        mode = java_class("org.apache.spark.sql.execution.CommandExecutionMode").ALL()
        planned = _Collector(executed=False)
        planned.plan(jsession.sessionState().executePlan(jlogical, mode).executedPlan())
        self.scans.extend(planned.scans)


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
