"""JDBC tables named as the OpenLineage naming spec says, for many databases and URL shapes, and
never with a credential in the namespace or the name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset.producer._jdbc import jdbc_dataset, jdbc_namespace, table_parts

# Expected names as the naming spec (https://openlineage.io/docs/spec/naming) and openlineage-java's
# JDBC extractors give them (its tests: client/java/src/test/java/io/openlineage/client/utils/
# jdbc/JdbcDatasetUtilsTestFor*.java), so that tables captured here join up with the same
# tables captured by openlineage-spark.
OPENLINEAGE_JAVA_NAMES = [
    # (url, the table as the JDBC source names it, namespace, name)
    # PostgreSQL: postgres://host:port, {database}.{schema}.{table}
    ("jdbc:postgresql://test-host.com", "schema.table1", "postgres://test-host.com:5432", None),
    ("jdbc:postgresql://192.168.1.1", "schema.table1", "postgres://192.168.1.1:5432", None),
    (
        "jdbc:postgresql://[3ffe:8311:eeee:f70f:0:5eae:10.203.31.9]:5433",
        "schema.table1",
        "postgres://[3ffe:8311:eeee:f70f:0:5eae:10.203.31.9]:5433",
        None,
    ),
    (
        "jdbc:postgresql://hostname?user=fred&password=sec%40ret",
        "schema.table1",
        "postgres://hostname:5432",
        None,
    ),
    ("jdbc:postgresql://hostname:5433", "schema.table1", "postgres://hostname:5433", None),
    (
        "jdbc:postgresql://hostname/mydb",
        "schema.table1",
        "postgres://hostname:5432",
        "mydb.schema.table1",
    ),
    (
        "JDBC:POSTGRESQL://TEST.HOST.COM/MYDB",
        "SCHEMA.TABLE1",
        "postgres://test.host.com:5432",
        "MYDB.SCHEMA.TABLE1",
    ),
    (
        "jdbc:postgresql://hostname1,hostname2",
        "schema.table1",
        "postgres://hostname1:5432,hostname2:5432",
        None,
    ),
    # MySQL: mysql://host:port, {database}.{table}; a qualified name stands alone
    ("jdbc:mysql://test-host.com", "schema.table1", "mysql://test-host.com:3306", None),
    ("jdbc:mysql://fred:sec%40ret@hostname", "schema.table1", "mysql://hostname:3306", None),
    ("jdbc:mysql://hostname/mydb", "schema.table1", "mysql://hostname:3306", None),
    ("jdbc:mysql://hostname/mydb", "table1", "mysql://hostname:3306", "mydb.table1"),
    (
        "jdbc:mysql+srv://username:pwd@domain.com:3307",
        "schema.table1",
        "mysql://domain.com:3307",
        None,
    ),
    ("jdbc:mysql+srv:loadbalance://domain.com", "schema.table1", "mysql://domain.com:3306", None),
    (
        "jdbc:mysql:loadbalance://myhost1,myhost2",
        "schema.table1",
        "mysql://myhost1:3306,myhost2:3306",
        None,
    ),
    (
        "jdbc:mysql://address=(host=myhost1)(port=1111)(user=sandy)(password=sec%40ret),"
        "address=(host=myhost2)(port=2222)(user=finn)(password=secret)",
        "schema.table1",
        "mysql://address=(host=myhost1)(port=1111),address=(host=myhost2)(port=2222)",
        None,
    ),
    (
        "jdbc:mysql://(host=myhost1,port=1111,user=sandy,password=sec%40ret),"
        "(host=myhost2,port=2222,user=finn,password=secret)",
        "schema.table1",
        "mysql://(host=myhost1,port=1111),(host=myhost2,port=2222)",
        None,
    ),
    # SQL Server: sqlserver://host[:port][/instance], {database}.{schema}.{table}
    ("jdbc:sqlserver://test-host.com", "schema.table1", "sqlserver://test-host.com", None),
    (
        "jdbc:sqlserver://hostname;user=fred;password=sec%40ret",
        "schema.table1",
        "sqlserver://hostname",
        None,
    ),
    (
        "jdbc:sqlserver://hostname;database=MYTESTDB",
        "schema.table1",
        "sqlserver://hostname",
        "MYTESTDB.schema.table1",
    ),
    (
        "jdbc:sqlserver://hostname;databaseName=MYTESTDB",
        "schema.table1",
        "sqlserver://hostname",
        "MYTESTDB.schema.table1",
    ),
    ("jdbc:sqlserver://hostname:1433", "schema.table1", "sqlserver://hostname:1433", None),
    (
        "jdbc:sqlserver://hostname;portNumber=1433",
        "schema.table1",
        "sqlserver://hostname:1433",
        None,
    ),
    (
        "jdbc:sqlserver://hostname\\someinstance",
        "schema.table1",
        "sqlserver://hostname/someinstance",
        None,
    ),
    (
        "jdbc:sqlserver://hostname;instanceName=someinstance",
        "schema.table1",
        "sqlserver://hostname/someinstance",
        None,
    ),
    ("jdbc:sqlserver://;serverName=someserver", "schema.table1", "sqlserver://someserver", None),
    (
        "jdbc:sqlserver://;serverName=3ffe:8311:eeee:f70f:0:5eae:10.203.31.9",
        "schema.table1",
        "sqlserver://[3ffe:8311:eeee:f70f:0:5eae:10.203.31.9]",
        None,
    ),
    ("jdbc:jtds:sqlserver://h:1433/shop;user=sa", "dbo.t", "sqlserver://h:1433", "shop.dbo.t"),
    # Oracle: oracle://host:port, {serviceName or sid}.{schema}.{table}
    ("jdbc:oracle:thin:@//test-host.com", "schema.table1", "oracle://test-host.com:1521", None),
    ("jdbc:oracle:thin:@test-host.com", "schema.table1", "oracle://test-host.com:1521", None),
    (
        "jdbc:oracle:thin:user/password@//hostname",
        "schema.table1",
        "oracle://hostname:1521",
        None,
    ),
    ("jdbc:oracle:thin:fred/sec%40ret@hostname", "schema.table1", "oracle://hostname:1521", None),
    ("jdbc:oracle:thin:@hostname:1522", "schema.table1", "oracle://hostname:1522", None),
    ("jdbc:oracle:thin:@tcp://hostname", "schema.table1", "oracle://hostname:1521", None),
    (
        "jdbc:oracle:thin:@//hostname:1522/serviceName",
        "schema.table1",
        "oracle://hostname:1522",
        "serviceName.schema.table1",
    ),
    (
        "jdbc:oracle:thin:@hostname:sid",
        "schema.table1",
        "oracle://hostname:1521",
        "sid.schema.table1",
    ),
    (
        "jdbc:oracle:thin:@hostname:1522:sid",
        "schema.table1",
        "oracle://hostname:1522",
        "sid.schema.table1",
    ),
    (
        "jdbc:oracle:thin:@hostname?connect_timeout=30&retry_count=3",
        "schema.table1",
        "oracle://hostname:1521",
        None,
    ),
    (
        "jdbc:oracle:thin:@myhost1:1521,myhost2:1521",
        "schema.table1",
        "oracle://myhost1:1521,myhost2:1521",
        None,
    ),
    (
        "jdbc:oracle:thin:@(DESCRIPTION=(ADDRESS=(PROTOCOL=tcp)(HOST=hostname)(PORT=1521))"
        "(CONNECT_DATA=(INSTANCE_NAME=ORCL)))",
        "schema.table1",
        "oracle://hostname:1521",
        "ORCL.schema.table1",
    ),
    (
        "jdbc:oracle:thin:@(DESCRIPTION=(ADDRESS_LIST=(ADDRESS=(PROTOCOL=tcp)(HOST=host1))"
        "(ADDRESS=(PROTOCOL=tcp)(HOST=host2)(PORT=1522)))(CONNECT_DATA=(SID=orcl)))",
        "schema.table1",
        "oracle://host1:1521,host2:1522",
        "orcl.schema.table1",
    ),
    (
        "jdbc:oracle:thin:@ldap://oid:5000/mydb1,cn=OracleContext,dc=myco,dc=com",
        "schema.table1",
        "oracle://oid:5000",
        "mydb1.schema.table1",
    ),
    (
        "jdbc:oracle:thin:@ldap://ldap1.example.com:5000/cn=salesdept,cn=OracleContext,dc=com/"
        "mydb1 ldap://ldap2.example.com:3500/cn=salesdept,cn=OracleContext,dc=com/mydb1",
        "schema.table1",
        "oracle://ldap1.example.com:5000",
        "mydb1.schema.table1",
    ),
    # Teradata: teradata://host:port, {database}.{table}
    (
        "jdbc:teradata://hostname/USER=fred,PASSWORD=sec%40ret",
        "schema.table1",
        "teradata://hostname:1025",
        None,
    ),
    ("jdbc:teradata://hostname/DBS_PORT=1111", "schema.table1", "teradata://hostname:1111", None),
    (
        "jdbc:teradata://hostname/DATABASE=mydb",
        "schema.table1",
        "teradata://hostname:1025",
        "mydb.schema.table1",
    ),
    # Default ports of the others, and any other scheme://host/database
    ("jdbc:trino://test-host.com", "schema.table1", "trino://test-host.com:443", None),
    ("jdbc:db2://h/sample", "s.t", "db2://h:6789", "sample.s.t"),
    ("jdbc:crate://h/doc", "s.t", "crate://h:5432", "doc.s.t"),
    ("jdbc:oceanbase:hamode://h1,h2/shop", "s.t", "oceanbase://h1:2881,h2:2881", "shop.s.t"),
    ("jdbc:clickhouse:https://CH.example.com/db", "t", "clickhouse://ch.example.com:8123", "db.t"),
    ("jdbc:ch://h:9000/db", "x.t", "clickhouse://h:9000", "x.t"),
    ("jdbc:cassandra://h1--h2:9043/ks", "t", "cassandra://h1:9042,h2:9043", "ks.t"),
    ("jdbc:unknown://fred:sec%40ret@hostname", "schema.table1", "unknown://hostname", None),
    (
        "jdbc:redshift://c1.abc.eu-west-1.redshift.amazonaws.com:5439/dev?password=x",
        "public.t",
        "redshift://c1.abc.eu-west-1.redshift.amazonaws.com:5439",
        "dev.public.t",
    ),
]


@pytest.mark.parametrize(("url", "table", "namespace", "name"), OPENLINEAGE_JAVA_NAMES)
def test_tables_are_named_as_openlineage_java_names_them(
    url: str, table: str, namespace: str, name: str | None
) -> None:
    assert jdbc_dataset(url, table) == (namespace, name or table)


@pytest.mark.parametrize(
    ("url", "table", "expected"),
    [
        ("jdbc:mysql://hostname/mydb", "table1", ("mysql://hostname:3306", "mydb.table1")),
        ("jdbc:postgresql:shop", "public.t", ("postgres://localhost:5432", "shop.public.t")),
        ("jdbc:postgresql:/", "public.t", ("postgres://localhost:5432", "public.t")),
        ("jdbc:derby:memory:lineage;create=true", "APP.T1", ("derby:memory:lineage", "APP.T1")),
        (
            "jdbc:derby:;databaseName=/var/db/metastore;create=true",
            "APP.DBS",
            ("file:/var/db/metastore", "APP.DBS"),
        ),
        ("jdbc:derby:/var/db/shop;user=a;password=b", "APP.T", ("file:/var/db/shop", "APP.T")),
        ("jdbc:derby:directory:shop", "APP.T", ("file:/home/etl/shop", "APP.T")),
        ("jdbc:derby:../shop", "APP.T", ("file:/home/shop", "APP.T")),
        ("jdbc:derby:", "APP.T", ("file:/home/etl/metastore_db", "APP.T")),
        ("jdbc:derby://db:1527/shop;create=true", "APP.T", ("derby://db:1527", "shop.APP.T")),
        ("jdbc:derby:classpath:shop", "APP.T", ("derby:classpath:shop", "APP.T")),
        ("jdbc:h2:mem:test;USER=sa;PASSWORD=x", "PUBLIC.T", ("h2:mem:test", "PUBLIC.T")),
        ("jdbc:sqlite:/data/x.db", "t", ("sqlite:/data/x.db", "t")),
        ("jdbc:mariadb://h/shop", "t", ("mariadb://h", "shop.t")),
    ],
)
def test_urls_openlineage_java_misnames_or_has_no_rule_for(
    url: str, table: str, expected: tuple[str, str]
) -> None:
    """Derby's embedded databases by their own path (openlineage-java names every one
    ``<home>/metastore_db``), PgJDBC's short forms, and the generic form of the rest."""
    assert jdbc_dataset(url, table, derby_home="/home/etl") == expected


def test_sql_server_connection_properties_name_the_database() -> None:
    properties = {"databaseName": "shop", "portNumber": "1433", "instanceName": "sales"}
    assert jdbc_dataset("jdbc:sqlserver://db", "dbo.t", properties=properties) == (
        "sqlserver://db:1433/sales",
        "shop.dbo.t",
    )
    url = "jdbc:sqlserver://db;databaseName=fromurl"
    assert jdbc_dataset(url, "dbo.t", properties=properties)[1] == "fromurl.dbo.t", "URL first"


def test_a_relative_derby_path_without_a_home_is_named_generically() -> None:
    assert jdbc_dataset("jdbc:derby:shop;create=true", "APP.T") == ("derby:shop", "APP.T")


@pytest.mark.parametrize(
    ("written", "parts"),
    [
        ('"APP"."T1"', ("APP", "T1")),
        ("`db`.`my table`", ("db", "my table")),
        ("[dbo].[t]", ("dbo", "t")),
        ('"a.b"."c"', ("a.b", "c")),
        ('"say ""hi"""', ('say "hi"',)),
        ("schema.table", ("schema", "table")),
        ('"unclosed.t', ('"unclosed', "t")),
    ],
)
def test_table_names_lose_their_quotes(written: str, parts: tuple[str, ...]) -> None:
    assert table_parts(written) == parts


@pytest.mark.parametrize(
    ("url", "namespace"),
    [
        ("jdbc:postgresql://bob:secret@db:5432/sales?password=x", "postgresql://db:5432/sales"),
        ("jdbc:postgresql://bob:se/cret@db:5432/sales", "postgresql://db:5432/sales"),
        ("jdbc:postgresql://bob:se?cret@db:5432/sales", "postgresql://db:5432/sales"),
        ("jdbc:mysql://db:3306/shop/a@b", "mysql://db:3306/shop/a@b"),
        ("jdbc:sqlserver://db:1433;user=sa;password=Secr3t", "sqlserver://db:1433"),
        ("jdbc:oracle:thin:scott/tiger@db:1521:orcl", "oracle:thin:@db:1521:orcl"),
        ("jdbc:oracle:thin:scott/tiger@//db:1521/sales", "oracle:thin:@//db:1521/sales"),
        ("jdbc:oracle:thin:@//db:1521/sales", "oracle:thin:@//db:1521/sales"),
        ("jdbc:derby:memory:lineage;create=true;user=app", "derby:memory:lineage"),
        ("jdbc:h2:mem:test", "h2:mem:test"),
        ("jdbc:x://(host=h,user=u,password=p)/d", "x://(host=h)/d"),
    ],
)
def test_generic_namespaces_carry_no_credentials(url: str, namespace: str) -> None:
    assert jdbc_namespace(url) == namespace


SECRET = "Zq7"
"""Starts every generated secret: no host, database or table of the templates holds it."""
TEMPLATES = [
    "jdbc:postgresql://etl:{s}@db.example.com:5432/sales",
    "jdbc:postgresql://db/sales?user=etl&password={s}&ssl=true",
    "jdbc:postgresql://db/sales;password={s}",
    "jdbc:mysql://etl:{s}@h1:3306,h2/shop",
    "jdbc:mysql://(host=h1,port=1,user=etl,password={s})/shop",
    "jdbc:mysql://address=(host=h1)(password={s})(port=2)/shop",
    "jdbc:sqlserver://db:1433;databaseName=shop;user=sa;password={s}",
    "jdbc:sqlserver://db;password={s};databaseName=shop",
    "jdbc:oracle:thin:scott/{s}@//db:1521/orcl",
    "jdbc:oracle:thin:scott/{s}@db:1521:orcl",
    "jdbc:oracle:thin:scott/{s}@(DESCRIPTION=(ADDRESS=(HOST=db)(PORT=1521)))",
    "jdbc:teradata://db/DATABASE=shop,USER=etl,PASSWORD={s}",
    "jdbc:derby:memory:shop;user=etl;password={s}",
    "jdbc:derby:/var/shop;create=true;password={s}",
    "jdbc:h2:tcp://db/~/shop;USER=etl;PASSWORD={s}",
    "jdbc:unknown://etl:{s}@db/shop",
    "jdbc:snowflake://acct.snowflakecomputing.com/?user=etl&password={s}&db=shop",
]


@given(
    template=st.sampled_from(TEMPLATES),
    tail=st.text(max_size=12) | st.text(alphabet="/@:;,?#()=&%[]{}\"' \\a1.", max_size=12),
)
def test_no_credential_reaches_a_namespace_or_a_name(template: str, tail: str) -> None:
    """Whatever a password holds (``/``, ``@``, ``:``, ``;``, ``,``, quotes, unicode), no part
    of it that could identify it shows in the namespace or the name."""
    secret = SECRET + tail
    namespace, name = jdbc_dataset(template.format(s=secret), "sales.orders", derby_home="/h")
    assert SECRET not in namespace and SECRET not in name, (namespace, name)
    assert SECRET not in jdbc_namespace(template.format(s=secret))


def test_user_names_stay_out_too() -> None:
    for url in (
        "jdbc:postgresql://etl_user@db/sales",
        "jdbc:mysql://(host=h,user=etl_user)/shop",
        "jdbc:sqlserver://db;user=etl_user;databaseName=shop",
        "jdbc:oracle:thin:etl_user/x@db:1521:orcl",
        "jdbc:teradata://db/USER=etl_user",
    ):
        assert "etl_user" not in "".join(jdbc_dataset(url, "t")), url
