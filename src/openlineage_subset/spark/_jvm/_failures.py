"""A failed action's query, read without making any of it again.

A query whose analysis or planning failed has no executed plan to walk, and asking for it
makes Spark try again on capture's thread: on Spark 3.5 that plans the query a second time; on
Spark 4 the query's plans are ``LazyTry`` values that keep their failure and throw it again to
whoever asks, after rewriting the stack trace of that one shared exception to the asker's
(``Utils.doTryWithCallerStacktrace``). The user's own error would then name capture's frames:
what a Spark Connect client receives, or what the script prints. So for a failed action:

- :func:`executed_plan_made` tells, by reading the query's fields (never by calling it),
  whether its executed plan was made: only then is it read as for any action;
- :func:`named_relations` reads what the query's parsed plan (the one Spark was given, kept
  as is) names: the files, paths and catalog tables it was to read.
"""

from __future__ import annotations

from openlineage_subset.producer import scrubbed_logger, warn_once
from openlineage_subset.spark._facts import ScanFacts, TableFacts
from openlineage_subset.spark._jvm._bridge import (
    JavaObject,
    java_class,
    once_per_jvm,
    qualified_path,
    strings_of,
)
from openlineage_subset.spark._jvm._catalog import table_facts

log = scrubbed_logger("openlineage_subset.spark")

ANALYSIS_FAILED = "analyze"
"""The execution name Spark 4 gives a query whose analysis failed (``assertAnalyzed``): it
tells the application's listeners of it as an execution of its own, with the failure."""
_FILE_SOURCES = frozenset({"parquet", "orc", "json", "csv", "text", "avro", "binaryfile", "delta"})
"""Formats a SQL query may read a path with directly (``SELECT * FROM parquet.`/lake/x```)."""
_LAZY_FIELDS = ("lazyExecutedPlan", "executedPlan")
"""Where a ``QueryExecution`` keeps its executed plan: a ``LazyTry`` (Spark 4), or the field
of a Scala lazy value (Spark 3.5), null until made."""


def executed_plan_made(query_execution: JavaObject) -> bool | None:
    """Whether ``query_execution``'s executed plan was made (reading it then computes nothing
    and throws nothing). Read from the query's fields, never by asking for the plan.

    A Spark whose ``QueryExecution`` keeps the plan in neither known field is said once, and
    None returned (unknown): its failed actions are read as if the plan may have run (the
    datasets their query names as their inputs, without subsets: sound).
    """
    for name in _LAZY_FIELDS:
        field = _declared_field(name)
        if field is None:
            continue
        value = field.get(query_execution)
        if name == "executedPlan":
            return value is not None
        return _lazy_try_succeeded(value)
    warn_once(
        "(failed actions)",
        "this Spark's QueryExecution keeps its executed plan where capture does not look: "
        "failed actions are reported with the datasets their query names, without subsets",
    )
    return None


def _declared_field(name: str) -> JavaObject:
    """The accessible ``QueryExecution`` field ``name``, looked up once per JVM; None when
    this Spark has no such field."""

    def look_up() -> JavaObject:
        owner = java_class("java.lang.Class").forName(
            "org.apache.spark.sql.execution.QueryExecution"
        )
        for declared in owner.getDeclaredFields():
            if str(declared.getName()) == name:
                declared.setAccessible(True)
                return declared
        return None

    return once_per_jvm(f"QueryExecution.{name}", look_up)


def _lazy_try_succeeded(lazy: JavaObject) -> bool:
    """Whether a Spark ``LazyTry`` holds a value (computed, and without failing)."""
    if lazy is None:
        return False

    def fields() -> tuple[JavaObject, JavaObject]:
        owner = java_class("java.lang.Class").forName("org.apache.spark.util.LazyTry")
        materialized = owner.getDeclaredField("materialized")
        outcome = owner.getDeclaredField("tryT")
        materialized.setAccessible(True)
        outcome.setAccessible(True)
        return materialized, outcome

    materialized, outcome = once_per_jvm("LazyTry fields", fields)
    if not materialized.get(lazy):
        return False
    result = outcome.get(lazy)
    return result is not None and bool(result.isSuccess())


def named_relations(query_execution: JavaObject) -> tuple[ScanFacts, ...]:
    """The datasets a query's parsed plan names as what it reads: file relations a
    DataFrame reader made, paths (``spark.read.parquet(p)``, ``parquet.`p```), and catalog
    tables. Each as a scan of its paths alone, with nothing said of what part was read.

    A name that leads nowhere (a table or view that does not exist, a temporary view, a
    source that is not files) names no dataset.
    """
    session = query_execution.sparkSession()
    leaves = query_execution.logical().collectLeaves()
    found: list[ScanFacts] = []
    for index in range(leaves.size()):
        leaf = leaves.apply(index)
        kind = str(leaf.nodeName())
        try:
            facts = _leaf_relation(session, leaf, kind)
        except Exception:  # a leaf that cannot be read names nothing; the run keeps the others
            log.debug("cannot read the %s of a failed query", kind, exc_info=True)
            continue
        if facts is not None:
            found.append(facts)
    return tuple(found)


def _leaf_relation(session: JavaObject, leaf: JavaObject, kind: str) -> ScanFacts | None:
    if kind == "LogicalRelation":  # a relation a DataFrame reader resolved
        return _file_relation(leaf)
    if kind == "HiveTableRelation":
        return _table(table_facts(leaf.tableMeta()), kind)
    if kind == "UnresolvedRelation":
        return _unresolved(session, strings_of(leaf.multipartIdentifier()))
    if kind == "UnresolvedDataSource":  # Spark 4's DataFrame reader, before analysis
        paths = strings_of(leaf.paths())
        if not paths:
            return None
        roots = tuple(qualified_path(session, path) for path in paths)
        given = paths[0] if len(paths) == 1 else None
        return ScanFacts(source=kind, format=str(leaf.format()), root_paths=roots, given_path=given)
    return None


def _file_relation(leaf: JavaObject) -> ScanFacts | None:
    relation = leaf.relation()
    if str(relation.getClass().getSimpleName()) != "HadoopFsRelation":
        return None
    catalog_table = leaf.catalogTable()
    if catalog_table.isDefined():
        return _table(table_facts(catalog_table.get()), "LogicalRelation")
    roots = strings_of(relation.location().rootPaths())
    return ScanFacts(source="LogicalRelation", format=None, root_paths=roots) if roots else None


def _unresolved(session: JavaObject, parts: tuple[str, ...]) -> ScanFacts | None:
    if len(parts) == 2 and parts[0].lower() in _FILE_SOURCES:
        return ScanFacts(
            source="UnresolvedRelation",
            format=parts[0].lower(),
            root_paths=(qualified_path(session, parts[1]),),
            given_path=parts[1],
        )
    if not 1 <= len(parts) <= 2:
        return None  # a table of another catalog: not looked up
    catalog = session.sessionState().catalog()
    database = java_class("scala.Option").apply(parts[0] if len(parts) == 2 else None)
    identifier = java_class("org.apache.spark.sql.catalyst.TableIdentifier")(parts[-1], database)
    if len(parts) == 1 and catalog.isTempView(identifier):
        return None  # a temporary view: no catalog table, whatever shares its name
    if not catalog.tableExists(identifier):
        return None
    table = catalog.getTableMetadata(identifier)
    if str(table.tableType().name()) == "VIEW":
        return None
    return _table(table_facts(table), "UnresolvedRelation")


def _table(table: TableFacts, source: str) -> ScanFacts | None:
    if table.location is None:
        return None
    return ScanFacts(
        source=source,
        format=None,
        root_paths=(table.location,),
        table=table.identifier,
        table_location=table.location,
    )
