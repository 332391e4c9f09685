"""Credentials scrubbed from free text (messages, stack traces, reasons), by the name rules."""

from __future__ import annotations

import importlib
import json
import logging
import pkgutil
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import openlineage_subset
from openlineage_subset.producer._secrets import (
    MARKER,
    ScrubbingFilter,
    scrub_text,
    scrubbed_logger,
    user_info_end,
)
from tests.producer.helpers import ACCESS_KEY as KEY
from tests.producer.helpers import SECRET_KEY as SECRET
from tests.producer.helpers import SIGNATURE, Credentials, locations_with_credentials


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"s3a://{KEY}:{SECRET}@bucket/x", "s3a://***@bucket/x"),
        (f"s3a://{KEY}:wJalr/XUtnFEMI@bucket/x", "s3a://***@bucket/x"),
        (f"s3a://{KEY}:/wJalrXUtnFEMI@bucket/x", "s3a://***@bucket/x"),
        (f"s3a://{KEY}:123/wJalrXUtnFEMI@bucket/x", "s3a://***@bucket/x"),
        (f"s3a://{KEY}:wJa?lrX#UtnFEMI@bucket/x", "s3a://***@bucket/x"),
        (f"gs://{KEY}@bucket/x", "gs://***@bucket/x"),
        ("https://bob:hunter2@example.com/data.csv", "https://***@example.com/data.csv"),
        ("http://bob:p@ss@example.com/", "http://***@example.com/"),
        ("https://ghp_0123456789abcdef@github.com/o/r.git", "https://***@github.com/o/r.git"),
        ("jdbc:postgresql://etl:hunter2@db:5432/sales", "jdbc:postgresql://***@db:5432/sales"),
        (
            "mongodb+srv://app:hunter2@cluster0.example.net/db",
            "mongodb+srv://***@cluster0.example.net/db",
        ),
        (
            f"wasbs://c:{SECRET}@acct.blob.core.windows.net/x",
            "wasbs://***@acct.blob.core.windows.net/x",
        ),
        ("jdbc:oracle:thin:scott/tiger@db:1521:orcl", "jdbc:oracle:thin:***@db:1521:orcl"),
        ("jdbc:oracle:thin:scott/tiger@//db:1521/sales", "jdbc:oracle:thin:***@//db:1521/sales"),
        (
            "jdbc:sqlserver://db:1433;user=sa;password=Secr3t;encrypt=true",
            "jdbc:sqlserver://db:1433;user=sa;password=***;encrypt=true",
        ),
        ("jdbc:mysql://db/shop?user=etl&pwd=Secr3t", "jdbc:mysql://db/shop?user=etl&pwd=***"),
        (
            f"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={KEY}"
            f"%2F20241015%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature={SIGNATURE}"
            "&X-Amz-Security-Token=FwoGZXIvYXdzE",
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***"
            "&X-Amz-Signature=***&X-Amz-Security-Token=***",
        ),
        (
            "https://a.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&sp=rl&se=2024-10-15T00:00Z"
            "&st=2024-10-14T00:00Z&spr=https&sig=Z%2FRHIX5Xcg0Mq2rqI3OlWTjE%3D",
            "https://a.blob.core.windows.net/c/f?sv=***&ss=b&sp=***&se=***&st=***&spr=***&sig=***",
        ),
        ("https://idp/cb?code=abc123&state=xyz", "https://idp/cb?code=***&state=xyz"),
        (
            "https://app/#access_token=abc&expires_in=3600",
            "https://app/#access_token=***&expires_in=3600",
        ),
        (
            "https://api/v1?apiKey=abc&client_secret=def",
            "https://api/v1?apiKey=***&client_secret=***",
        ),
        ("spark.hadoop.fs.s3a.secret.key=abc/def", "spark.hadoop.fs.s3a.secret.key=***"),
        ("-Djavax.net.ssl.keyStorePassword=changeit", "-Djavax.net.ssl.keyStorePassword=***"),
        (
            "Map(url -> jdbc:postgresql://db/sales, password -> hunter2, user -> etl)",
            "Map(url -> jdbc:postgresql://db/sales, password -> ***, user -> etl)",
        ),
        (f"using {KEY} in us-east-1", "using *** in us-east-1"),
        ("session ASIAY34FZKBOKMUTVV7A expired", "session *** expired"),
        # Inside quotes and across lines: a quoted location ends at the quote.
        (
            f"Path does not exist: 's3a://{KEY}:{SECRET}@bucket/x'.\n\tat org.apache.X(X.java:1)",
            "Path does not exist: 's3a://***@bucket/x'.\n\tat org.apache.X(X.java:1)",
        ),
        # A location inside another's query string has its own user information.
        ("https://proxy/?next=https://bob:pw@host/", "https://proxy/?next=https://***@host/"),
        # Quoted values, as Python's and Java's reprs and drivers' messages print them.
        ("connect(password='hunter 2', user='etl')", "connect(password='***', user='etl')"),
        ('connect(password="hunter2") failed', 'connect(password="***") failed'),
        ("token='it\\'s', next='x'", "token='***', next='x'"),
        ("password='unterminated and more", "password='*** and more"),
        # A Python dict's repr and JSON: the name quoted, then ":".
        ("{'password': 'hunter 2', 'user': 'etl'}", "{'password': '***', 'user': 'etl'}"),
        ('{"password": "hunter2", "user": "etl"}', '{"password": "***", "user": "etl"}'),
        ('{"apiKey":"k-123","port":5432}', '{"apiKey":"***","port":5432}'),
        ('{"token": 12345, "x": 1}', '{"token": ***, "x": 1}'),
        ('{"tokens": ["a b", "c"], "x": 1}', '{"tokens": [***], "x": 1}'),
        ('{"credentials": {"user": "etl"}}', '{"credentials": {"user": "etl"}}'),
        # JSON inside a JSON string.
        ('"{\\"password\\": \\"hunter2\\"}"', '"{\\"password\\": \\"***\\"}"'),
        ('"login password=\\"hunter2\\" refused"', '"login password=\\"***\\" refused"'),
        # Spaces around "=", names with "-" or "." between their parts.
        ("password = hunter2", "password = ***"),
        ("db.password =hunter2 and more", "db.password =*** and more"),
        ("private-key=MIIEvQ", "private-key=***"),
        ("x-api-key=k and api.key=k2", "x-api-key=*** and api.key=***"),
        ("client.access-key=AK1 ok", "client.access-key=*** ok"),
        # Java's Properties and maps: "{name=value, name=value}".
        ("{password=hunter2, user=etl}", "{password=***, user=etl}"),
        ("{user=etl, password=hunter2}", "{user=etl, password=***}"),
        ("Properties {a={password=s3cr3t}}", "Properties {a={password=***}}"),
    ],
)
def test_secrets_are_replaced(text: str, expected: str) -> None:
    assert scrub_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "abfss://container@account.dfs.core.windows.net/sales",  # the container is no secret
        "s3a://bucket/people/someone@example.com",
        "hdfs://namenode:8020/user/alice@EXAMPLE.COM/x",
        "hdfs://[2001:db8::1]:8020/user/alice@EXAMPLE.COM",
        "mailto:someone@example.com",
        "partition key=day, code=42 and sig=3",  # short names count in query strings only
        "https://host/data.csv?x=1&password=",  # nothing to hide
        "jdbc:oracle:thin:@//db:1521/sales",
        "AKIA123 is too short, AKIAIOSFODNN7EXAMPL too",
        "java.lang.RuntimeException: boom\n\tat Main.main(Main.java:3)",
        "password= is empty, password: is prose",  # nothing assigned, or no mapping
        '{"key": "day", "code": 42}',  # short names count in query strings only
        "x = 1 and y == 2",
    ],
)
def test_text_without_secrets_is_kept(text: str) -> None:
    assert scrub_text(text) == text


# (location, user information) as Hadoop 3.4's Path reads them (toUri().getUserInfo()), where it
# finds one: the scrubber removes at least that much.
HADOOP_USER_INFO = [
    (f"s3a://{KEY}:{SECRET}@bucket/x", f"{KEY}:{SECRET}"),
    (f"s3a://{KEY}:wJa?lrX#UtnFEMI@bucket/x", f"{KEY}:wJa?lrX#UtnFEMI"),
]


@pytest.mark.parametrize(("uri", "user_info"), HADOOP_USER_INFO)
def test_user_information_is_at_least_what_hadoop_reads(uri: str, user_info: str) -> None:
    scheme, _, rest = uri.partition("://")
    assert rest[: user_info_end(scheme, rest)] == user_info


@given(locations_with_credentials(string.ascii_letters + string.digits + "_.-@"))
@example(
    Credentials(
        uri="abfss://000:" + "0" * 40 + "@account.dfs.core.windows.net/000",
        expected="abfss://account.dfs.core.windows.net/000",
        secrets=("000", "0" * 40),
    )
)
def test_no_key_or_secret_survives_scrubbing(case: Credentials) -> None:
    scheme, _, rest = case.uri.partition("://")
    message = f"java.io.FileNotFoundException: {case.uri} (No such file)\n\tat x.Y(Y.java:1)"
    scrubbed = scrub_text(message)
    host_and_path = case.expected.partition("://")[2].rstrip("/")
    assert f"{scheme}://***@{host_and_path}" in scrubbed
    for secret in case.secrets:
        # (unless the location's host or path holds the same characters: "000" in "/000")
        assert secret not in scrubbed or secret in host_and_path
        for start in range(len(secret) - 5):
            window = secret[start : start + 6]
            assert window not in scrubbed or window in message.replace(rest, host_and_path)


_FRAGMENTS = [
    "s3a://",
    "abfss://",
    "https://",
    "jdbc:",
    "oracle:thin:",
    "//",
    "@",
    ":",
    "/",
    "?",
    "#",
    "&",
    ";",
    "=",
    " -> ",
    ",",
    ")",
    " ",
    "'",
    "\n",
    "password=",
    "token",
    "sig=",
    "?key=",
    "AKIA",
    "AKIAIOSFODNN7EXAMPLE",
    "***",
    "8020",
    "bucket",
    '"',
    "\\",
    '\\"',
    ": ",
    " = ",
    "{",
    "}",
    "[",
    "]",
    "'password': ",
    '"token":',
    "private-key=",
    "api-key = ",
]
_TEXTS = st.lists(
    st.sampled_from(_FRAGMENTS) | st.text(string.ascii_letters + string.digits, max_size=4),
    max_size=30,
).map("".join)


@given(_TEXTS)
def test_scrubbing_is_idempotent(text: str) -> None:
    once = scrub_text(text)
    assert scrub_text(once) == once


@given(_TEXTS)
@example("password=}")  # found in CI: an empty value at the end of a Java Properties map
@example("password=]")
@example('password=\\"\\"')  # an empty value between escaped quotes (JSON in a string)
def test_no_access_key_or_secret_parameter_value_is_left(text: str) -> None:
    scrubbed = scrub_text(text)
    assert re.search(r"(AKIA|ASIA)[A-Z0-9]{16}", scrubbed) is None
    for parameter in re.finditer(r"password=|password -> ", scrubbed):
        rest = scrubbed[parameter.end() :]
        opening = re.match(r"\\?[\"']", rest)
        if opening:  # a quoted value, maybe empty or not closed
            rest = rest[opening.end() :]
            if rest.startswith(opening.group()):
                continue  # empty: the same quote closes it (escaped as it was opened)
        # An empty value: what ends one, or punctuation that closes what holds it (a Java
        # Properties map {password=}, a list [password=]), never taken for a value.
        ends = ("", "&", ";", ",", ")", "]", "}", " ", "\n", "'", '"', "<", ">", "`")
        assert rest.startswith(MARKER) or rest[:1] in ends


# Secrets in the shapes drivers and libraries print them ------------------------------------------
#
# Everything around a generated secret is lower case (names, hosts, the text around it); every
# secret starts with capitals or digits: a capital or a digit in scrubbed text is a leak, even of
# part of a secret. Each shape's secret holds what the shape can carry unescaped.

_CAPITALS = string.ascii_uppercase + string.digits
_NAMES = ["password", "passwd", "pwd", "client_secret", "api-key", "private-key", "access.key"]
_NAMES += ["x-amz-security-token", "accountkey", "db.password", "sas_token"]
_AROUND = st.text(string.ascii_lowercase + " .,:()-", max_size=12)


@dataclass(frozen=True)
class Shape:
    """How a message quotes ``name`` and ``secret`` beside a parameter ``user`` = ``etl`` (or
    the host ``db.example``, for user information): ``write(name, secret, first)``, ``first``
    saying whether the secret comes before its neighbour."""

    write: Callable[[str, str, bool], str]
    alphabet: str
    kept: str = "etl"


def _pairs(first: bool, secret_pair: str, other: str, separator: str) -> str:
    return separator.join([secret_pair, other] if first else [other, secret_pair])


def _mapping(name: str, secret: str, first: bool) -> dict[str, str]:
    return dict([(name, secret), ("user", "etl")] if first else [("user", "etl"), (name, secret)])


_ANYTHING = _CAPITALS + " '\"\\/@:=&;,{}[]()-_.#?%\n\t"
_UNQUOTED = _CAPITALS + "/:+=-_.!*$%~^|,)]}({["  # no space, quote, "&" or ";"
SHAPES = {
    "quoted": Shape(
        lambda n, s, f: _pairs(f, f"{n}='{s}'", "user='etl'", ", "),
        _ANYTHING.replace("'", "").replace("\\", "").replace("\n", ""),
    ),
    "double quoted": Shape(
        lambda n, s, f: _pairs(f, f'{n}="{s}"', 'user="etl"', " "),
        _ANYTHING.replace('"', "").replace("\\", "").replace("\n", ""),
    ),
    "keyword repr": Shape(lambda n, s, f: _pairs(f, f"{n}={s!r}", "user='etl'", ", "), _ANYTHING),
    "dict repr": Shape(lambda n, s, f: repr(_mapping(n, s, f)), _ANYTHING),
    "json": Shape(lambda n, s, f: json.dumps(_mapping(n, s, f)), _ANYTHING),
    "json without spaces": Shape(
        lambda n, s, f: json.dumps(_mapping(n, s, f), separators=(",", ":")), _ANYTHING
    ),
    "json in json": Shape(
        lambda n, s, f: json.dumps({"message": "body: " + json.dumps(_mapping(n, s, f))}),
        _ANYTHING,
    ),
    "user information": Shape(
        lambda n, s, f: (
            f"jdbc:postgresql://etl:{s}@db.example/sales"
            if f
            else f"https://etl:{s}@db.example/api"
        ),
        _CAPITALS + ":!$*+,;=-_.~",
        kept="db.example",
    ),
    "query parameter": Shape(
        lambda n, s, f: (
            f"https://db.example/api?user=etl&{n}={quote(s, safe='')}&x=y"
            if f
            else f"https://db.example/api#{n}={quote(s, safe='')}&user=etl"
        ),
        _ANYTHING,
    ),
    "key = value": Shape(lambda n, s, f: _pairs(f, f"{n} = {s}", "user = etl", ", "), _UNQUOTED),
    "java properties": Shape(
        lambda n, s, f: "{" + _pairs(f, f"{n}={s}", "user=etl", ", ") + "}", _UNQUOTED
    ),
    "scala map": Shape(
        lambda n, s, f: "Map(" + _pairs(f, f"{n} -> {s}", "user -> etl", ", ") + ")",
        _UNQUOTED.replace(",", "").replace(")", ""),
    ),
}


@dataclass(frozen=True)
class Case:
    text: str
    secret: str
    kept: str
    frame: str
    """The text with an empty secret: the capitals it holds (``Map(``) are no leak."""


@st.composite
def secrets_in_text(draw: st.DrawFn) -> Case:
    shape = SHAPES[draw(st.sampled_from(sorted(SHAPES)))]
    secret = draw(st.text(_CAPITALS, min_size=4, max_size=8))
    secret += draw(st.text(shape.alphabet, max_size=16))
    name, first = draw(st.sampled_from(_NAMES)), draw(st.booleans())
    before, after = draw(_AROUND), draw(_AROUND)
    return Case(
        f"{before} {shape.write(name, secret, first)} {after}",
        secret,
        shape.kept,
        shape.write(name, "", first),
    )


@given(secrets_in_text())
@example(Case("x {password=HUNTER2, user=etl} y", "HUNTER2", "etl", "{password=, user=etl}"))
def test_no_generated_secret_survives_in_any_shape(case: Case) -> None:
    scrubbed = scrub_text(case.text)
    assert case.secret not in scrubbed
    leaked = set(scrubbed) & set(_CAPITALS) - set(case.frame)
    assert not leaked, f"part of {case.secret!r} is left: {scrubbed!r}"
    assert case.kept in scrubbed, "what is not a secret stays readable"
    assert scrub_text(scrubbed) == scrubbed


MEGABYTE = 1_000_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Each "://" starts a location whose user information may run to the one "@" at the end.
        ("s3a://k:x/" * (MEGABYTE // 10) + "@bucket", "s3a://***@bucket"),
        ("password=" * (MEGABYTE // 9), "password=***"),
        ("jdbc:" * (MEGABYTE // 5) + "u/p@h", "jdbc:" * (MEGABYTE // 5) + "***@h"),
        ("AKIA" * (MEGABYTE // 4), "***" * (MEGABYTE // 20)),
        ("://" * (MEGABYTE // 3), "://" * (MEGABYTE // 3)),
        ("a" * MEGABYTE + "=", "a" * MEGABYTE + "="),
        ("s3a://k:" + "/" * MEGABYTE, "s3a://k:" + "/" * MEGABYTE),
        ("s3a://" + "k:" * (MEGABYTE // 2), "s3a://" + "k:" * (MEGABYTE // 2)),
        ("x://@:" * (MEGABYTE // 6), "x://@:" * (MEGABYTE // 6)),
        ("s3a://k:x/" * (MEGABYTE // 10), "s3a://k:x/" * (MEGABYTE // 10)),
        ("s3a://k:s@b/x " * (MEGABYTE // 14), "s3a://***@b/x " * (MEGABYTE // 14)),
        ("?sig=" * (MEGABYTE // 5), "?sig=***"),
        ("x -> " * (MEGABYTE // 5), "x -> " * (MEGABYTE // 5)),
        ("jdbc:a;" * (MEGABYTE // 7), "jdbc:a;" * (MEGABYTE // 7)),
        ("jdbc:a//" * (MEGABYTE // 8), "jdbc:a//" * (MEGABYTE // 8)),
        ("jdbc:a/@" * (MEGABYTE // 8), "jdbc:***@"),
        # Each quote closes the value the one before opened.
        ("password='" * (MEGABYTE // 10), "password='***'" * (MEGABYTE // 20)),
        ("'password': '" * (MEGABYTE // 13), "'password': '" * (MEGABYTE // 13)),
        ("password = " * (MEGABYTE // 11 // 2 * 2), "password = *** = " * (MEGABYTE // 22)),
        # No "]" anywhere: the line is searched for one once, not once per "[".
        ('"token": [' * (MEGABYTE // 10), '"token": [*** [' * (MEGABYTE // 20)),
        ("password='\n" * (MEGABYTE // 11), "password='\n" * (MEGABYTE // 11)),
        ("password=" + "}" * MEGABYTE, "password=" + "}" * MEGABYTE),
        # Not closed: a value without quotes, to the end.
        ('\\"password\\": \\"' + "\\" * MEGABYTE, '\\"password\\": \\"***'),
    ],
    ids=lambda value: value[:12] if isinstance(value, str) else None,
)
def test_hostile_megabytes_are_scrubbed_in_linear_time(text: str, expected: str) -> None:
    # No clock: every rule is a single scan or a regular expression without nested repetition,
    # so a quadratic path would show as this test hanging, not as a flaky timing.
    assert scrub_text(text) == expected


def test_scrub_text_takes_a_string() -> None:
    with pytest.raises(TypeError, match="takes a string, got bytes"):
        scrub_text(b"s3a://k:s@b/x")  # type: ignore[arg-type]


# Log records ----------------------------------------------------------------------------------

SOURCE = Path(__file__).parents[2] / "src" / "openlineage_subset"


def test_the_package_logs_only_through_scrubbed_loggers() -> None:
    """A logger got any other way would let a future log line through unscrubbed."""
    elsewhere = [
        f"{path.relative_to(SOURCE)}:{number}"
        for path in sorted(SOURCE.rglob("*.py"))
        if path.name != "_secrets.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "getLogger(" in line or "logging.Logger(" in line
    ]
    assert elsewhere == [], "get loggers with _secrets.scrubbed_logger"
    for info in pkgutil.walk_packages(openlineage_subset.__path__, "openlineage_subset."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    loggers = [  # those the package made: its modules' (the tests', below, are scrubbed too)
        logger
        for name, logger in logging.Logger.manager.loggerDict.items()
        if name.startswith("openlineage_subset.") and isinstance(logger, logging.Logger)
    ]
    assert loggers, "the package has loggers"
    for logger in loggers:
        assert any(isinstance(f, ScrubbingFilter) for f in logger.filters), logger.name


def test_a_log_record_is_scrubbed_before_any_handler_sees_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = scrubbed_logger("openlineage_subset.test")
    secret_url = "https://etl:hunter2@lineage.example/api"
    try:
        raise ConnectionError(f"{secret_url} refused {{'password': 'p4ss'}}")
    except ConnectionError:
        log.exception("sending to %s failed, with %s", secret_url, {"token": "t0ken"})
    (record,) = caplog.records
    assert record.exc_info is None, "the exception is not handed to handlers unscrubbed"
    shown = caplog.text + logging.Formatter("%(message)s %(exc_text)s").format(record)
    for secret in ("hunter2", "p4ss", "t0ken"):
        assert secret not in shown
    assert "lineage.example/api refused" in shown and "ConnectionError" in shown
    assert "Traceback" in shown
