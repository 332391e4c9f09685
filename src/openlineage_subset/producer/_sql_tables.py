"""The tables a SQL query reads, where they can be told for sure, without a database.

A JDBC source reads a table, or a query (Spark's ``query`` option, a ``dbtable`` that is a
subquery ``(select ...) t`` or a join). :func:`tables_of_query` finds the tables such a query
names, or says it cannot: every table a query reads follows a ``FROM`` or a ``JOIN`` of one of
its ``SELECT``\\ s (those of subqueries and common table expressions included), so a query whose
every ``FROM`` clause is read to its end names them all. Anything the reading does not know for
sure gives None, never a guess: a ``FROM`` clause holding more than table names, aliases,
subqueries and joins (a function, ``LATERAL``, ``TABLE``, a table hint, an ODBC escape), a
``FROM`` inside parentheses that are neither a subquery nor a function that takes ``FROM``
(``EXTRACT(YEAR FROM d)``), a second statement, ``SELECT ... INTO``, quoting that databases
read differently (a backslash in a string, ``$$``, ``#``, ``@``, MySQL's ``/*! */``).

It also says whether the query's rows are rows of its one table with their columns kept by
name (``SELECT a, b FROM t WHERE ...``, ``SELECT * FROM t``): only then does a condition on the
query's columns hold for the table's rows it read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from openlineage_subset.producer._jdbc import table_parts


@dataclass(frozen=True)
class QueryTables:
    """The tables a query reads, each as the parts of its name (quotes removed)."""

    tables: tuple[tuple[str, ...], ...]
    """In the order the query names them, each once."""
    rows_of_one_table: bool
    """The query passes on rows of its one table, their columns named as in the table, and reads
    no other rows of it (no join, grouping, expression, renaming or subquery in an expression):
    a condition on its columns holds for every row of the table it read."""


class _Unsure(Exception):
    """The query holds something the reading does not know for sure."""


_TOKEN = re.compile(
    r"""
    (?P<space>\s+|--(?=\s|\Z)[^\n]*)
    |(?P<dashes>--)
    |(?P<comment>/\*)
    |(?P<string>'(?:[^'\\]|'')*')
    |(?P<quoted>"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\[\]]*\])
    |(?P<number>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
    |(?P<word>[^\W\d]\w*(?:\$\w*)*)
    |(?P<punct>[(),.;*+\-/%<>=!|&^~:?])
    """,
    re.VERBOSE,
)
_CLAUSES = frozenset(
    {"where", "group", "having", "order", "limit", "offset", "fetch", "for", "window", "qualify"}
)
_SET_OPERATIONS = frozenset({"union", "intersect", "except", "minus"})
_JOIN_WORDS = frozenset({"join", "inner", "left", "right", "full", "outer", "cross", "natural"})
_RESERVED = (
    _CLAUSES
    | _SET_OPERATIONS
    | _JOIN_WORDS
    | {
        "select", "from", "on", "using", "as", "with", "lateral", "only", "table", "unnest",
        "values", "into", "tablesample", "partition", "pivot", "unpivot", "apply", "connect",
        "start", "model", "match_recognize", "straight_join", "use", "ignore", "force",
    }
)  # fmt: skip
"""Words that cannot be a table's alias: they go on the query, or start what is not read."""
_ENDS = _CLAUSES | _SET_OPERATIONS | _JOIN_WORDS | {"on", "using", "from"}
"""Words that end an expression read at the depth of its clause."""
_FROM_FUNCTIONS = frozenset({"extract", "substring", "trim", "overlay"})
"""Functions whose arguments may hold the word FROM."""


def tables_of_query(sql: str) -> QueryTables | None:
    """The tables a ``SELECT`` query reads; None when they cannot be told for sure.

    >>> tables_of_query('SELECT a.id, b.x FROM sales.a JOIN "B" b ON a.id = b.id')
    QueryTables(tables=(('sales', 'a'), ('B',)), rows_of_one_table=False)
    >>> tables_of_query("select id, k from APP.T1 where k = 1")
    QueryTables(tables=(('APP', 'T1'),), rows_of_one_table=True)
    >>> print(tables_of_query("select * from generate_series(1, 10)"))
    None
    """
    try:
        parser = _Parser(_tokens(sql))
        plain = parser.statement()
    except _Unsure:
        return None
    return QueryTables(tuple(parser.tables), plain and len(parser.tables) == 1)


def tables_of_dbtable(dbtable: str) -> QueryTables | None:
    """What a JDBC ``dbtable`` reads: a table's name, or anything valid in a ``FROM`` clause
    (``(select ...) t``, ``a JOIN b ON ...``); None when it cannot be told for sure.

    >>> tables_of_dbtable('"APP"."T1"')
    QueryTables(tables=(('APP', 'T1'),), rows_of_one_table=True)
    >>> tables_of_dbtable("(select k, count(*) c from t group by k) q").rows_of_one_table
    False
    """
    try:
        tokens = _tokens(dbtable)
    except _Unsure:
        return None
    names = [token for token in tokens[:-1] if token.kind != "."]
    alternating = all(
        token.kind == ("." if position % 2 else "name")
        for position, token in enumerate(tokens[:-1])
    )
    if names and alternating and len(tokens[:-1]) % 2:
        return QueryTables((tuple(token.text for token in names),), True)
    return tables_of_query(f"SELECT * FROM {dbtable}")


@dataclass(frozen=True)
class _Token:
    kind: str
    """``name`` (a word or quoted identifier), ``string``, ``number``, ``end`` or the
    punctuation itself (``(``, ``,``, ``.``...)."""
    text: str
    """A name without its quotes; a word as written."""
    word: str = ""
    """An unquoted word in lower case (empty for anything else)."""


def _tokens(sql: str) -> list[_Token]:
    tokens = []
    position = 0
    while position < len(sql):
        match = _TOKEN.match(sql, position)
        if match is None:
            raise _Unsure(f"unexpected {sql[position]!r}")
        kind = match.lastgroup
        text = match.group()
        position = match.end()
        if kind == "space":
            continue
        if kind == "dashes":
            raise _Unsure("'--' that some databases read as a comment and others do not")
        if kind == "comment":
            end = sql.find("*/", position)
            body = sql[position : end if end >= 0 else len(sql)]
            if end < 0 or "/*" in body or body.startswith("!"):
                raise _Unsure("a comment that databases read differently")
            position = end + 2
        elif kind == "quoted":
            (part,) = table_parts(text)
            tokens.append(_Token("name", part))
        elif kind == "word":
            tokens.append(_Token("name", text, text.lower()))
        elif kind in ("string", "number"):
            tokens.append(_Token(kind, text))
        else:
            tokens.append(_Token(text, text))
    while tokens and tokens[-1].kind == ";":
        tokens.pop()
    if any(token.kind == ";" for token in tokens):
        raise _Unsure("more than one statement")
    return [*tokens, _Token("end", "")]


class _Parser:
    """Reads tokens left to right, noting each table a ``FROM`` or ``JOIN`` names."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.position = 0
        self.tables: list[tuple[str, ...]] = []
        self.common: set[str] = set()
        """Names of the common table expressions seen (``WITH x AS (...)``)."""
        self.in_expressions = False
        """A subquery was met in an expression (``WHERE x > (SELECT avg(x) FROM t)``): it may
        read rows the query does not pass on."""

    # -- tokens ----------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.position + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.position += 1
        return token

    def expect(self, kind: str, word: str = "") -> _Token:
        token = self.take()
        if token.kind != kind or (word and token.word != word):
            raise _Unsure(f"expected {word or kind}, found {token.text!r}")
        return token

    def at_word(self, *words: str) -> bool:
        return self.peek().word in words

    # -- queries ---------------------------------------------------------------------------

    def statement(self) -> bool:
        """The whole text: one query. Whether its rows are those of one table (see
        :attr:`QueryTables.rows_of_one_table`)."""
        plain = self.query()
        self.expect("end")
        return plain and not self.in_expressions

    def query(self) -> bool:
        """``[WITH ...] term [set operation term]... [ORDER BY ...] [LIMIT ...]``."""
        plain = True
        if self.at_word("with"):
            self.take()
            self.common_tables()
            plain = False
        plain = self.term() and plain
        while self.at_word(*_SET_OPERATIONS):
            self.take()
            if self.at_word("all", "distinct"):
                self.take()
            self.term()
            plain = False
        self.clauses()
        return plain

    def common_tables(self) -> None:
        if self.at_word("recursive"):
            self.take()
        while True:
            name = self.expect("name")
            self.common.add(name.word or name.text)
            if self.peek().kind == "(":
                self.group()  # its column names
            self.expect("name", "as")
            while self.at_word("not", "materialized"):
                self.take()
            self.subquery()
            if self.peek().kind != ",":
                return
            self.take()

    def term(self) -> bool:
        """``SELECT ...`` or ``(query)``."""
        if self.peek().kind == "(":
            self.take()
            plain = self.query()
            self.expect(")")
            return plain
        self.expect("name", "select")
        return self.select()

    def select(self) -> bool:
        """What follows ``SELECT``: its list, ``FROM`` and the clauses up to the query's end."""
        if self.at_word("distinct", "all"):
            self.take()
        plain = self.select_list()
        if self.at_word("from"):
            self.take()
            plain = self.from_list() and plain
        else:
            plain = False
        while self.at_word("where", "group", "having", "window", "qualify"):
            plain = plain and self.at_word("where")
            self.take()
            self.expression()
        return plain

    def select_list(self) -> bool:
        """Whether every item is ``*``, ``q.*``, ``column`` or ``q.column``."""
        plain = True
        while True:
            start = self.position
            self.expression(stop_at_comma=True)
            kinds = [token.kind for token in self.tokens[start : self.position]]
            plain = plain and kinds in (["*"], ["name"], ["name", ".", "*"], ["name", ".", "name"])
            if any(self.tokens[i].word in _RESERVED for i in range(start, self.position)):
                plain = False
            if self.peek().kind != ",":
                return plain
            self.take()

    def clauses(self) -> None:
        """``ORDER BY``, ``LIMIT``, ``OFFSET``, ``FETCH``, ``FOR UPDATE`` of a query."""
        while self.at_word("order", "limit", "offset", "fetch", "for"):
            self.take()
            self.expression()

    def subquery(self) -> bool:
        self.expect("(")
        plain = self.query()
        self.expect(")")
        return plain

    # -- FROM ------------------------------------------------------------------------------

    def from_list(self) -> bool:
        """``item [, item]...``: whether it is one table, not joined."""
        plain = self.joined()
        while self.peek().kind == ",":
            self.take()
            self.joined()
            plain = False
        return plain

    def joined(self) -> bool:
        """``primary [join primary [ON expression | USING (columns)]]...``."""
        plain = self.primary()
        while self.at_word(*_JOIN_WORDS):
            while self.at_word(*_JOIN_WORDS - {"join"}):
                self.take()
            self.expect("name", "join")
            self.primary()
            plain = False
            if self.at_word("on"):
                self.take()
                self.expression(stop_at_comma=True)
            elif self.at_word("using"):
                self.take()
                self.group()
        return plain

    def primary(self) -> bool:
        """A table's name, ``(subquery)`` or ``(joined items)``, then its alias: whether it is
        a table's name."""
        plain = False
        if self.peek().kind == "(":
            if self.peek(1).word in ("select", "with") or self.peek(1).kind == "(":
                plain = self.subquery()  # a derived table passes on what its query does
            else:
                self.take()
                self.from_list()
                self.expect(")")
        else:
            self.table_name()
            plain = True
        if self.at_word("as"):
            self.take()
            self.expect("name")
        elif self.peek().kind == "name" and self.peek().word not in _RESERVED:
            self.take()
        if self.peek().kind == "(":
            self.group()  # the alias's column names, which rename the columns
            plain = False
        after = self.peek()
        if not (
            after.kind in (",", ")", "end")
            or after.word in _CLAUSES | _SET_OPERATIONS | _JOIN_WORDS | {"on", "using"}
        ):
            raise _Unsure(f"{after.text!r} after a table in FROM")
        return plain

    def table_name(self) -> None:
        first = self.expect("name")
        if first.word in _RESERVED:
            raise _Unsure(f"{first.text!r} in FROM")
        parts = [first.text]
        while self.peek().kind == "." and self.peek(1).kind == "name":
            self.take()
            parts.append(self.take().text)
        if self.peek().kind in (".", "(") or len(parts) > 4:
            raise _Unsure("not a table's name in FROM")
        if len(parts) == 1 and (first.word or first.text) in self.common:
            return  # a common table expression: what it reads was noted where it is defined
        name = tuple(parts)
        if name not in self.tables:
            self.tables.append(name)

    # -- expressions -----------------------------------------------------------------------

    def expression(self, *, stop_at_comma: bool = False) -> None:
        """Tokens up to what ends an expression at this depth (a clause, ``FROM``, a join, a
        closing parenthesis), every parenthesized group in them read for its subqueries."""
        while True:
            token = self.peek()
            if token.kind in ("end", ")") or (stop_at_comma and token.kind == ","):
                return
            if token.word in ("into", "table"):
                raise _Unsure(f"{token.text!r} in a query")
            function = token.word in _JOIN_WORDS and self.peek(1).kind == "("  # LEFT(s, 2)
            distinct = token.word == "from" and self.tokens[self.position - 1].word == "distinct"
            if token.word in _ENDS and not function and not distinct:
                return
            if token.kind == "(":
                self.group()
            else:
                self.take()

    def group(self) -> None:
        """A parenthesized group: a subquery, or anything else read for subqueries; a ``FROM``
        in it belongs to a function that takes one, or the query is not read for sure."""
        if self.peek(1).word in ("select", "with"):
            self.subquery()
            self.in_expressions = True
            return
        function = self.tokens[self.position - 1].word if self.position else ""
        self.take()
        while self.peek().kind != ")":
            token = self.peek()
            if token.kind == "end":
                raise _Unsure("a parenthesis not closed")
            if token.kind == "(":
                self.group()
            elif token.word in ("from", "into", "table", "select") and not (
                token.word == "from" and function in _FROM_FUNCTIONS
            ):
                raise _Unsure(f"{token.text!r} inside parentheses")
            else:
                self.take()
        self.take()
