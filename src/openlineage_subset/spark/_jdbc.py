"""The datasets of a JDBC read or write: the tables its options name, as the naming spec names
them (``producer/_jdbc.py``).

Pure Python over :class:`~openlineage_subset.spark._facts.JdbcSource`. A ``dbtable`` that is a
table's name is that table; a ``query``, or a ``dbtable`` that is a subquery or a join, reads the
tables it names, where they can be told for sure (``producer/_sql_tables.py``). Where they
cannot, the dataset is named after the query itself, in the database's namespace, as
openlineage-spark named such reads before it parsed SQL: the run still says which database it
read. A condition on the query's columns holds for the rows of its table only when the query
passes on rows of one table with their columns (see
:attr:`~openlineage_subset.producer._sql_tables.QueryTables.rows_of_one_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openlineage_subset.producer import jdbc_dataset, scrub_text, tables_of_dbtable, tables_of_query
from openlineage_subset.spark._facts import JdbcSource


@dataclass(frozen=True)
class JdbcRead:
    """What one JDBC read took, as datasets."""

    datasets: tuple[tuple[str, str], ...]
    """``(namespace, name)`` of each table read."""
    rows_of_one_table: bool
    """The read passed on rows of its one table: conditions on its columns hold for them."""
    named_by_query: bool = False
    """The tables could not be told: the one dataset is named after the query."""


def jdbc_table_identity(source: JdbcSource, table: str | Sequence[str]) -> tuple[str, str]:
    """``(namespace, name)`` of a table of ``source``'s database.

    >>> jdbc_table_identity(JdbcSource("jdbc:postgresql://db/shop"), "public.orders")
    ('postgres://db:5432', 'shop.public.orders')
    """
    return jdbc_dataset(
        source.url, table, properties=dict(source.properties), derby_home=source.derby_home
    )


def jdbc_read(source: JdbcSource) -> JdbcRead:
    """The tables a JDBC read named, or its query as one dataset when they cannot be told.

    >>> jdbc_read(JdbcSource("jdbc:mysql://db/shop", query="SELECT id FROM orders WHERE x > 1"))
    JdbcRead(datasets=(('mysql://db:3306', 'shop.orders'),), rows_of_one_table=True, \
named_by_query=False)
    """
    text = source.query if source.query is not None else source.table
    if text is None:
        raise ValueError("a JDBC read with neither a dbtable nor a query option")
    found = None
    if not source.prepare_query:
        found = tables_of_query(text) if source.query is not None else tables_of_dbtable(text)
    if found is None:
        name = scrub_text(text.strip())  # as written: a comment may end at a line's end
        namespace = jdbc_table_identity(source, ("",))[0]
        return JdbcRead(((namespace, name),), rows_of_one_table=False, named_by_query=True)
    return JdbcRead(
        tuple(jdbc_table_identity(source, parts) for parts in found.tables),
        found.rows_of_one_table,
    )
