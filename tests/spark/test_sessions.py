"""Every session of an application captured: ``spark.newSession()``, sessions of other threads.

Capture listens to the application's listener bus (through the package's one Java class), so a
session made after ``enable()``, or by other code, is captured like the first: one run per
action, the same subset facets, children of the same application run. Expected facets come
from the same action run on the first session.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from openlineage_subset.spark import _capture, enable
from tests.helpers import ROOT
from tests.spark.conftest import Capture, Lake, MemoryTransport, ol_subset

pytestmark = pytest.mark.spark

JAVA = ROOT / "src" / "openlineage_subset" / "spark" / "_jvm"


def _only(capture: Capture) -> list[dict[str, Any]]:
    (events,) = capture.runs().values()
    return events


def _datasets(events: list[dict[str, Any]]) -> tuple[Any, Any]:
    complete = events[-1]
    return complete["inputs"], complete["outputs"]


def _read(session: SparkSession, lake: Lake) -> None:
    session.read.parquet(str(lake.sales)).where(
        "country = 'DE' AND business_date = '2024-10-15'"
    ).count()


def test_a_new_session_is_captured_like_the_first(
    spark: SparkSession, lake: Lake, capture: Capture
) -> None:
    _read(spark, lake)
    first = _only(capture)
    other = spark.newSession()
    _read(other, lake)
    second = _only(capture)
    assert second[0]["run"]["runId"] != first[0]["run"]["runId"]
    assert [e["eventType"] for e in second] == ["START", "COMPLETE"]
    assert _datasets(second) == _datasets(first)
    assert "subset" in second[-1]["inputs"][0]["inputFacets"]
    parent = second[-1]["run"]["facets"]["parent"]["run"]["runId"]
    assert parent == capture.handle.application.run_id


def test_sessions_of_other_threads_are_captured(
    spark: SparkSession, lake: Lake, capture: Capture, tmp_path: Path
) -> None:
    _read(spark, lake)
    expected = _datasets(_only(capture))
    failures: list[BaseException] = []

    def work(target: Path) -> None:
        try:
            mine = spark.newSession()
            _read(mine, lake)
            mine.range(7).write.parquet(str(target))
        except BaseException as error:  # surfaced by the test thread below
            failures.append(error)

    threads = [threading.Thread(target=work, args=(tmp_path / f"t{n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    runs = list(capture.runs().values())
    reads = [events for events in runs if events[-1]["inputs"]]
    writes = [events for events in runs if events[-1]["outputs"]]
    assert len(runs) == 4 and len(reads) == 2 and len(writes) == 2
    assert all(_datasets(events) == expected for events in reads)
    written = {events[-1]["outputs"][0]["name"] for events in writes}
    assert written == {str(tmp_path / "t0"), str(tmp_path / "t1")}


def test_enable_on_another_session_of_a_captured_application_returns_its_capture(
    spark: SparkSession, capture: Capture
) -> None:
    with pytest.warns(UserWarning, match="already enabled on this Spark application"):
        again = enable(spark.newSession())
    assert again is capture.handle


def test_without_the_java_class_only_the_session_given_is_captured_and_said(
    spark: SparkSession,
    lake: Lake,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(_capture, "application_listener_available", lambda: False)
    transport = MemoryTransport()
    with caplog.at_level(logging.WARNING):
        handle = enable(spark, transport=transport, quarantine=tmp_path / "q.jsonl")
    try:
        recorder = Capture(handle, transport)
        recorder.runs()
        assert not handle.every_session
        said = [r.getMessage() for r in caplog.records if "only the session" in r.getMessage()]
        assert len(said) == 1 and "javac" in said[0]
        _read(spark.newSession(), lake)
        assert recorder.runs() == {}, "the other session is not captured, as the log said"
        _read(spark, lake)
        assert len(recorder.runs()) == 1
    finally:
        handle.close()


SCRIPT = textwrap.dedent(
    """
    import sys, threading
    from pyspark.sql import SparkSession

    lake = sys.argv[1]
    spark = (SparkSession.builder.master("local[1]").appName("Tenants")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.range(5).write.parquet(lake + "/first")
    spark.newSession().range(6).write.parquet(lake + "/second")

    def tenant():
        spark.newSession().read.parquet(lake + "/second").count()

    thread = threading.Thread(target=tenant)
    thread.start()
    thread.join()
    """
)


def test_ol_subset_run_captures_every_session_of_the_script(tmp_path: Path) -> None:
    script = tmp_path / "tenants.py"
    script.write_text(SCRIPT)
    events_file = tmp_path / "events.jsonl"
    done = ol_subset("run", "--output", str(events_file), str(script), str(tmp_path / "lake"))
    assert done.returncode == 0, done.stderr[-3000:]
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    application = {e["run"]["runId"] for e in events if e["job"]["name"] == "tenants"}
    assert len(application) == 1, "one application run for every session"
    actions: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if "parent" in event["run"]["facets"]:
            actions.setdefault(event["run"]["runId"], []).append(event)
    assert len(actions) == 3, "two writes and a read from another thread"
    parents = {e["run"]["facets"]["parent"]["run"]["runId"] for v in actions.values() for e in v}
    assert parents == application
    touched = sorted(
        d["name"].rsplit("/", 1)[-1]
        for run in actions.values()
        for d in run[-1]["inputs"] + run[-1]["outputs"]
    )
    assert touched == ["first", "second", "second"]


def test_the_shipped_java_class_is_compiled_from_its_source(tmp_path: Path) -> None:
    """The class the build made is what the committed source gives (javap, member by member)."""
    javac, javap = shutil.which("javac"), shutil.which("javap")
    if javac is None or javap is None:
        pytest.skip("no JDK (javac, javap) on PATH to compile the source with")
    shipped = JAVA / "classes"
    if not any(shipped.rglob("*.class")):
        pytest.fail(f"{shipped} holds no class: the build hook did not run (hatch_build.py)")
    sources = sorted(str(p) for p in (JAVA / "java").rglob("*.java"))
    subprocess.run(
        [javac, "--release", "8", "-Xlint:-options", "-d", str(tmp_path), *sources], check=True
    )
    for compiled in sorted(tmp_path.rglob("*.class")):
        relative = compiled.relative_to(tmp_path)
        listings = [
            subprocess.run(
                [javap, "-c", "-p", str(path)], capture_output=True, text=True, check=True
            ).stdout.split("\n", 1)[1]  # the first line names the file compiled
            for path in (compiled, shipped / relative)
        ]
        assert listings[0] == listings[1], f"{relative} is not what its source compiles to"
