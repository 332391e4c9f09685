"""Credentials scrubbed from free text (messages, stack traces, reasons), by the name rules."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset.producer._secrets import MARKER, scrub_text, user_info_end
from tests.producer.test_naming import ACCESS_KEY as KEY
from tests.producer.test_naming import SECRET_KEY as SECRET
from tests.producer.test_naming import SIGNATURE, Credentials, locations_with_credentials


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
def test_no_key_or_secret_survives_scrubbing(case: Credentials) -> None:
    scheme, _, rest = case.uri.partition("://")
    message = f"java.io.FileNotFoundException: {case.uri} (No such file)\n\tat x.Y(Y.java:1)"
    scrubbed = scrub_text(message)
    host_and_path = case.expected.partition("://")[2].rstrip("/")
    assert f"{scheme}://***@{host_and_path}" in scrubbed
    for secret in case.secrets:
        assert secret not in scrubbed
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
def test_no_access_key_or_secret_parameter_value_is_left(text: str) -> None:
    scrubbed = scrub_text(text)
    assert re.search(r"(AKIA|ASIA)[A-Z0-9]{16}", scrubbed) is None
    for parameter in re.finditer(r"password=|password -> ", scrubbed):
        rest = scrubbed[parameter.end() :]
        assert rest.startswith(MARKER) or rest[:1] in ("", "&", ";", ",", ")", " ", "\n", "'")


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
