"""The catalog: where a table lived just before a statement dropped or renamed it.

:class:`CatalogWatch` listens to Spark's external catalog, which announces each change before
making it; :func:`table_facts` reads a catalog table as the statements need it.
"""

from __future__ import annotations

import threading
import time
from typing import Any, ClassVar

from openlineage_subset.producer import scrubbed_logger
from openlineage_subset.spark._facts import TableFacts
from openlineage_subset.spark._jvm._bridge import JavaObject, JvmCallback, once_per_jvm
from openlineage_subset.spark._jvm._jdbc import is_jdbc_provider

log = scrubbed_logger("openlineage_subset.spark")


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
                facts = table_facts(self._catalog.getTable(database, name))
            with self._lock:
                self._tables.setdefault((kind, database, name), []).append(facts)
        except Exception:  # never fail the user's statement; the drop is then reported as guessed
            log.debug("could not record the table before a catalog change", exc_info=True)

    class Java:
        implements: ClassVar[list[str]] = [
            "org.apache.spark.sql.catalyst.catalog.ExternalCatalogEventListener"
        ]


def table_facts(table: JavaObject) -> TableFacts:
    """Name, location and partition columns of a ``CatalogTable``; whether its data lives in
    another system (``USING jdbc``)."""
    location = table.storage().locationUri()
    columns = table.partitionColumnNames()
    provider = table.provider()
    return TableFacts(
        identifier=str(table.identifier().unquotedString()),
        location=str(location.get().toString()) if location.isDefined() else None,
        partition_columns=tuple(str(columns.apply(i)) for i in range(columns.size())),
        catalog_only=provider.isDefined() and is_jdbc_provider(str(provider.get())),
    )


def _external_catalog_exists(shared_state: JavaObject) -> bool:
    """Whether Spark created its external catalog yet, asked without creating it.

    ``SharedState.externalCatalog`` is a lazy value: its field stays null until first use.
    """

    def lazy_value() -> JavaObject:
        declared = shared_state.getClass().getDeclaredField("externalCatalog")
        declared.setAccessible(True)
        return declared

    return once_per_jvm("SharedState.externalCatalog", lazy_value).get(shared_state) is not None
