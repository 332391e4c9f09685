"""What a statement changed other than by writing a query's rows into files: DDL, ``LOAD
DATA``, the table a JDBC write or a DataSource V2 write went to, as :class:`ChangeFacts`.

:func:`change_facts` finds the command a plan ran and hands it to the reader of its kind
(:data:`_READERS`, one small function per statement); :func:`v2_write_facts` reads the
analyzed plan of a V2 write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from openlineage_subset.producer import scrubbed_logger
from openlineage_subset.spark._facts import ChangeFacts, TableFacts
from openlineage_subset.spark._jvm._bridge import JavaObject, qualified_path, string_map
from openlineage_subset.spark._jvm._catalog import CatalogWatch, table_facts
from openlineage_subset.spark._jvm._jdbc import is_jdbc_save, jdbc_source

log = scrubbed_logger("openlineage_subset.spark")

CHANGE_ROOTS = frozenset({"ExecutedCommandExec", "DropTableExec"})
"""The plan roots of the statements :func:`change_facts` reads."""
CLOCK_SLACK_MS = 2000
"""File systems and catalogs keep times in seconds at worst: look that far before an action
started for what it created."""
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


@dataclass(frozen=True)
class _Command:
    """A command a statement ran (``ExecutedCommandExec.cmd``), with what its reader needs."""

    name: str
    """Its class name (``DropTableCommand``): the ``command`` of the facts read from it."""
    command: JavaObject
    jsession: JavaObject
    catalog: JavaObject
    """The session catalog."""
    watch: CatalogWatch
    started_ms: int


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
    command = plan.cmd()
    name = str(command.getClass().getSimpleName())
    reader = _READERS.get(name)
    if reader is None:
        return []
    catalog = jsession.sessionState().catalog()
    return reader(_Command(name, command, jsession, catalog, watch, started_ms))


# -- one reader per statement ----------------------------------------------------------------


def _created(statement: _Command) -> list[ChangeFacts]:
    """``CREATE TABLE`` (not ``... AS SELECT``): nothing when it existed (``IF NOT EXISTS``)."""
    catalog, watch = statement.catalog, statement.watch
    identifier = statement.command.table().identifier()
    created = catalog.getTableMetadata(identifier)
    if watch.saw(statement.started_ms):
        seen, _ = watch.claim(
            "CreateTablePreEvent", _database_of(catalog, identifier), str(identifier.table())
        )
    else:  # the catalog keeps creation times, in seconds at worst
        seen = int(created.createTime()) >= statement.started_ms - CLOCK_SLACK_MS
    if not seen:
        return []  # IF NOT EXISTS, and it existed
    return [ChangeFacts(statement.name, "CREATE", table_facts(created))]


def _dropped_table(statement: _Command) -> list[ChangeFacts]:
    """``DROP TABLE`` as a V1 command (``DROP VIEW`` changes no dataset)."""
    command = statement.command
    if command.isView():
        return []
    identifier = command.tableName()
    return _dropped(
        statement.jsession,
        statement.watch,
        _database_of(statement.catalog, identifier),
        str(identifier.table()),
        if_exists=bool(command.ifExists()),
    )


def _renamed(statement: _Command) -> list[ChangeFacts]:
    """``ALTER TABLE t RENAME TO u``: the table as it is now, and where it lived before."""
    command, catalog, jsession = statement.command, statement.catalog, statement.jsession
    if command.isView():
        return []
    old, new = command.oldName(), command.newName()
    database = _database_of(catalog, old)
    table = table_facts(
        catalog.getTableMetadata(_table_identifier(jsession, database, str(new.table())))
    )
    _, previous = statement.watch.claim("RenameTablePreEvent", database, str(old.table()))
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
    return [
        ChangeFacts(statement.name, "RENAME", table, previous=previous, location_guessed=guessed)
    ]


def _truncated(statement: _Command) -> list[ChangeFacts]:
    """``TRUNCATE TABLE t [PARTITION (...)]``."""
    command = statement.command
    table = table_facts(statement.catalog.getTableMetadata(command.tableName()))
    spec = command.partitionSpec()
    scope = (string_map(spec.get()),) if spec.isDefined() else None
    return [ChangeFacts(statement.name, "TRUNCATE", table, partition_specs=scope)]


def _columns_added(statement: _Command) -> list[ChangeFacts]:
    """``ALTER TABLE t ADD COLUMNS``."""
    table = table_facts(statement.catalog.getTableMetadata(statement.command.table()))
    return [ChangeFacts(statement.name, "ALTER", table)]


def _partitions_added(statement: _Command) -> list[ChangeFacts]:
    """``ALTER TABLE t ADD PARTITION (...) [LOCATION ...]``, one spec or more."""
    command = statement.command
    table = table_facts(statement.catalog.getTableMetadata(command.tableName()))
    pairs = command.partitionSpecsAndLocs()
    specs = tuple(string_map(pairs.apply(i)._1()) for i in range(pairs.size()))
    return [ChangeFacts(statement.name, "ALTER", table, partition_specs=specs)]


def _partitions_dropped(statement: _Command) -> list[ChangeFacts]:
    """``ALTER TABLE t DROP PARTITION (...)``: an ALTER of the table, not a DROP."""
    command = statement.command
    table = table_facts(statement.catalog.getTableMetadata(command.tableName()))
    jspecs = command.specs()
    specs = tuple(string_map(jspecs.apply(i)) for i in range(jspecs.size()))
    return [ChangeFacts(statement.name, "ALTER", table, partition_specs=specs)]


def _loaded(statement: _Command) -> list[ChangeFacts]:
    """``LOAD DATA [LOCAL] INPATH ... [OVERWRITE] INTO TABLE t [PARTITION (...)]``."""
    command = statement.command
    table = table_facts(statement.catalog.getTableMetadata(command.table()))
    spec = command.partition()
    return [
        ChangeFacts(
            statement.name,
            "OVERWRITE" if command.isOverwrite() else None,
            table,
            partition_specs=(string_map(spec.get()),) if spec.isDefined() else None,
            source=qualified_path(
                statement.jsession, str(command.path()), local=bool(command.isLocal())
            ),
        )
    ]


def _saved_into_jdbc(statement: _Command) -> list[ChangeFacts]:
    """``df.write.format("jdbc")...save()`` and ``df.write.jdbc(...)`` (also what an INSERT
    into a catalog table ``USING jdbc`` runs): the table, replaced by an overwrite."""
    command = statement.command
    if not is_jdbc_save(command):
        return []
    source = jdbc_source(command.options())
    if source.table is None:
        raise ValueError("a JDBC write without a dbtable option")
    overwrite = str(command.mode().name()) == "Overwrite"
    return [
        ChangeFacts(
            statement.name,
            "OVERWRITE" if overwrite else None,
            TableFacts(identifier=source.table, location=None, jdbc=source),
        )
    ]


_READERS: dict[str, Callable[[_Command], list[ChangeFacts]]] = {
    "CreateDataSourceTableCommand": _created,
    "CreateTableCommand": _created,
    "DropTableCommand": _dropped_table,
    "AlterTableRenameCommand": _renamed,
    "TruncateTableCommand": _truncated,
    "AlterTableAddColumnsCommand": _columns_added,
    "AlterTableAddPartitionCommand": _partitions_added,
    "AlterTableDropPartitionCommand": _partitions_dropped,
    "LoadDataCommand": _loaded,
    "SaveIntoDataSourceCommand": _saved_into_jdbc,
}
"""The reader of each command a statement may run, by the command's class name."""


# -- DROP TABLE, as a V1 command or a V2 plan --------------------------------------------------


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


# -- DataSource V2 writes ------------------------------------------------------------------------


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
    jdbc = None
    if location is None and str(table.getClass().getSimpleName()) == "JDBCTable":
        options = table.jdbcOptions()
        jdbc = jdbc_source(options.parameters(), str(options.url()))
    elif catalog.isDefined():
        name = f"{catalog.get().name()}.{name}"
    facts = TableFacts(
        identifier=name,
        location=None if location is None else str(location),
        jdbc=jdbc,
    )
    return [ChangeFacts(kind, _V2_WRITES[kind], facts)]
