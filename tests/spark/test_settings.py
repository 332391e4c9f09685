"""Lineage settings and the application run's end, on real Spark.

``enable()`` arguments and live conf on the test session, ``ol-subset run`` in-process on the
test session, and one script in its own Spark (configured through the builder, as users of
openlineage-spark do) that fails.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from openlineage_subset import validate
from openlineage_subset.cli import run_script
from openlineage_subset.spark import LineageSettingsWarning, enable
from tests.spark.conftest import Lake, MemoryTransport, ol_subset

pytestmark = pytest.mark.spark

PARENT_ID = "0190f4a7-1c2b-7d3e-8f4a-5b6c7d8e9f00"
ROOT_ID = "0190f4a7-0000-7000-8000-000000000001"
APPLICATION_ID = "0190f4a7-0000-7000-8000-000000000002"
SETTINGS_VARIABLES = (
    "OPENLINEAGE_NAMESPACE",
    "OPENLINEAGE_PARENT_ID",
    "OPENLINEAGE_ROOT_PARENT_ID",
)


@pytest.fixture(autouse=True)
def no_lineage_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SETTINGS_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def live_conf(spark: SparkSession) -> Iterator[Any]:
    """The running SparkContext's own conf, for ``spark.openlineage.*`` keys a test sets.

    Users give these to the builder or ``spark-submit --conf``; setting them on the live conf
    reaches the same place without starting another Spark. Removed afterwards.
    """
    conf = spark.sparkContext._jsc.sc().conf()
    before = {entry._1() for entry in conf.getAllWithPrefix("spark.openlineage.")}
    yield conf
    for entry in conf.getAllWithPrefix("spark.openlineage."):
        if entry._1() not in before:
            conf.remove("spark.openlineage." + entry._1())


def _by_run(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        runs.setdefault(event["run"]["runId"], []).append(event)
    return runs


def _parent_and_root(event: dict[str, Any]) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """(namespace, name, run id) of the parent and of the root in an event's parent facet."""
    facet = event["run"]["facets"]["parent"]
    parent = (facet["job"]["namespace"], facet["job"]["name"], facet["run"]["runId"])
    root = facet["root"]
    return parent, (root["job"]["namespace"], root["job"]["name"], root["run"]["runId"])


def test_enable_arguments_make_the_application_a_child_of_the_parent(
    spark: SparkSession, lake: Lake, tmp_path: Path
) -> None:
    transport = MemoryTransport()
    handle = enable(
        spark,
        transport=transport,
        quarantine=tmp_path / "q.jsonl",
        namespace="lake",
        app_name="Nightly Orders",
        parent=f"airflow/nightly.load_orders/{PARENT_ID}",
        root_parent=f"airflow/nightly/{ROOT_ID}",
    )
    spark.read.parquet(str(lake.sales)).where("country = 'PL'").count()
    handle.close()
    assert all(validate(event, strict=True) == [] for event in transport.events)
    application = handle.application.run_id
    runs = _by_run(transport.events)
    application_events = runs.pop(application)
    assert [e["eventType"] for e in application_events] == ["START", "COMPLETE"]
    for event in application_events:
        assert event["job"] == {"namespace": "lake", "name": "nightly_orders"}
        assert _parent_and_root(event) == (
            ("airflow", "nightly.load_orders", PARENT_ID),
            ("airflow", "nightly", ROOT_ID),
        )
    ((start, complete),) = runs.values()
    assert complete["job"]["name"].startswith("nightly_orders.count.")
    for event in (start, complete):
        assert _parent_and_root(event) == (
            ("lake", "nightly_orders", application),
            ("airflow", "nightly", ROOT_ID),
        )


def test_without_a_parent_the_application_is_the_root(
    spark: SparkSession, lake: Lake, tmp_path: Path
) -> None:
    transport = MemoryTransport()
    handle = enable(spark, transport=transport, quarantine=tmp_path / "q.jsonl")
    spark.read.parquet(str(lake.sales)).where("country = 'DE'").count()
    handle.close()
    runs = _by_run(transport.events)
    application = handle.application
    assert application.name == "openlineage_subset_tests", "spark.app.name, normalized"
    assert all("parent" not in e["run"]["facets"] for e in runs.pop(application.run_id))
    ((start, complete),) = runs.values()
    identity = (application.namespace, application.name, application.run_id)
    assert _parent_and_root(start) == _parent_and_root(complete) == (identity, identity)


def test_spark_conf_wins_over_the_environment_and_loses_to_arguments(
    spark: SparkSession, live_conf: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENLINEAGE_NAMESPACE", "from_environment")
    monkeypatch.setenv("OPENLINEAGE_PARENT_ID", f"env/env.job/{ROOT_ID}")
    live_conf.set("spark.openlineage.namespace", "from_conf")
    live_conf.set("spark.openlineage.appName", "ConfApp")
    live_conf.set("spark.openlineage.applicationRunId", APPLICATION_ID)
    live_conf.set("spark.openlineage.parentJobNamespace", "airflow")
    live_conf.set("spark.openlineage.parentJobName", "dag.task")
    live_conf.set("spark.openlineage.parentRunId", PARENT_ID)
    from_conf = enable(spark, transport=MemoryTransport(), quarantine=tmp_path / "q.jsonl")
    from_conf.close()
    assert (from_conf.namespace, from_conf.application.name) == ("from_conf", "conf_app")
    assert from_conf.application.run_id == APPLICATION_ID
    assert from_conf.parent is not None
    assert (from_conf.parent.namespace, from_conf.parent.run_id) == ("airflow", PARENT_ID)
    explicit = enable(
        spark,
        transport=MemoryTransport(),
        quarantine=tmp_path / "q.jsonl",
        namespace="from_argument",
        app_name="Argument App",
    )
    explicit.close()
    assert (explicit.namespace, explicit.application.name) == ("from_argument", "argument_app")


def test_invalid_conf_is_ignored_with_a_warning(
    spark: SparkSession, live_conf: Any, tmp_path: Path
) -> None:
    live_conf.set("spark.openlineage.parentJobName", "dag.task")
    live_conf.set("spark.openlineage.parentRunId", "not-a-uuid")
    with pytest.warns(LineageSettingsWarning, match=r"spark\.openlineage\.parentJobNamespace"):
        handle = enable(spark, transport=MemoryTransport(), quarantine=tmp_path / "q.jsonl")
    handle.close()
    assert handle.parent is None


def _fail_loading() -> None:
    raise RuntimeError("orders feed is empty")


def test_close_with_an_error_ends_the_application_with_fail(
    spark: SparkSession, tmp_path: Path
) -> None:
    transport = MemoryTransport()
    handle = enable(spark, transport=transport, quarantine=tmp_path / "q.jsonl")
    try:
        _fail_loading()
    except RuntimeError as error:
        handle.close(error=error)
    start, fail = transport.events
    assert (start["eventType"], fail["eventType"]) == ("START", "FAIL")
    facet = fail["run"]["facets"]["errorMessage"]
    assert facet["message"] == "RuntimeError: orders feed is empty"
    assert facet["programmingLanguage"] == "PYTHON"
    assert "in _fail_loading" in facet["stackTrace"]
    assert validate(fail, strict=True) == []


def test_an_uncaught_exception_fails_the_open_applications(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transport = MemoryTransport()
    handle = enable(spark, transport=transport, quarantine=tmp_path / "q.jsonl")
    error = RuntimeError("the program ends here")
    sys.excepthook(RuntimeError, error, None)  # what Python calls for an uncaught exception
    assert "RuntimeError: the program ends here" in capsys.readouterr().err, "still printed"
    handle.close()  # as atexit does
    assert [e["eventType"] for e in transport.events] == ["START", "FAIL"]
    message = transport.events[-1]["run"]["facets"]["errorMessage"]["message"]
    assert message == "RuntimeError: the program ends here"


# --- ol-subset run, in this process (the script gets the test session) ---------------------------

IN_PROCESS_SCRIPT = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
spark.read.parquet(sys.argv[1]).where("country = 'FR'").count()
{ending}
"""


@dataclass(frozen=True)
class Ending:
    """The script's last line, and how ``ol-subset run`` and the application run end."""

    line: str
    status: int
    last_event: str
    message: str | None = None


@pytest.mark.parametrize(
    "ending",
    [
        Ending("", 0, "COMPLETE"),
        Ending("sys.exit(0)", 0, "COMPLETE"),
        Ending("sys.exit(3)", 3, "FAIL", "SystemExit: 3"),
        Ending("sys.exit('no orders')", 1, "FAIL", "SystemExit: no orders"),
        Ending("raise KeyError('FR')", 1, "FAIL", "KeyError: 'FR'"),
    ],
    ids=lambda ending: ending.line or "returns",
)
def test_run_script_ends_the_application_as_the_script_ends(
    spark: SparkSession,
    lake: Lake,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    ending: Ending,
) -> None:
    script = tmp_path / "job.py"
    script.write_text(IN_PROCESS_SCRIPT.format(ending=ending.line))
    output = tmp_path / "events.jsonl"
    status = run_script(str(script), [str(lake.sales)], output=str(output), namespace=None)
    assert status == ending.status
    events = [json.loads(line) for line in output.read_text().splitlines()]
    application = [e for e in events if e["job"]["name"] == "openlineage_subset_tests"]
    assert [e["eventType"] for e in application] == ["START", ending.last_event]
    assert events[-1] is application[-1], "after the action runs"
    assert len(events) == 4, "the action's START and COMPLETE are kept"
    if ending.message is not None:
        assert application[-1]["run"]["facets"]["errorMessage"]["message"] == ending.message
    if ending.line.startswith("raise"):
        printed = capsys.readouterr().err
        line = IN_PROCESS_SCRIPT.splitlines().index("{ending}") + 1
        assert f'File "{script}", line {line}, in <module>' in printed
        assert "runpy" not in printed, "the traceback starts at the script, as Python's would"


# --- a script configured through the builder, failing, in its own Spark -------------------------

FAILING_SCRIPT = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession

    def check_orders(count):
        if count < 100:
            raise RuntimeError(f"orders feed is too small: {count} rows")

    out, parent_id, root_id, application_id = sys.argv[1:]
    spark = (
        SparkSession.builder.master("local[1]").appName("Nightly Orders")
        .config("spark.ui.enabled", "false")
        .config("spark.openlineage.namespace", "lake")
        .config("spark.openlineage.parentJobNamespace", "airflow")
        .config("spark.openlineage.parentJobName", "nightly.load_orders")
        .config("spark.openlineage.parentRunId", parent_id)
        .config("spark.openlineage.rootParentJobNamespace", "airflow")
        .config("spark.openlineage.rootParentJobName", "nightly")
        .config("spark.openlineage.rootParentRunId", root_id)
        .config("spark.openlineage.applicationRunId", application_id)
        .getOrCreate()
    )
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id int, part string")
    rows.write.partitionBy("part").parquet(out)
    check_orders(spark.read.parquet(out).count())
    """
)


@dataclass(frozen=True)
class Finished:
    script: Path
    status: int
    stderr: str
    events: list[dict[str, Any]]


@pytest.fixture(scope="module")
def failing_script(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    work = tmp_path_factory.mktemp("failing_script")
    script = work / "nightly_orders.py"
    script.write_text(FAILING_SCRIPT)
    events_file = work / "events.jsonl"
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENLINEAGE", "OL_SUBSET"))
    }
    # Spark conf wins over these.
    environment["OPENLINEAGE_NAMESPACE"] = "from_environment"
    environment["OPENLINEAGE_PARENT_ID"] = f"env/env.job/{APPLICATION_ID}"
    done = ol_subset(
        "run",
        "--output",
        str(events_file),
        str(script),
        str(work / "out"),
        PARENT_ID,
        ROOT_ID,
        APPLICATION_ID,
        cwd=work,
        env=environment,
    )
    lines = events_file.read_text().splitlines() if events_file.is_file() else []
    return Finished(script, done.returncode, done.stderr, [json.loads(line) for line in lines])


def test_a_failing_script_exits_1_with_its_traceback(failing_script: Finished) -> None:
    assert failing_script.status == 1, failing_script.stderr[-3000:]
    printed = failing_script.stderr
    assert "Traceback (most recent call last):" in printed
    line = FAILING_SCRIPT.splitlines().index("check_orders(spark.read.parquet(out).count())") + 1
    assert f'File "{failing_script.script}", line {line}, in <module>' in printed
    assert "in check_orders" in printed
    assert printed.rstrip().endswith("RuntimeError: orders feed is too small: 2 rows")
    assert "runpy" not in printed


def test_a_failing_script_ends_its_application_run_with_fail(failing_script: Finished) -> None:
    events = failing_script.events
    assert events, failing_script.stderr[-3000:]
    assert all(validate(event, strict=True) == [] for event in events)
    runs = _by_run(events)
    application = runs.pop(APPLICATION_ID)
    assert [e["eventType"] for e in application] == ["START", "FAIL"]
    assert events[-1] == application[-1], "the application ends after its actions"
    facet = application[-1]["run"]["facets"]["errorMessage"]
    assert facet["message"] == "RuntimeError: orders feed is too small: 2 rows"
    assert facet["programmingLanguage"] == "PYTHON"
    assert "in check_orders" in facet["stackTrace"]
    action_names = sorted(run[-1]["job"]["name"] for run in runs.values())
    assert [name.split(".")[:2] for name in action_names] == [
        ["nightly_orders", "count"],
        ["nightly_orders", "write"],
    ]
    assert all([e["eventType"] for e in run] == ["START", "COMPLETE"] for run in runs.values())


def test_spark_conf_names_and_parents_the_runs(failing_script: Finished) -> None:
    events = failing_script.events
    assert events, failing_script.stderr[-3000:]
    assert {event["job"]["namespace"] for event in events} == {"lake"}
    runs = _by_run(events)
    for event in runs.pop(APPLICATION_ID):
        assert event["job"]["name"] == "nightly_orders"
        assert _parent_and_root(event) == (
            ("airflow", "nightly.load_orders", PARENT_ID),
            ("airflow", "nightly", ROOT_ID),
        )
    assert len(runs) == 2
    for run in runs.values():
        for event in run:
            assert _parent_and_root(event) == (
                ("lake", "nightly_orders", APPLICATION_ID),
                ("airflow", "nightly", ROOT_ID),
            )
