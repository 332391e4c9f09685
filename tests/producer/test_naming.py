"""Dataset naming from Spark paths: cleaning, OpenLineage identities, root trimming, globs."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given

from openlineage_subset.producer._naming import (
    DEFAULT_TRIM_RULES,
    NULL_PARTITION,
    TrimRules,
    clean_location,
    dataset_identity,
    glob_root,
    partition_dimensions,
    split_dataset_root,
)
from tests.producer.helpers import (
    ACCESS_KEY,
    SECRET_KEY,
    SIGNATURE,
    Credentials,
    locations_with_credentials,
)

SECRET_WITH_SLASH = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY"
SAS_SIGNATURE = "sig=Z%2FRHIX5Xcg0Mq2rqI3OlWTjEg2tYkboXr1P9ZUXDtkk%3D"


# --- clean_location ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        (f"s3a://{ACCESS_KEY}:{SECRET_KEY}@bucket/path", "s3a://bucket/path"),
        (f"s3n://{ACCESS_KEY}:{SECRET_KEY}@bucket/path/", "s3n://bucket/path"),
        # An unencoded "/" in the secret ends the authority early; the credential still goes.
        (f"s3a://{ACCESS_KEY}:{SECRET_WITH_SLASH}@bucket/path", "s3a://bucket/path"),
        (f"s3a://{ACCESS_KEY}:wJalrXUtnFEMI%2FK7MDENG@bucket/path", "s3a://bucket/path"),
        # A bare token as user information is a credential too on schemes that name no user.
        (f"s3a://{ACCESS_KEY}@bucket/path", "s3a://bucket/path"),
        (f"https://{SECRET_KEY}@example.com/data.csv", "https://example.com/data.csv"),
        (f"hdfs://etl:{SECRET_KEY}@namenode:8020/warehouse", "hdfs://namenode:8020/warehouse"),
        (
            f"https://bucket.s3.amazonaws.com/sales.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            f"&X-Amz-Credential={ACCESS_KEY}%2F20241015%2Fus-east-1%2Fs3%2Faws4_request"
            f"&X-Amz-Signature={SIGNATURE}",
            "https://bucket.s3.amazonaws.com/sales.csv",
        ),
        (
            f"wasbs://container@account.blob.core.windows.net/sales?sv=2022-11-02&{SAS_SIGNATURE}",
            "wasbs://container@account.blob.core.windows.net/sales",
        ),
        (f"s3a://bucket/sales#{SECRET_KEY}", "s3a://bucket/sales"),
        (f"https://example.com?token={SECRET_KEY}", "https://example.com/"),
        # A credential in Azure user information goes whole, container and all.
        (
            f"abfss://container:{SECRET_KEY}@account.dfs.core.windows.net/sales",
            "abfss://account.dfs.core.windows.net/sales",
        ),
    ],
)
def test_credentials_and_secrets_are_removed(uri: str, expected: str) -> None:
    assert clean_location(uri) == expected


@pytest.mark.parametrize(
    "uri",
    [
        f"s3a://{ACCESS_KEY}:{SECRET_KEY}@bucket/sales/business_date=2024-10-15",
        f"s3a://{ACCESS_KEY}:{SECRET_WITH_SLASH}@bucket/sales/2024/10/15",
        f"gs://bucket/sales/2024-10-15?X-Goog-Credential={ACCESS_KEY}&X-Goog-Signature={SIGNATURE}",
        f"abfss://container:{SECRET_KEY}@account.dfs.core.windows.net/sales/country=PL",
        f"https://host/sales/202410/data.csv?X-Amz-Credential={ACCESS_KEY}&X-Amz-Signature={SIGNATURE}",
        f"hdfs://etl:{SECRET_KEY}@namenode:8020/sales/dt=2024-10-15#{SIGNATURE}",
    ],
)
def test_secrets_appear_in_no_output(uri: str) -> None:
    root, trimmed = split_dataset_root(uri)
    outputs = [clean_location(uri), *dataset_identity(uri), root, *trimmed, str(glob_root(uri))]
    for output in outputs:
        for secret in (ACCESS_KEY, SECRET_KEY, SECRET_WITH_SLASH, "wJalrXUtnFEMI", SIGNATURE):
            assert secret not in output


# What Hadoop's Path makes of unencoded secrets (Hadoop 3.4, through PySpark 4): its authority
# runs to the first "/", so "?" and "#" are user information; a "/" in the secret leaves no
# host, and a secret starting with "/" or with digits then "/" makes the access key the host.
@pytest.mark.parametrize(
    "uri",
    [
        f"s3a://{ACCESS_KEY}:/wJalrXUtnFEMI@bucket/sales",  # Hadoop: host AKIA..., port empty
        f"s3a://{ACCESS_KEY}:123/wJalrXUtnFEMI@bucket/sales",  # Hadoop: host AKIA..., port 123
        f"s3a://{ACCESS_KEY}:wJa?lrX#UtnFEMI@bucket/sales",  # Hadoop: user info, host bucket
        f"s3a://{ACCESS_KEY}:wJa/lr?X#UtnFEMI@bucket/sales",
        f"s3a://{ACCESS_KEY}:#wJalrXUtnFEMI@bucket/sales",
        f"s3a://{ACCESS_KEY}:wJalrXUtnFEMI/@bucket/sales",
        f"gs://{ACCESS_KEY}:?wJalrXUtnFEMI@bucket/sales",
        "s3a://:/wJalrXUtnFEMI@bucket/sales",
    ],
)
def test_ambiguous_user_information_goes_whole(uri: str) -> None:
    assert clean_location(uri).endswith("://bucket/sales")
    assert dataset_identity(uri)[0] in ("s3://bucket", "gs://bucket")
    assert glob_root(uri + "/*") == clean_location(uri)


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        (
            f"abfss://container:/{SECRET_KEY}@account.dfs.core.windows.net/sales",
            "abfss://account.dfs.core.windows.net/sales",
        ),
        ("https://bob:/hunter2@example.com/data.csv", "https://example.com/data.csv"),
        ("https://bob:hun?ter2@example.com/data.csv", "https://example.com/data.csv"),
        ("https://bob:pa/ss@example.com/data.csv", "https://example.com/data.csv"),
        # A port is a number: host:port then a path holding "@" (a Kerberos principal) stays.
        (
            "hdfs://namenode:8020/user/alice@EXAMPLE.COM",
            "hdfs://namenode:8020/user/alice@EXAMPLE.COM",
        ),
        (
            "hdfs://[2001:db8::1]/user/alice@EXAMPLE.COM",
            "hdfs://[2001:db8::1]/user/alice@EXAMPLE.COM",
        ),
    ],
)
def test_user_information_ends_where_hadoop_or_a_host_says(uri: str, expected: str) -> None:
    assert clean_location(uri) == expected


@given(locations_with_credentials())
def test_no_key_or_secret_survives_cleaning(case: Credentials) -> None:
    assert clean_location(case.uri) == case.expected
    root, trimmed = split_dataset_root(case.uri)
    glob = glob_root(case.uri.rstrip("/") + "/*")
    outputs = [clean_location(case.uri), *dataset_identity(case.uri), root, *trimmed, str(glob)]
    for output in outputs:
        for secret in case.secrets:
            assert secret not in output
            # No 6 characters of it either, unless the bucket or path holds them anyway.
            for start in range(len(secret) - 5):
                window = secret[start : start + 6]
                assert window not in output or window in case.expected, (window, output)


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        (
            "abfss://container@account.dfs.core.windows.net/sales",
            "abfss://container@account.dfs.core.windows.net/sales",
        ),
        (
            "abfs://container@account.dfs.core.windows.net/sales/",
            "abfs://container@account.dfs.core.windows.net/sales",
        ),
        (
            "wasbs://container@account.blob.core.windows.net/sales",
            "wasbs://container@account.blob.core.windows.net/sales",
        ),
        (
            "wasb://container@account.blob.core.windows.net/sales",
            "wasb://container@account.blob.core.windows.net/sales",
        ),
    ],
)
def test_azure_container_is_kept(uri: str, expected: str) -> None:
    assert clean_location(uri) == expected


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("file:/tmp/sales", "file:/tmp/sales"),
        ("file:///tmp/sales", "file:/tmp/sales"),
        ("/tmp/sales", "file:/tmp/sales"),
        ("file://localhost/tmp/sales", "file:/tmp/sales"),
        ("file:////tmp//sales///2024/", "file:/tmp/sales/2024"),
        ("//tmp/sales", "file:/tmp/sales"),
        ("file:/tmp/sales/", "file:/tmp/sales"),
        ("file:/", "file:/"),
        ("file:///", "file:/"),
        ("file://", "file:/"),
        ("/", "file:/"),
        ("file://fileserver/share/sales", "file://fileserver/share/sales"),
    ],
)
def test_local_files_are_written_as_hadoop_prints_them(uri: str, expected: str) -> None:
    assert clean_location(uri) == expected


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("s3a://bucket//sales///2024//", "s3a://bucket/sales/2024"),
        ("s3a://bucket", "s3a://bucket/"),
        ("s3a://bucket/", "s3a://bucket/"),
        ("hdfs://namenode:8020", "hdfs://namenode:8020/"),
        ("hdfs:///warehouse/", "hdfs:/warehouse"),
        ("S3A://bucket/Sales", "s3a://bucket/Sales"),
        ("s3a://bucket/a%20b/c%3Dd/%25", "s3a://bucket/a%20b/c%3Dd/%25"),
        ("hdfs://[2001:db8::1]:8020/warehouse", "hdfs://[2001:db8::1]:8020/warehouse"),
        ("dbfs:/mnt/sales/", "dbfs:/mnt/sales"),
        ("s3a://bucket/people/someone@example.com", "s3a://bucket/people/someone@example.com"),
    ],
)
def test_locations_are_normalised(uri: str, expected: str) -> None:
    assert clean_location(uri) == expected


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("", "must not be empty"),
        ("sales/2024", "relative path"),
        ("file:sales/2024", "relative path after 'file:'"),
        ("C:/data/sales", "Windows drive"),
    ],
)
def test_unusable_locations_are_rejected(uri: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        clean_location(uri)


def test_a_location_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="must be a string, got bytes"):
        clean_location(b"s3a://bucket/sales")  # type: ignore[arg-type]


# --- dataset_identity ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "namespace", "name"),
    [
        ("file:/data/sales", "file", "/data/sales"),
        ("file:///data/sales/", "file", "/data/sales"),
        ("/data/sales", "file", "/data/sales"),
        ("file:/", "file", "/"),
        ("file://fileserver/share/sales", "file://fileserver", "/share/sales"),
        ("s3://bucket/warehouse/sales", "s3://bucket", "warehouse/sales"),
        ("s3a://bucket/warehouse/sales/", "s3://bucket", "warehouse/sales"),
        ("s3n://bucket/warehouse/sales", "s3://bucket", "warehouse/sales"),
        ("s3a://bucket", "s3://bucket", "/"),
        ("s3a://bucket/", "s3://bucket", "/"),
        ("gs://bucket/warehouse/sales", "gs://bucket", "warehouse/sales"),
        ("gs://bucket", "gs://bucket", "/"),
        (
            "abfss://container@account.dfs.core.windows.net/warehouse/sales",
            "abfss://container@account.dfs.core.windows.net",
            "warehouse/sales",
        ),
        (
            "abfs://container@account.dfs.core.windows.net/warehouse/sales",
            "abfss://container@account.dfs.core.windows.net",
            "warehouse/sales",
        ),
        (
            "abfss://container@account.dfs.core.windows.net",
            "abfss://container@account.dfs.core.windows.net",
            "/",
        ),
        (
            "wasbs://container@account.blob.core.windows.net/warehouse/sales",
            "wasbs://container@account.blob.core.windows.net",
            "warehouse/sales",
        ),
        (
            "wasb://container@account.blob.core.windows.net/warehouse/sales",
            "wasbs://container@account.blob.core.windows.net",
            "warehouse/sales",
        ),
        ("hdfs://namenode:8020/warehouse/sales", "hdfs://namenode:8020", "/warehouse/sales"),
        ("hdfs://namenode:8020", "hdfs://namenode:8020", "/"),
        ("hdfs://namenode/warehouse/sales", "hdfs://namenode", "/warehouse/sales"),
        ("hdfs:/warehouse/sales", "hdfs", "/warehouse/sales"),
        ("hdfs:///warehouse/sales", "hdfs", "/warehouse/sales"),
        ("dbfs:/mnt/sales", "dbfs", "/mnt/sales"),
        ("dbfs:///mnt/sales/", "dbfs", "/mnt/sales"),
        ("dbfs://workspace/mnt/sales", "dbfs://workspace", "/mnt/sales"),
        ("viewfs://cluster/warehouse/sales", "viewfs://cluster", "/warehouse/sales"),
        ("oss://bucket/warehouse/sales", "oss://bucket", "/warehouse/sales"),
        ("alluxio://master:19998/sales", "alluxio://master:19998", "/sales"),
        ("https://example.com/data/sales.csv?x=1", "https://example.com", "/data/sales.csv"),
    ],
)
def test_dataset_identity_follows_the_naming_spec(uri: str, namespace: str, name: str) -> None:
    assert dataset_identity(uri) == (namespace, name)


@pytest.mark.parametrize("uri", ["s3a:///sales", "gs:/sales", f"s3a://{ACCESS_KEY}:x@/sales"])
def test_object_store_location_without_bucket_is_rejected(uri: str) -> None:
    with pytest.raises(ValueError, match="names no bucket or container"):
        dataset_identity(uri)


# --- split_dataset_root --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "root", "trimmed"),
    [
        (
            "file:/sales/business_date=2024-10-15/country=PL",
            "file:/sales",
            ("business_date=2024-10-15", "country=PL"),
        ),
        (
            "s3a://bucket/warehouse/sales/business_date=2024-10-15",
            "s3a://bucket/warehouse/sales",
            ("business_date=2024-10-15",),
        ),
        (
            "file:/sales/country=__HIVE_DEFAULT_PARTITION__",
            "file:/sales",
            (f"country={NULL_PARTITION}",),
        ),
        ("file:/sales/ts=2024-10-15 13%3A00%3A00", "file:/sales", ("ts=2024-10-15 13%3A00%3A00",)),
        ("file:/logs/2024/10/15", "file:/logs", ("2024", "10", "15")),
        ("file:/logs/2024/10", "file:/logs", ("2024", "10")),
        ("file:/logs/2024/02/29", "file:/logs", ("2024", "02", "29")),
        ("file:/logs/2024-10-15", "file:/logs", ("2024-10-15",)),
        ("file:/logs/20241015", "file:/logs", ("20241015",)),
        ("file:/logs/15.10.2024", "file:/logs", ("15.10.2024",)),
        ("file:/logs/2024-10-15T13:00:00.000Z", "file:/logs", ("2024-10-15T13:00:00.000Z",)),
        ("file:/logs/20241015T1300Z", "file:/logs", ("20241015T1300Z",)),
        ("file:/logs/2024-10-15 13", "file:/logs", ("2024-10-15 13",)),
        ("file:/logs/2024-10", "file:/logs", ("2024-10",)),
        ("file:/logs/202410", "file:/logs", ("202410",)),
        (
            "file:/t/dt=2024-10-15/2024/10/15",
            "file:/t",
            ("dt=2024-10-15", "2024", "10", "15"),
        ),
        ("file:/t/2024/10/15/country=PL", "file:/t", ("2024", "10", "15", "country=PL")),
        ("file:/t/2024-10/20241015", "file:/t", ("2024-10", "20241015")),
        ("s3a://bucket/logs/2024/10/15/", "s3a://bucket/logs", ("2024", "10", "15")),
        ("s3a://bucket/logs/2024/10", "s3a://bucket/logs", ("2024", "10")),
        (
            "hdfs://namenode:8020/warehouse/sales/year=2024/month=10",
            "hdfs://namenode:8020/warehouse/sales",
            ("year=2024", "month=10"),
        ),
    ],
)
def test_trailing_partition_and_date_directories_are_trimmed(
    uri: str, root: str, trimmed: tuple[str, ...]
) -> None:
    assert split_dataset_root(uri) == (root, trimmed)


@pytest.mark.parametrize(
    "uri",
    [
        "file:/data/2024/13/45",  # no month 13, no day 45
        "file:/data/2024/13",
        "file:/data/2024/02/30",  # not a calendar date
        "file:/data/2024-02-30",
        "file:/data/2024-13",
        "file:/data/202413",
        "file:/data/12345678",  # eight digits, but month 56
        "file:/data/v2",
        "file:/data/2024",  # a year alone
        "file:/data/2024/1/5",  # month and day need two digits
        "file:/data/snapshot-2024-10-15",  # letters remain besides the date
        "file:/data/2024-10-15.csv",
        "file:/data/a=b=c",  # a partition directory has exactly one "="
        "file:/data/=PL",
        "file:/data/country=",
        "file:/logs/app/2024/10/15/13",  # an hour directory is not recognised (as in OpenLineage)
        "file:/data/part-00000",
    ],
)
def test_directories_that_are_not_partitions_or_dates_are_kept(uri: str) -> None:
    assert split_dataset_root(uri) == (uri, ())


@pytest.mark.parametrize(
    ("uri", "root"),
    [
        ("file:/country=PL", "file:/country=PL"),
        ("file:/2024-10-15", "file:/2024-10-15"),
        ("file:/2024/10/15", "file:/2024/10/15"),
        ("file:/logs/2024/10/15", "file:/logs"),
        ("file:/2024/10", "file:/2024/10"),
        ("s3a://bucket/dt=2024-10-15", "s3a://bucket/dt=2024-10-15"),
        ("s3a://bucket/2024/10/15", "s3a://bucket/2024/10/15"),
        ("s3a://bucket/dt=2024-10-15/country=PL", "s3a://bucket/dt=2024-10-15"),
        ("s3a://bucket", "s3a://bucket/"),
        ("file:/", "file:/"),
    ],
)
def test_the_first_directory_is_never_trimmed(uri: str, root: str) -> None:
    assert split_dataset_root(uri)[0] == root


def test_root_is_a_clean_location() -> None:
    uri = f"s3a://{ACCESS_KEY}:{SECRET_KEY}@bucket//sales/country=PL/?X-Amz-Signature={SIGNATURE}"
    assert split_dataset_root(uri) == ("s3a://bucket/sales", ("country=PL",))


@pytest.mark.parametrize(
    ("rules", "root", "trimmed"),
    [
        (DEFAULT_TRIM_RULES, "file:/t", ("2024-10", "country=PL", "2024", "10", "15", "20241015")),
        (TrimRules(dates=False), "file:/t/2024-10/country=PL/2024/10/15/20241015", ()),
        (
            TrimRules(date_directories=False),
            "file:/t/2024-10/country=PL/2024/10/15",
            ("20241015",),
        ),
        (
            TrimRules(key_value=False),
            "file:/t/2024-10/country=PL",
            ("2024", "10", "15", "20241015"),
        ),
        (
            TrimRules(year_months=False),
            "file:/t/2024-10",
            ("country=PL", "2024", "10", "15", "20241015"),
        ),
        (
            TrimRules(key_value=False, dates=False, year_months=False, date_directories=False),
            "file:/t/2024-10/country=PL/2024/10/15/20241015",
            (),
        ),
    ],
)
def test_rules_can_be_switched_off(rules: TrimRules, root: str, trimmed: tuple[str, ...]) -> None:
    uri = "file:/t/2024-10/country=PL/2024/10/15/20241015"
    assert split_dataset_root(uri, rules) == (root, trimmed)


def test_extra_patterns_trim_whole_directories() -> None:
    rules = TrimRules(extra_patterns=(r"hour_[0-9]{2}", r"run-\d+"))
    assert split_dataset_root("file:/logs/app/2024/10/15/hour_13/run-7", rules) == (
        "file:/logs/app",
        ("2024", "10", "15", "hour_13", "run-7"),
    )
    # A pattern must match the whole directory name.
    assert split_dataset_root("file:/logs/app/hour_13x", rules) == ("file:/logs/app/hour_13x", ())


def test_extra_patterns_alone() -> None:
    rules = TrimRules(
        key_value=False,
        dates=False,
        year_months=False,
        date_directories=False,
        extra_patterns=(r"v[0-9]+",),
    )
    assert split_dataset_root("s3a://bucket/model/v2/v3", rules) == (
        "s3a://bucket/model",
        ("v2", "v3"),
    )
    assert split_dataset_root("s3a://bucket/model/country=PL", rules) == (
        "s3a://bucket/model/country=PL",
        (),
    )


def test_trim_rules_are_values() -> None:
    rules = TrimRules(extra_patterns=[r"v[0-9]+"])  # type: ignore[arg-type]
    assert rules.extra_patterns == ("v[0-9]+",)
    assert rules == TrimRules(extra_patterns=("v[0-9]+",))
    assert hash(rules) == hash(TrimRules(extra_patterns=("v[0-9]+",)))
    assert TrimRules() == DEFAULT_TRIM_RULES
    assert dataclasses.replace(rules, dates=False).dates is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.dates = False  # type: ignore[misc]


def test_trim_rules_reject_a_single_string() -> None:
    with pytest.raises(TypeError, match=r"not a single string; write extra_patterns=\('v2',\)"):
        TrimRules(extra_patterns="v2")  # type: ignore[arg-type]


def test_trim_rules_reject_an_invalid_pattern() -> None:
    with pytest.raises(ValueError, match=r"extra_patterns\[1\] 'v\[' is not a valid regular"):
        TrimRules(extra_patterns=("ok", "v["))


def test_trim_rules_reject_a_pattern_that_is_not_a_string() -> None:
    with pytest.raises(TypeError, match=r"extra_patterns\[0\] must be a regular expression"):
        TrimRules(extra_patterns=(3,))  # type: ignore[arg-type]


# --- glob_root -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "root"),
    [
        ("/sales/business_date=*/country=FR", "file:/sales"),
        ("file:/sales/business_date=2024-10-1?/country=FR", "file:/sales"),
        ("s3a://bucket/logs/2024/*/01", "s3a://bucket/logs/2024"),
        ("s3a://bucket/logs/2024/10/part-*.parquet", "s3a://bucket/logs/2024/10"),
        ("s3a://bucket/logs/2024/1[0-2]/01", "s3a://bucket/logs/2024"),
        ("s3a://bucket/logs/2024/{09,10}/01", "s3a://bucket/logs/2024"),
        ("s3a://bucket/logs/{2023/12,2024/01}/01", "s3a://bucket/logs"),
        ("s3a://bucket/*", "s3a://bucket/"),
        ("s3a://bucket/*/sales", "s3a://bucket/"),
        ("file:/*", "file:/"),
        (
            "hdfs://namenode:8020/warehouse/sales/dt=2024-10-*",
            "hdfs://namenode:8020/warehouse/sales",
        ),
        # Escaped wildcards before the first real one are literal names, written unescaped.
        ("file:/data/a\\*b/c/*.csv", "file:/data/a*b/c"),
        ("file:/data/\\{x\\}/\\[y\\]/*", "file:/data/{x}/[y]"),
        ("file:/data/a\\\\b/*", "file:/data/a\\b"),
        # A directory whose name holds "?" or "#" ends the root: a location cannot carry them.
        ("file:/data/what\\?/x/*", "file:/data"),
        ("file:/data/no#1/x/*", "file:/data"),
        # A "?" is a wildcard, so a URL with a query string yields its parent directory.
        (f"https://host/sales/data.csv?X-Amz-Signature={SIGNATURE}", "https://host/sales"),
        (f"s3a://{ACCESS_KEY}:{SECRET_KEY}@bucket/sales/*", "s3a://bucket/sales"),
        (f"s3a://{ACCESS_KEY}:{SECRET_WITH_SLASH}@bucket/sales/*", "s3a://bucket/sales"),
        # Brackets in an authority are an IPv6 address, not a wildcard.
        ("hdfs://[2001:db8::1]:8020/sales/*", "hdfs://[2001:db8::1]:8020/sales"),
    ],
)
def test_glob_root_is_the_directory_above_the_first_wildcard(uri: str, root: str) -> None:
    assert glob_root(uri) == root


@pytest.mark.parametrize(
    "uri",
    [
        "s3a://bucket/logs/2024/10/01",
        "file:/data/a\\*b",
        "file:/data/\\{x,y\\}/\\?",
        "file:/data/closing]and}braces,only",
        "hdfs://[2001:db8::1]:8020/sales",
    ],
)
def test_no_wildcard_no_glob_root(uri: str) -> None:
    assert glob_root(uri) is None


def test_glob_root_then_dataset_root() -> None:
    root = glob_root("s3a://bucket/sales/business_date=2024-10-*/country=FR")
    assert root == "s3a://bucket/sales"
    assert split_dataset_root("s3a://bucket/sales/2024/10/*/part-*.parquet") == (
        "s3a://bucket/sales/2024/10/*/part-*.parquet",
        (),
    )
    assert split_dataset_root(str(glob_root("s3a://bucket/sales/2024/10/*/x"))) == (
        "s3a://bucket/sales",
        ("2024", "10"),
    )


def test_a_lone_trailing_backslash_is_rejected() -> None:
    with pytest.raises(ValueError, match="ends with a lone backslash"):
        glob_root("file:/data/x\\")


# --- partition_dimensions ------------------------------------------------------------------------


def test_partition_dimensions_in_order() -> None:
    dimensions = partition_dimensions(["business_date=2024-10-15", "country=PL"])
    assert dimensions == {"business_date": "2024-10-15", "country": "PL"}
    assert list(dimensions) == ["business_date", "country"]


@pytest.mark.parametrize(
    ("segment", "column", "value"),
    [
        ("ts=2024-10-15 13%3A00%3A00", "ts", "2024-10-15 13:00:00"),
        ("path=a%2Fb", "path", "a/b"),
        ("pct=100%25", "pct", "100%"),
        ("eq=a%3Db", "eq", "a=b"),
        ("q=why%3F%23%5B%5D%7B%5E%2A%5C%22%27", "q", "why?#[]{^*\\\"'"),
        ("lower=%3a%2f", "lower", ":/"),  # Spark writes upper case but reads either
        ("a%3Ab=1", "a:b", "1"),  # the column name is unescaped too
        ("x=50%", "x", "50%"),  # too short to be an escape
        ("x=%4", "x", "%4"),
        ("x=%zz", "x", "%zz"),
        ("x=%%41", "x", "%A"),
        ("x=a=b", "x", "a=b"),  # split at the first "="
        ("x=%-1", "x", "%-1"),  # Integer.parseInt("-1", 16) is negative: kept as written
        ("x=%-0", "x", "\x00"),  # ... and "-0" is zero: decoded, as Spark does
        ("x=%+F", "x", "\x0f"),  # Integer.parseInt accepts a plus sign
        ("x=%\u0663A", "x", ":"),  # ... and any Unicode decimal digit (ARABIC-INDIC THREE)
        ("x=%\uff21\uff11", "x", "\xa1"),  # ... and full-width letters and digits
        ("x=%C3%A9", "x", "\xc3\xa9"),  # one character per escape, never UTF-8 decoding
        ("x=caf\u00e9", "x", "caf\u00e9"),
        ("x=__HIVE_DEFAULT_PARTITION__", "x", None),
        ("x=%5F_HIVE_DEFAULT_PARTITION__", "x", "__HIVE_DEFAULT_PARTITION__"),  # escaped: a value
        ("x=__hive_default_partition__", "x", "__hive_default_partition__"),
    ],
)
def test_partition_values_are_unescaped_as_spark_does(
    segment: str, column: str, value: str | None
) -> None:
    assert partition_dimensions([segment]) == {column: value}


def test_trimmed_partition_directories_give_dimensions() -> None:
    root, trimmed = split_dataset_root(
        "s3a://bucket/sales/business_date=2024-10-15/country=__HIVE_DEFAULT_PARTITION__"
    )
    assert root == "s3a://bucket/sales"
    assert partition_dimensions(trimmed) == {"business_date": "2024-10-15", "country": None}


@pytest.mark.parametrize(
    ("segments", "message"),
    [
        (
            ["business_date=2024-10-15", "2024"],
            "'2024' is not a partition directory: it has no '='",
        ),
        (["=PL"], "empty column name"),
        (["country="], "empty value; Spark writes an empty or null value as __HIVE_DEFAULT"),
        (["country=PL", "country=DE"], "'country' appears twice"),
        (["a%3Db=1", "a%3db=2"], "'a=b' appears twice"),
        (["business_date=2024-10-15/country=PL"], "holds more than one directory"),
    ],
)
def test_partition_dimensions_reject_what_is_not_a_partition(
    segments: list[str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        partition_dimensions(segments)


def test_partition_dimensions_reject_a_single_string() -> None:
    with pytest.raises(TypeError, match="not a single string; split it on '/'"):
        partition_dimensions("business_date=2024-10-15/country=PL")


def test_no_directories_no_dimensions() -> None:
    assert partition_dimensions(()) == {}


# Expected names as the OpenLineage Java client gives them (which openlineage-spark uses), from
# its tests: client/java/src/test/java/io/openlineage/client/utils/filesystem/
# FilesystemDatasetUtilsTestFor{Local,S3,HDFS,GCS,ABFSS}.java. If one of these changes, lineage
# captured here stops joining up with lineage openlineage-spark captured for the same data.
OPENLINEAGE_JAVA_NAMES = [
    ("/", ("file", "/")),
    ("file:/warehouse/location", ("file", "/warehouse/location")),
    ("file:/warehouse/location/", ("file", "/warehouse/location")),
    ("file:///warehouse/location", ("file", "/warehouse/location")),
    ("s3://bucket", ("s3://bucket", "/")),
    ("s3://bucket/warehouse", ("s3://bucket", "warehouse")),
    ("s3://bucket/warehouse/location/", ("s3://bucket", "warehouse/location")),
    ("s3a://bucket/warehouse/location/", ("s3://bucket", "warehouse/location")),
    ("s3n://bucket/warehouse/location/", ("s3://bucket", "warehouse/location")),
    ("hdfs://namenode:8020", ("hdfs://namenode:8020", "/")),
    ("hdfs://namenode:8020/warehouse/location/", ("hdfs://namenode:8020", "/warehouse/location")),
    ("gs://bucket", ("gs://bucket", "/")),
    ("gs://bucket/warehouse/location/", ("gs://bucket", "warehouse/location")),
    (
        "abfss://container@account.dfs.core.windows.net",
        ("abfss://container@account.dfs.core.windows.net", "/"),
    ),
    (
        "abfss://container@account.dfs.core.windows.net/warehouse/location/",
        ("abfss://container@account.dfs.core.windows.net", "warehouse/location"),
    ),
]


@pytest.mark.parametrize(("location", "expected"), OPENLINEAGE_JAVA_NAMES)
def test_names_are_those_openlineage_spark_gives(location: str, expected: tuple[str, str]) -> None:
    assert dataset_identity(location) == expected
