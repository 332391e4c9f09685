"""Lineage settings without Spark: precedence, invalid values, names, parent and error facets."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import pytest

from openlineage_subset import dump, validate
from openlineage_subset.producer import _excepthook
from openlineage_subset.producer._events import (
    JobRef,
    job_name,
    normalize_name,
    parent_facet,
    python_error_facet,
    run_event,
)
from openlineage_subset.producer._settings import lineage_settings

PARENT_ID = "0190f4a7-1c2b-7d3e-8f4a-5b6c7d8e9f00"
ROOT_ID = "0190f4a7-0000-7000-8000-000000000001"
OTHER_ID = "0190f4a7-0000-7000-8000-000000000002"
PRODUCER = "https://example.com/tests"


def conf_run(kind: str, namespace: str, name: str, run_id: str) -> dict[str, str]:
    """``spark.openlineage.{kind}JobNamespace`` / ``JobName`` / ``RunId`` entries."""
    return {
        f"spark.openlineage.{kind}JobNamespace": namespace,
        f"spark.openlineage.{kind}JobName": name,
        f"spark.openlineage.{kind}RunId": run_id,
    }


# --- NameNormalizer ------------------------------------------------------------------------------

# Input and output pairs of openlineage-spark's own test of the normalizer its job names use:
# OpenLineage/OpenLineage, integration/spark/shared/src/test/java/io/openlineage/spark/api/
# naming/NameNormalizerTest.java (its null input has no Python counterpart).
NAME_NORMALIZER_PAIRS = [
    ("", ""),
    ("word", "word"),
    ("@ more than one     words !", "more_than_one_words"),
    ("with some Capitalized WORDS", "with_some_capitalized_words"),
    ("this (includes some) parenthesis", "this_includes_some_parenthesis"),
    ("this - on the other hand -- has hyphens", "this_on_the_other_hand_has_hyphens"),
    (
        "now we have (a complex) name - with hyphens too",
        "now_we_have_a_complex_name_with_hyphens_too",
    ),
    ("in glue/aws we can have slashes", "in_glue_aws_we_can_have_slashes"),
    (
        "theNamesLikeThisShouldBeSeparated - are they?",
        "the_names_like_this_should_be_separated_are_they",
    ),
    ("testXMLTest", "test_xml_test"),
    ("testXMLtest", "test_xm_ltest"),
    ("test XML test", "test_xml_test"),
    ("foreignLetters ąśé•¶€ are supported", "foreign_letters_ase_are_supported"),
    ("but to a degree 这是一个例子", "but_to_a_degree"),
    ("323digits123Should45BE_ALSO34 fine89", "323digits123_should45_be_also34_fine89"),
    ("A Test Application", "a_test_application"),
    ("MyTestApplication", "my_test_application"),
    ("MyXMLBasedApplication", "my_xml_based_application"),
    ("JDBCRelationApplication", "jdbc_relation_application"),
    ("Test With a Single LetterBetweenWords", "test_with_a_single_letter_between_words"),
    ("c9acd38e_71d4_4a61_89d5_fd4ff842bf79_0", "c9acd38e_71d4_4a61_89d5_fd4ff842bf79_0"),
]


@pytest.mark.parametrize(("text", "expected"), NAME_NORMALIZER_PAIRS)
def test_names_are_normalized_as_openlineage_spark_does(text: str, expected: str) -> None:
    assert normalize_name(text) == expected


def test_word_characters_are_ascii_ones_as_in_java() -> None:
    # Java's \w is ASCII-only: a leading Arabic-Indic digit is trimmed like punctuation.
    assert normalize_name("٣Apps") == "apps"


def test_action_job_names_use_the_normalizer_for_every_part() -> None:
    outputs = [{"namespace": "file", "name": "/lake/dailyXMLFeed"}]
    assert job_name("Nightly Orders", "saveAsTable", outputs) == (
        "nightly_orders.save_as_table.lake_daily_xml_feed"
    )
    assert job_name("这是", "count", []) == "unknown.count.nothing"


# --- precedence ----------------------------------------------------------------------------------

PLACES = ("argument", "conf", "environment")
PLACE_SETS = [tuple(places) for size in range(4) for places in itertools.combinations(PLACES, size)]


@pytest.mark.parametrize("given", PLACE_SETS, ids=lambda given: "+".join(given) or "none")
def test_namespace_precedence(given: tuple[str, ...]) -> None:
    settings = lineage_settings(
        "app",
        {"spark.openlineage.namespace": "from_conf"} if "conf" in given else {},
        {"OPENLINEAGE_NAMESPACE": "from_environment"} if "environment" in given else {},
        namespace="from_argument" if "argument" in given else None,
    )
    winner = next((place for place in PLACES if place in given), None)
    assert settings.namespace == (f"from_{winner}" if winner else "default")
    assert settings.ignored == ()


@pytest.mark.parametrize("given", PLACE_SETS, ids=lambda given: "+".join(given) or "none")
def test_parent_precedence(given: tuple[str, ...]) -> None:
    settings = lineage_settings(
        "app",
        conf_run("parent", "conf_ns", "conf.job", PARENT_ID) if "conf" in given else {},
        {"OPENLINEAGE_PARENT_ID": f"env_ns/env.job/{PARENT_ID}"} if "environment" in given else {},
        parent=f"arg_ns/arg.job/{PARENT_ID}" if "argument" in given else None,
    )
    expected = {
        "argument": JobRef("arg_ns", "arg.job", PARENT_ID),
        "conf": JobRef("conf_ns", "conf.job", PARENT_ID),
        "environment": JobRef("env_ns", "env.job", PARENT_ID),
    }
    winner = next((place for place in PLACES if place in given), None)
    assert settings.parent == (expected[winner] if winner else None)
    assert settings.ignored == ()


def test_application_name_precedence_and_normalization() -> None:
    conf = {"spark.openlineage.appName": "Orders From Conf"}
    assert lineage_settings("Spark App", {}, {}).application_name == "spark_app"
    assert lineage_settings("Spark App", conf, {}).application_name == "orders_from_conf"
    named = lineage_settings("Spark App", conf, {}, app_name="NightlyOrders")
    assert named.application_name == "nightly_orders"
    assert named.sources["application_name"] == "enable(app_name=...)"
    assert lineage_settings("   ", {}, {}).application_name == "unknown"
    assert lineage_settings("这是", {}, {}).application_name == "unknown"


def test_blank_values_count_as_not_set() -> None:
    conf = {"spark.openlineage.namespace": "  ", **conf_run("parent", " ", "", "")}
    settings = lineage_settings(
        "app", conf, {"OPENLINEAGE_NAMESPACE": "etl", "OPENLINEAGE_PARENT_ID": ""}, namespace=""
    )
    assert (settings.namespace, settings.parent, settings.ignored) == ("etl", None, ())


def test_where_each_value_came_from() -> None:
    conf = {"spark.openlineage.applicationRunId": OTHER_ID, **conf_run("parent", "a", "b", ROOT_ID)}
    settings = lineage_settings(
        "app", conf, {"OPENLINEAGE_NAMESPACE": "etl", "OPENLINEAGE_PARENT_ID": f"x/y/{PARENT_ID}"}
    )
    assert settings.sources == {
        "namespace": "$OPENLINEAGE_NAMESPACE",
        "application_name": "spark.app.name",
        "application_run_id": "spark.openlineage.applicationRunId",
        "parent": "spark.openlineage.parentJob*",
        "root": "spark.openlineage.parentJob*",
    }


# --- parent, root and application run ------------------------------------------------------------


def test_the_root_parent_comes_from_the_same_place_as_the_parent() -> None:
    conf = {**conf_run("parent", "airflow", "dag.task", PARENT_ID)}
    conf.update(conf_run("rootParent", "airflow", "dag", ROOT_ID))
    environment = {"OPENLINEAGE_ROOT_PARENT_ID": f"other/root/{OTHER_ID}"}
    from_conf = lineage_settings("app", conf, environment)
    assert from_conf.parent == JobRef(
        "airflow", "dag.task", PARENT_ID, JobRef("airflow", "dag", ROOT_ID)
    )
    assert from_conf.root == JobRef("airflow", "dag", ROOT_ID)
    # An explicit parent is not combined with a root configured for another parent.
    explicit = lineage_settings("app", conf, environment, parent=f"ns/job/{OTHER_ID}")
    assert explicit.parent == JobRef("ns", "job", OTHER_ID)
    assert explicit.root == JobRef("ns", "job", OTHER_ID)
    both = lineage_settings(
        "app", {}, {}, parent=f"ns/job/{OTHER_ID}", root_parent=f"ns/top/{ROOT_ID}"
    )
    assert both.root == JobRef("ns", "top", ROOT_ID)


def test_environment_parent_and_root_in_dbt_form() -> None:
    environment = {
        "OPENLINEAGE_PARENT_ID": f"airflow/dag.task/{PARENT_ID.upper()}",
        "OPENLINEAGE_ROOT_PARENT_ID": f"airflow/dag/{ROOT_ID}",
    }
    settings = lineage_settings("app", {}, environment)
    assert settings.parent == JobRef(
        "airflow", "dag.task", PARENT_ID, JobRef("airflow", "dag", ROOT_ID)
    ), "the run id in its canonical (lower-case) form"


def test_the_application_run_and_its_root() -> None:
    alone = lineage_settings("My App", {}, {}).application("new-id")
    assert alone == JobRef("default", "my_app", "new-id", None)
    child = lineage_settings("My App", {}, {}, parent=f"a/b/{PARENT_ID}").application("new-id")
    assert child.root == JobRef("a", "b", PARENT_ID)
    conf = {
        "spark.openlineage.applicationRunId": OTHER_ID,
        **conf_run("parent", "a", "b", PARENT_ID),
        **conf_run("rootParent", "a", "top", ROOT_ID),
    }
    grandchild = lineage_settings("My App", conf, {}).application("new-id")
    assert (grandchild.run_id, grandchild.root) == (OTHER_ID, JobRef("a", "top", ROOT_ID))


# --- invalid settings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conf", "environment", "setting"),
    [
        (conf_run("parent", "airflow", "dag.task", "not-a-uuid"), {}, "parentRunId"),
        (
            {
                "spark.openlineage.parentJobName": "dag.task",
                "spark.openlineage.parentRunId": PARENT_ID,
            },
            {},
            "parentJobNamespace",
        ),
        ({}, {"OPENLINEAGE_PARENT_ID": "airflow/dag.task"}, "OPENLINEAGE_PARENT_ID"),
        ({}, {"OPENLINEAGE_PARENT_ID": f"airflow//{PARENT_ID}"}, "OPENLINEAGE_PARENT_ID"),
        ({}, {"OPENLINEAGE_PARENT_ID": "airflow/dag.task/42"}, "OPENLINEAGE_PARENT_ID"),
    ],
)
def test_an_invalid_parent_is_ignored_with_one_message(
    conf: dict[str, str], environment: dict[str, str], setting: str
) -> None:
    settings = lineage_settings("app", conf, environment)
    assert settings.parent is None
    (message,) = settings.ignored
    assert setting in message and "ignored" in message


def test_an_invalid_parent_lets_the_next_place_decide() -> None:
    conf = conf_run("parent", "airflow", "dag.task", "42")
    conf.update(conf_run("rootParent", "airflow", "dag", ROOT_ID))
    settings = lineage_settings("app", conf, {"OPENLINEAGE_PARENT_ID": f"env/job/{PARENT_ID}"})
    assert settings.parent == JobRef("env", "job", PARENT_ID)
    (message,) = settings.ignored
    assert "spark.openlineage.parentRunId is '42'" in message
    assert "spark.openlineage.rootParentJob*" in message, "its root goes with it"


def test_an_invalid_root_leaves_the_parent_as_the_root() -> None:
    conf = conf_run("parent", "airflow", "dag.task", PARENT_ID)
    conf["spark.openlineage.rootParentRunId"] = ROOT_ID  # without its job namespace and name
    settings = lineage_settings("app", conf, {})
    assert settings.parent == JobRef("airflow", "dag.task", PARENT_ID)
    assert settings.root == settings.parent
    (message,) = settings.ignored
    assert "spark.openlineage.rootParentJobNamespace" in message
    assert "spark.openlineage.rootParentJobName" in message


def test_a_root_without_a_parent_is_ignored() -> None:
    settings = lineage_settings("app", conf_run("rootParent", "a", "dag", ROOT_ID), {})
    assert settings.parent is None
    (message,) = settings.ignored
    assert "spark.openlineage.rootParentJob*" in message
    assert "spark.openlineage.parentJob*" in message


def test_an_invalid_application_run_id_is_ignored() -> None:
    settings = lineage_settings("app", {"spark.openlineage.applicationRunId": "run-7"}, {})
    assert settings.application_run_id is None
    assert settings.application("fresh").run_id == "fresh"
    (message,) = settings.ignored
    assert "spark.openlineage.applicationRunId is 'run-7'" in message


@pytest.mark.parametrize(
    ("arguments", "error", "words"),
    [
        ({"parent": "airflow/dag.task"}, ValueError, "enable(parent=...)"),
        ({"parent": "airflow/dag.task/42"}, ValueError, "not a UUID"),
        ({"root_parent": f"a/b/{ROOT_ID}"}, ValueError, "enable(parent=...)"),
        ({"namespace": 7}, TypeError, "enable(namespace=...) takes a str"),
        ({"app_name": b"app"}, TypeError, "enable(app_name=...) takes a str"),
    ],
)
def test_invalid_arguments_raise(arguments: dict[str, Any], error: type, words: str) -> None:
    with pytest.raises(error) as raised:
        lineage_settings("app", {}, {}, **arguments)
    assert words in str(raised.value)


# --- facets --------------------------------------------------------------------------------------


def test_parent_facet_names_the_root_or_the_parent_itself() -> None:
    application = JobRef("lake", "orders", OTHER_ID)
    assert dump(parent_facet(application, PRODUCER))["root"] == {
        "run": {"runId": OTHER_ID},
        "job": {"namespace": "lake", "name": "orders"},
    }
    under = JobRef("lake", "orders", OTHER_ID, JobRef("airflow", "dag", ROOT_ID))
    facet = parent_facet(under, PRODUCER)
    shown = dump(facet)
    assert (shown["run"], shown["job"]) == (
        {"runId": OTHER_ID},
        {"namespace": "lake", "name": "orders"},
    )
    assert shown["root"] == {
        "run": {"runId": ROOT_ID},
        "job": {"namespace": "airflow", "name": "dag"},
    }
    event = run_event(
        "START",
        event_time="2024-10-15T00:00:00.000Z",
        job=JobRef("lake", "orders.count.x", PARENT_ID),
        producer=PRODUCER,
        run_facets={"parent": facet},
    )
    assert validate(event, strict=True) == []


def _fail_loading() -> None:
    raise RuntimeError("orders feed is empty")


def test_python_error_facet_has_the_message_and_the_traceback() -> None:
    try:
        _fail_loading()
    except RuntimeError as error:
        facet = dump(python_error_facet(error, PRODUCER))
    assert facet["message"] == "RuntimeError: orders feed is empty"
    assert facet["programmingLanguage"] == "PYTHON"
    assert facet["stackTrace"].startswith("Traceback (most recent call last):")
    assert "in _fail_loading" in facet["stackTrace"]


# --- uncaught exceptions -------------------------------------------------------------------------


class _Capture:
    failure: BaseException | None = None


def test_an_uncaught_exception_marks_open_captures_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    printed: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, error, trace: printed.append(error))
    monkeypatch.setattr(_excepthook, "_installed", type(_excepthook._installed)())
    monkeypatch.setattr(_excepthook, "_open", {})
    open_capture, closed_capture, failed_capture = _Capture(), _Capture(), _Capture()
    earlier = ValueError("first")
    failed_capture.failure = earlier
    for capture in (open_capture, closed_capture, failed_capture):
        _excepthook.watch(capture)
    _excepthook.forget(closed_capture)
    error = RuntimeError("boom")
    sys.excepthook(RuntimeError, error, None)
    assert printed == [error], "the hook that was there before prints it, once"
    assert open_capture.failure is error
    assert closed_capture.failure is None
    assert failed_capture.failure is earlier


# --- Names events can carry --------------------------------------------------------------------

HUGE = 1_100_000


@pytest.mark.parametrize(
    ("arguments", "conf", "environ"),
    [
        ({"app_name": "A" * HUGE}, {}, {}),
        ({}, {"spark.openlineage.appName": "Daily Sales " * 100_000}, {}),
        ({}, {}, {}),  # the Spark app name itself
    ],
)
def test_an_over_long_application_name_is_cut_with_a_marker_and_said(
    arguments: dict[str, str], conf: dict[str, str], environ: dict[str, str]
) -> None:
    settings = lineage_settings("B" * HUGE, conf, environ, **arguments)
    name = settings.application_name
    assert len(name) < 2_000
    assert name.endswith("_cut")
    assert normalize_name(name) == name, "the actions' job names start with it unchanged"
    (message,) = settings.ignored
    assert "cut" in message and len(message) < 1_000


def test_an_over_long_namespace_is_cut_with_a_marker_and_said() -> None:
    settings = lineage_settings("app", {}, {"OPENLINEAGE_NAMESPACE": "n" * HUGE})
    assert len(settings.namespace) < 2_000 and settings.namespace.endswith("_cut")
    (message,) = settings.ignored
    assert "$OPENLINEAGE_NAMESPACE" in message


def test_an_over_long_parent_run_is_refused_or_ignored_never_carried() -> None:
    path = f"airflow/{'d' * HUGE}/{PARENT_ID}"
    with pytest.raises(ValueError, match="characters") as refused:
        lineage_settings("app", {}, {}, parent=path)
    assert len(str(refused.value)) < 1_000
    from_environment = lineage_settings("app", {}, {"OPENLINEAGE_PARENT_ID": path})
    from_conf = lineage_settings("app", conf_run("parent", "ns" * HUGE, "job", PARENT_ID), {})
    for settings in (from_environment, from_conf):
        assert settings.parent is None
        (message,) = settings.ignored
        assert "ignored" in message and len(message) < 1_000


def test_the_longest_names_taken_leave_an_event_most_of_its_budget() -> None:
    """Names at the limit, of characters JSON escapes longest, in every place an event names
    one (job, parent, root): the event stays within half the smallest budget."""
    from openlineage_subset.producer._budget import MIN_EVENT_BYTES
    from openlineage_subset.producer._condense import json_size

    wide = "\U0001f600" * HUGE
    root = f"{wide}/{wide}/{ROOT_ID}"
    parent = f"{wide}/{wide}/{PARENT_ID}"
    environ = {"OPENLINEAGE_PARENT_ID": parent, "OPENLINEAGE_ROOT_PARENT_ID": root}
    settings = lineage_settings("app" * HUGE, {}, environ, namespace=wide)
    assert settings.parent is None, "parents over the limit are ignored"
    longest = "\U0001f600" * 512
    at_limit = f"{longest}/{longest}/{PARENT_ID}"
    settings = lineage_settings(
        "app" * HUGE, {}, {"OPENLINEAGE_PARENT_ID": at_limit}, namespace=wide
    )
    assert settings.parent is not None
    application = settings.application(OTHER_ID)
    event = run_event(
        "START",
        event_time="2024-10-15T00:00:00.000Z",
        job=JobRef(settings.namespace, job_name(application.name, "count", []), OTHER_ID),
        producer=PRODUCER,
        run_facets={"parent": parent_facet(application, PRODUCER)},
    )
    assert json_size(event) <= MIN_EVENT_BYTES // 2
