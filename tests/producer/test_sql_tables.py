"""The tables a JDBC query reads: every one a FROM or JOIN names, or None when that cannot be
told for sure; and whether a condition on its columns holds for its one table's rows."""

from __future__ import annotations

import pytest

from openlineage_subset.producer._sql_tables import tables_of_dbtable, tables_of_query


@pytest.mark.parametrize(
    ("query", "tables", "rows_of_one_table"),
    [
        ("select id, k from APP.T1 where k = 1", ["APP.T1"], True),
        ('SELECT "id", "k" FROM "APP"."T1" WHERE "k" = 1', ["APP.T1"], True),
        ("select * from t", ["t"], True),
        ("select t.* from t", ["t"], True),
        ("select distinct a, b from s.t order by a limit 10", ["s.t"], True),
        ("select a from t for update", ["t"], True),
        ("select a from t where a is distinct from b", ["t"], True),
        ("select a from t where name = 'it''s from x'", ["t"], True),
        ("select `a` from `db`.`t`", ["db.t"], True),
        ("select a from [dbo].[t] where x = 1", ["dbo.t"], True),
        ("select a from t -- from u\n where x = 1", ["t"], True),
        ("select a /* from u */ from t", ["t"], True),
        # Not rows of one table: renamed or computed columns, grouping, more tables, subqueries
        ("select a as b from t", ["t"], False),
        ("select a b from t", ["t"], False),
        ("select a + 1 from t", ["t"], False),
        ("select k, count(*) c from t group by k", ["t"], False),
        ("select a from t group by a having count(*) > 1", ["t"], False),
        ("select top 10 a from t", ["t"], False),
        ("select a from t where left(a, 2) = 'ab'", ["t"], True),
        ("select * from (select * from t) x", ["t"], True),
        ("select * from (select a + 1 from t) x", ["t"], False),
        ("select * from (select a from t) x(b)", ["t"], False),
        ("select * from t union select * from u", ["t", "u"], False),
        ("with c as (select * from base) select * from c", ["base"], False),
        (
            "with c(x) as (select a from base) select x from c join o on c.x = o.x",
            ["base", "o"],
            False,
        ),
        (
            "with recursive c as (select 1 from base union all select 1 from c) select * from c",
            ["base"],
            False,
        ),
        (
            'select a.id, b.x from sales.a join "B" b on a.id = b.id',
            ["sales.a", "B"],
            False,
        ),
        ("select * from a, b where a.x = b.x", ["a", "b"], False),
        ("select * from a join b on a.x = b.x, c", ["a", "b", "c"], False),
        ("select * from a left outer join b using (id) natural join c", ["a", "b", "c"], False),
        ("select * from a cross join b", ["a", "b"], False),
        ("select * from (a join b on a.i = b.i)", ["a", "b"], False),
        (
            "select extract(year from d), trim(both ' ' from s), substring(s from 1 for 2) "
            "from t where x in (select y from u) and exists (select 1 from v where v.a = t.a)",
            ["t", "u", "v"],
            False,
        ),
        ("select (select max(y) from u) from t", ["u", "t"], False),
        ("select coalesce((select 1 from u), 0) from t", ["u", "t"], False),
        ("select a from t where x > (select avg(x) from t)", ["t"], False),
        ("select 1", [], False),
        ("select * from t;", ["t"], True),
    ],
)
def test_the_tables_a_query_names(query: str, tables: list[str], rows_of_one_table: bool) -> None:
    found = tables_of_query(query)
    assert found is not None
    assert [".".join(parts) for parts in found.tables] == tables
    assert found.rows_of_one_table == rows_of_one_table


@pytest.mark.parametrize(
    "query",
    [
        "select * from generate_series(1, 10)",  # a function in FROM
        "select * from t, lateral (select * from u where u.a = t.a) x",
        "select * from only t",
        "select * from unnest(array[1, 2])",
        "select * from t with (nolock)",  # a table hint
        "select * from t tablesample system (10)",
        "select * from t@remote_link",  # Oracle's database link
        "select * from #temp",
        "select * from {oj a left outer join b on a.i = b.i}",
        "select * from t cross apply f(t.a)",
        "select * into copy from t",
        "select * from t; drop table t",
        "select 1--1 from t",  # '--' without a space: a comment in some databases only
        "select * from t where s = 'it\\'s' or 1 = 1 from u",  # backslash escapes differ
        "select $$ from u $$",
        "select * from t /*! join secret */",
        "select * from t /* nested /* comment */ from u */",
        "select x from (values (1), (2)) v(x) join (table u) w on true",
        "select ((select a from t) union select b from u)",
        "select * from t where x in (table u)",
        "select * from t where",  # not closed, but nothing hidden: fine either way
        "update t set a = 1",
        "exec proc",
        "select * from (select * from t",
    ],
)
def test_what_cannot_be_told_for_sure_gives_none(query: str) -> None:
    found = tables_of_query(query)
    if query == "select * from t where":
        return
    assert found is None, found


@pytest.mark.parametrize(
    ("dbtable", "tables", "rows_of_one_table"),
    [
        ("APP.T1", ["APP.T1"], True),
        ('"APP"."T1"', ["APP.T1"], True),
        ("`my db`.`my table`", ["my db.my table"], True),
        ("T1 t", ["T1"], True),
        ("T1 AS t", ["T1"], True),
        ("(select id from T1 where k = 1) q", ["T1"], True),
        ("(select k, count(*) c from T1 group by k) q", ["T1"], False),
        ("a join b on a.i = b.i", ["a", "b"], False),
    ],
)
def test_what_a_dbtable_reads(dbtable: str, tables: list[str], rows_of_one_table: bool) -> None:
    found = tables_of_dbtable(dbtable)
    assert found is not None
    assert [".".join(parts) for parts in found.tables] == tables
    assert found.rows_of_one_table == rows_of_one_table


def test_a_dbtable_that_cannot_be_read_gives_none() -> None:
    assert tables_of_dbtable("generate_series(1, 10)") is None
    assert tables_of_dbtable("t; drop table t") is None
