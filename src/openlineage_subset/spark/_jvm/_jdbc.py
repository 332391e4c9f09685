"""JDBC reads and writes as Spark's JVM holds them: the database and table, and the filters the
database applied, as :class:`~openlineage_subset.spark._facts.JdbcSource` and ``ScanFacts``.

A JDBC read is a ``RowDataSourceScanExec`` over a ``JDBCRelation``: directly for
``spark.read.format("jdbc")`` and catalog tables ``USING jdbc``, or through a JDBC catalog's
DataSource V2 scan, which Spark runs as a V1 relation wrapping the ``JDBCScan`` (a class of its
own on Spark 4, an anonymous one holding the scan on Spark 3.5). The filters the database
applied are the scan's handled filters (V1) and its pushed predicates (V2), read as V2
predicates (``Filter.toV2``) into expression trees shaped as Spark's own ``toJSON()`` shapes
them, so that the one translation (``spark/_translate.py``) turns them into conditions; a
predicate it does not know becomes a node the translation drops. The bounds of a
``partitionColumn`` split the read into ranges that together cover every row: they are no
filter, and are not read.

Options are read by name: the URL (scrubbed of credentials here, where it leaves the JVM), the
table or query, and the few connection properties that name a SQL Server database. The ``user``
and ``password`` options, and any other, never cross into Python.
"""

from __future__ import annotations

import datetime as _dt
import json

from openlineage_subset.producer import scrub_text, scrubbed_logger
from openlineage_subset.spark._facts import JdbcSource, ScanFacts
from openlineage_subset.spark._jvm._bridge import (
    JavaObject,
    java_class,
    once_per_jvm,
    strings_of,
)
from openlineage_subset.spark._trees import Node

log = scrubbed_logger("openlineage_subset.spark")

ROW_SCAN = "RowDataSourceScanExec"
"""The plan node of a JDBC read (and of other V1 relations' reads, which are left out)."""
JDBC_PROVIDER = "JdbcRelationProvider"
"""The class of the data source a JDBC write (``df.write.format("jdbc")...save()``) saves with."""
_JDBC_RELATION = "org.apache.spark.sql.execution.datasources.jdbc.JDBCRelation"
_V2_SCAN_RELATION = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCV1RelationFromV2Scan"
_V2_SCAN_ANONYMOUS = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCScan$"
_NAMING_PROPERTIES = (
    "databasename",
    "database",
    "servername",
    "portnumber",
    "port",
    "instancename",
    "instance",
)
"""Connection properties that name a SQL Server database (read for SQL Server URLs only)."""
_COMPARISONS = {
    "=": "EqualTo",
    "<": "LessThan",
    "<=": "LessThanOrEqual",
    ">": "GreaterThan",
    ">=": "GreaterThanOrEqual",
    "<=>": "EqualNullSafe",
}
"""V2 predicate names and the Spark expression each is."""
_EPOCH_DAY = _dt.date(1970, 1, 1)


def jdbc_source(options: JavaObject, url: str | None = None) -> JdbcSource:
    """The database and table named by a JDBC source's options (a Scala map, in any case), and
    ``url`` when the caller has it already."""
    # Only the keys cross first; a value crosses only for the few options named below.
    keys = {key.lower(): key for key in strings_of(options.keySet().toSeq())}

    def option(name: str) -> str | None:
        return str(options.apply(keys[name])) if name in keys else None

    raw_url = url if url is not None else option("url")
    if raw_url is None:
        raise ValueError("a JDBC source without a url option")
    lowered = raw_url.lower()
    properties: tuple[tuple[str, str], ...] = ()
    if "sqlserver:" in lowered.partition("//")[0]:
        properties = tuple(
            (name, value) for name in _NAMING_PROPERTIES if (value := option(name)) is not None
        )
    derby_home = None
    if lowered.startswith("jdbc:derby:") and not lowered.startswith(
        ("jdbc:derby://", "jdbc:derby:memory:")
    ):
        system = java_class("java.lang.System")
        derby_home = system.getProperty("derby.system.home") or system.getProperty("user.dir")
    return JdbcSource(
        url=scrub_text(raw_url),
        table=option("dbtable"),
        query=option("query"),
        properties=properties,
        derby_home=None if derby_home is None else str(derby_home),
        prepare_query="preparequery" in keys,
    )


def is_jdbc_provider(provider: str) -> bool:
    """Whether a catalog table's provider (``USING ...``) is the JDBC data source.

    >>> [is_jdbc_provider(name) for name in ("jdbc", "org.apache.spark.sql.jdbc", "parquet")]
    [True, True, False]
    """
    name = provider.lower()
    return name in ("jdbc", "org.apache.spark.sql.jdbc") or name.endswith(
        (".jdbcrelationprovider", "org.apache.spark.sql.jdbc.defaultsource")
    )


def is_jdbc_save(command: JavaObject) -> bool:
    """Whether a ``SaveIntoDataSourceCommand`` saves through the JDBC data source."""
    return str(command.dataSource().getClass().getSimpleName()) == JDBC_PROVIDER


def row_scan(jscan: JavaObject, above: list[Node]) -> ScanFacts | None:
    """The facts of a ``RowDataSourceScanExec`` over a JDBC relation (None for any other
    relation): its database and table, and the filters that hold for every row it passes on
    (those the database applied, then the Filter above, given as ``above``)."""
    jrelation = _jdbc_relation(jscan.relation())
    if jrelation is None:
        log.debug("a RowDataSourceScanExec that is not a JDBC read; left out")
        return None
    options = jrelation.jdbcOptions()
    source = jdbc_source(options.parameters(), str(options.url()))
    types = _field_types(str(jrelation.schema().json()))
    operators = jscan.pushedDownOperators()
    handled = jscan.handledFilters().toSeq()
    pushed = operators.pushedPredicates()
    predicates = [handled.apply(i).toV2() for i in range(handled.size())]
    predicates += [pushed.apply(i) for i in range(pushed.size())]
    filters = []
    for jpredicate in predicates:
        name = str(jpredicate.name())
        # Spark infers an IS NOT NULL beside every comparison, and the translation drops one that
        # stands alone: it is not read further (a few round trips each).
        if name != "IS_NOT_NULL":
            filters.append(_predicate_tree(jpredicate, types, name))
    if operators.aggregation().isDefined():
        above = []  # the Filter above sees aggregates the database computed, not table rows
    return ScanFacts(
        source=ROW_SCAN,
        format="jdbc",
        root_paths=(),
        filters=(*filters, *above),
        jdbc=source,
    )


def row_scan_source(jscan: JavaObject) -> ScanFacts | None:
    """A JDBC scan's database and table alone, when its filters cannot be read."""
    jrelation = _jdbc_relation(jscan.relation())
    if jrelation is None:
        return None
    options = jrelation.jdbcOptions()
    return ScanFacts(
        source=ROW_SCAN,
        format="jdbc",
        root_paths=(),
        jdbc=jdbc_source(options.parameters(), str(options.url())),
    )


def _jdbc_relation(jrelation: JavaObject) -> JavaObject:
    """The ``JDBCRelation`` a scan's relation is or wraps; None for any other relation."""
    name = str(jrelation.getClass().getName())
    if name == _JDBC_RELATION:
        return jrelation
    if name == _V2_SCAN_RELATION:  # Spark 4: a class of its own
        return jrelation.relation()
    if name.startswith(_V2_SCAN_ANONYMOUS):  # Spark 3.5: an anonymous class inside JDBCScan

        def outer_field() -> JavaObject:
            field = jrelation.getClass().getDeclaredField("$outer")
            field.setAccessible(True)
            return field

        return once_per_jvm(f"{name}.$outer", outer_field).get(jrelation).relation()
    return None


def _field_types(schema_json: str) -> dict[str, str]:
    """Each top-level column's type, as ``toJSON()`` writes an attribute's ``dataType``."""
    fields = json.loads(schema_json).get("fields", [])
    return {str(f["name"]): f["type"] for f in fields if isinstance(f.get("type"), str)}


def _predicate_tree(jpredicate: JavaObject, types: dict[str, str], name: str = "") -> Node:
    """A V2 predicate (whose ``name()`` the caller may have read) as the expression tree of the
    Spark filter it stands for."""
    name = name or str(jpredicate.name())
    jchildren = jpredicate.children()
    count = len(jchildren)
    if name in ("AND", "OR") and count == 2:
        left, right = (_predicate_tree(jchildren[i], types) for i in range(2))
        return Node(name.capitalize(), {"left": 0, "right": 1}, (left, right))
    if name == "NOT" and count == 1:
        return Node("Not", {"child": 0}, (_predicate_tree(jchildren[0], types),))
    children = tuple(_value_tree(jchildren[i], types) for i in range(count))
    if name in _COMPARISONS and count == 2:
        return Node(_COMPARISONS[name], {"left": 0, "right": 1}, children)
    if name == "<>" and count == 2:
        return Node("Not", {"child": 0}, (Node("EqualTo", {"left": 0, "right": 1}, children),))
    if name == "IN" and count >= 1:
        return Node("In", {"value": 0, "list": list(range(1, count))}, children)
    if name in ("IS_NULL", "IS_NOT_NULL") and count == 1:
        return Node("IsNull" if name == "IS_NULL" else "IsNotNull", {"child": 0}, children)
    return Node(f"V2Predicate:{name}", {}, children)  # one the translation does not know


def _value_tree(jexpression: JavaObject, types: dict[str, str]) -> Node:
    """A V2 expression under a predicate: a column, a literal, or one the translation drops."""
    kind = str(jexpression.getClass().getSimpleName())
    if kind == "FieldReference":
        parts = jexpression.fieldNames()
        if len(parts) != 1:
            return Node("V2NestedField", {})  # a struct's field: JDBC tables have none
        name = str(parts[0])
        return Node("AttributeReference", {"name": name, "dataType": types.get(name)})
    if kind == "LiteralValue":
        return _literal(jexpression.value(), str(jexpression.dataType().typeName()))
    return Node(f"V2Expression:{kind}", {})


def _literal(value: object, data_type: str) -> Node:
    """A literal as ``toJSON()`` writes it, from its value as Spark holds it internally."""
    text: str | None = None
    if value is None or isinstance(value, (bytes, bytearray)):
        pass
    elif data_type == "boolean":
        text = "true" if value is True else "false" if value is False else None
    elif data_type == "date" and isinstance(value, int):
        try:
            text = (_EPOCH_DAY + _dt.timedelta(days=value)).isoformat()
        except OverflowError:  # beyond what Python dates hold: no faithful form
            text = None
    elif isinstance(value, float):
        text = repr(value)
    elif isinstance(value, (int, str)):
        text = str(value)
    else:  # UTF8String, Decimal: their text is the value
        text = str(value.toString())  # type: ignore[attr-defined]
    node = Node("Literal", {"value": text, "dataType": data_type})
    if data_type in ("timestamp", "timestamp_ntz") and isinstance(value, int):
        node.exact.timestamp_micros = value
    return node
