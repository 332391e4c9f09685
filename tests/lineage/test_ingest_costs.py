"""What ingest and the service's writer spend per event, kept down without changing an answer.

The digest of an event is the SHA-256 of its canonical JSON however it is spelled; a condition
found valid is not validated again, nor an event of a shape found valid (its run id and time
aside): only what is new in it, and an event whose conditions are all known, or of a known
shape, gets the issues it would get validated whole; the cyclic garbage collector sleeps while a
chunk is checked (parsed JSON holds no cycle) and is left as it was found; a chunk stored in a
transaction of its own needs no savepoint and runs no statement for a table it leaves as it was.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openlineage_subset import spec, spec_versions, validate
from openlineage_subset.lineage import LineageStore
from openlineage_subset.lineage.ingestion import _checker as checker_module
from openlineage_subset.lineage.ingestion._checker import check_chunk
from openlineage_subset.lineage.ingestion._shapes import CheckedEvent, Invalid, Line
from openlineage_subset.lineage.ingestion._writer import Writer
from openlineage_subset.lineage.model._condition_json import canonical
from tests.lineage.events import day, event, parts, pipeline_history


def _spellings(value: Any, chooser: random.Random) -> str:
    """JSON text of ``value`` with its keys in a random order and random spaces."""
    space = chooser.choice(["", " ", "\n  "])
    if isinstance(value, dict):
        items = list(value.items())
        chooser.shuffle(items)
        members = (
            f"{space}{json.dumps(key)}{space}:{space}{_spellings(item, chooser)}"
            for key, item in items
        )
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + f",{space}".join(_spellings(item, chooser) for item in value) + "]"
    return json.dumps(value, ensure_ascii=chooser.random() < 0.5)


def _digests(texts: list[str]) -> list[str]:
    outcomes, _ = check_chunk(
        [Line("test", number, text.encode()) for number, text in enumerate(texts, 1)]
    )
    events = [outcome for outcome in outcomes if isinstance(outcome, CheckedEvent)]
    assert len(events) == len(texts), outcomes
    return [event.digest for event in events]


EVENTS = pipeline_history(days=3)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(EVENTS), st.randoms(use_true_random=False))
def test_equal_events_get_one_digest_whatever_their_spelling(
    document: dict[str, Any], chooser: random.Random
) -> None:
    texts = [json.dumps(document), json.dumps(document, indent=2).replace("\n", " ")]
    texts += [_spellings(document, chooser) for _ in range(3)]
    expected = hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()
    assert _digests(texts) == [expected] * len(texts)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(EVENTS), st.randoms(use_true_random=False))
def test_events_that_differ_in_one_value_get_different_digests(
    document: dict[str, Any], chooser: random.Random
) -> None:
    changed = copy.deepcopy(document)
    leaves = []  # (container, key) of every string inside the event

    def walk(value: Any) -> None:
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in pairs:
            if isinstance(item, str):
                leaves.append((value, key))
            elif isinstance(item, (dict, list)):
                walk(item)

    walk(changed)
    container, key = chooser.choice(leaves)
    container[key] = container[key] + "x"
    if changed == document or checker_module.problem(changed) is not None:
        return  # a change that makes it invalid is no event to store
    first, second = _digests([_spellings(document, chooser), _spellings(changed, chooser)])
    assert first != second


def _condition_checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record each condition the generated validators check at the top of a subset facet:
    those of the newest spec version, which the test events' facets name (tests.helpers)."""
    validators = spec().validators
    seen: list[Any] = []
    original = validators._BaseSubsetCondition

    def counting(value: Any) -> Any:
        if "\ue000" not in json.dumps(value, ensure_ascii=False):  # not a placeholder
            seen.append(value)
        return original(value)

    monkeypatch.setattr(validators, "_BaseSubsetCondition", counting)
    return seen


def _fresh_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checker_module, "_VALID_CONDITIONS", {})
    monkeypatch.setattr(checker_module, "_VALID_SHAPES", {})
    monkeypatch.setattr(checker_module, "_valid_shapes_size", 0)


def _checked_alone(document: Any, number: int) -> Any:
    outcomes, _ = check_chunk([Line("t", number, json.dumps(document).encode())])
    return outcomes[0]


def test_a_valid_condition_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_caches(monkeypatch)
    seen = _condition_checks(monkeypatch)
    unique = parts({"day": "2031-02-03", "country": "XX"})  # in no other test's events
    runs = [event(number, "START", 0, reads=[("a", unique)]) for number in (1, 2)]
    runs.append(event(3, "START", 0, reads=[("a", unique), ("c", day("2031-02-03"))]))
    for number, document in enumerate(runs, 1):
        outcomes, _ = check_chunk([Line("t", number, json.dumps(document).encode())])
        assert isinstance(outcomes[0], CheckedEvent)
    # The second run's read is known valid; the third's other read is not: its event is
    # validated whole.
    assert seen == [unique, unique, day("2031-02-03")]


def test_an_event_with_known_conditions_gets_the_issues_it_would_get(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fresh_caches(monkeypatch)
    condition = day("2031-02-04")
    good = event(1, "START", 0, reads=[("a", condition)])
    bad = event(2, "START", 0, reads=[("a", condition)])
    bad["run"]["runId"] = 7
    bad["inputs"][0]["inputFacets"]["subset"]["_producer"] = 3
    expected = checker_module.problem(bad)
    assert expected is not None and "and 1 more" in expected
    outcomes, _ = check_chunk([Line("t", 1, json.dumps(good).encode())])
    assert isinstance(outcomes[0], CheckedEvent)
    assert canonical_keys_known(condition)
    outcomes, _ = check_chunk([Line("t", 2, json.dumps(bad).encode())])
    issues = tuple(str(issue) for issue in validate(bad))
    assert outcomes[0] == Invalid("t", 2, expected, issues)


def test_an_event_of_a_known_shape_is_validated_for_what_is_new_in_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fresh_caches(monkeypatch)
    whole: list[Any] = []
    original = checker_module._checked

    def recording(document: Any, levels: Any) -> Any:
        whole.append(document)
        return original(document, levels)

    monkeypatch.setattr(checker_module, "_checked", recording)
    seen = _condition_checks(monkeypatch)
    first, second = day("2031-03-01"), day("2031-03-02")
    runs = [
        event(1, "START", 0, reads=[("a", first)]),
        event(2, "START", 5, reads=[("a", second)]),  # the same shape, a new condition
        event(3, "START", 9, reads=[("a", first)]),  # the same shape, a known condition
    ]
    for number, document in enumerate(runs, 1):
        assert isinstance(_checked_alone(document, number), CheckedEvent)
    assert len(whole) == 1, "the first event alone is validated whole"
    assert seen == [first, second], "each condition once"


@pytest.mark.parametrize("change", ["condition", "event type", "run id", "time", "producer"])
def test_an_event_of_a_known_shape_gets_the_issues_it_would_get(
    monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    _fresh_caches(monkeypatch)
    assert isinstance(
        _checked_alone(event(1, "START", 0, reads=[("a", day("2031-03-03"))]), 1), CheckedEvent
    )
    bad = event(2, "START", 5, reads=[("a", day("2031-03-04"))])
    facet = bad["inputs"][0]["inputFacets"]["subset"]
    if change == "condition":
        facet["inputCondition"] = {"type": "compare", "left": {"type": "field"}}
    elif change == "event type":
        bad["eventType"] = "FINISHED"
    elif change == "run id":
        bad["run"]["runId"] = 7
    elif change == "time":
        bad["eventTime"] = "yesterday"  # valid for the schema, not for lineage
    else:
        facet["_producer"] = 3
    expected = checker_module.problem(bad)
    assert expected is not None
    issues = tuple(str(issue) for issue in validate(bad))
    assert _checked_alone(bad, 2) == Invalid("t", 2, expected, issues)


def test_the_shapes_known_valid_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory: the shapes kept stay within their bound of characters, however many events of
    new shapes a long ingest or a service meets (each job is a shape of its own)."""
    _fresh_caches(monkeypatch)
    one = _checked_alone(event(1, "START", 0, job="job-0"), 1)
    assert isinstance(one, CheckedEvent)
    size = checker_module._valid_shapes_size
    assert size > 0 and len(checker_module._VALID_SHAPES) == 1
    monkeypatch.setattr(checker_module, "_VALID_SHAPES_CHARACTERS", 3 * size + 10)
    for number in range(2, 30):
        _checked_alone(event(number, "START", 0, job=f"job-{number}"), number)
        assert checker_module._valid_shapes_size <= 3 * size + 10
        held = sum(map(len, checker_module._VALID_SHAPES))
        assert held == checker_module._valid_shapes_size, "the count is of what is kept"
    assert 1 <= len(checker_module._VALID_SHAPES) <= 3


@pytest.mark.parametrize("version", spec_versions())
def test_the_schemas_ask_no_more_of_a_run_id_and_a_time_than_a_string(version: str) -> None:
    """An event's shape masks its run id and time (events of one shape validate alike): a spec
    version that asked more of either (a format, a pattern) would let ingest take an invalid
    event for valid. This fails first."""
    document = event(1, "START", 0, reads=[("a", day("2031-03-05"))])
    document["schemaURL"] = spec(version).event_url()
    for run_id, time in (("", ""), ("not a uuid", "yesterday"), ("\ue001", "\ue002")):
        document["eventTime"], document["run"]["runId"] = time, run_id
        assert validate(document) == []
    document["eventTime"] = 20311005
    assert validate(document), "a time that is no string is an issue"


def canonical_keys_known(condition: Any) -> bool:
    return any(text == canonical(condition) for _, text in checker_module._VALID_CONDITIONS)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_sleeps_while_a_chunk_is_checked(
    monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    states: list[bool] = []
    original = checker_module._usable  # every valid event's last check, known shape or not

    def recording(document: Any) -> Any:
        states.append(gc.isenabled())
        return original(document)

    monkeypatch.setattr(checker_module, "_usable", recording)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        check_chunk([Line("t", 1, json.dumps(EVENTS[0]).encode())])
        assert gc.isenabled() == enabled, "the collector is left as it was found"
    finally:
        (gc.enable if was else gc.disable)()
    assert states == [False]


def _table_rows(connection: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    """Each table's rows (a small store): a table whose rows are the same after a chunk as
    before it was not changed, whether by inserts or by updates in place (``dataset_counts``)."""
    names = [
        row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    ]
    return {name: sorted(connection.execute(f"SELECT * FROM {name}"), key=repr) for name in names}


def test_a_transaction_of_one_chunk_runs_no_statement_it_does_not_need(tmp_path: Path) -> None:
    with LineageStore.open(tmp_path / "lineage.db", create=True) as store:
        writer = Writer(store)
        first = event(1, "START", 0, reads=[("a", day("2031-02-05"))])
        outcomes, conditions = check_chunk([Line("t", 1, json.dumps(first).encode())])
        writer.store(outcomes, conditions, lambda *_: None)
        writer.commit()
        before = _table_rows(store.connection)
        statements: list[str] = []
        store.connection.set_trace_callback(statements.append)
        second = event(2, "START", 0, reads=[("a", day("2031-02-05"))])
        outcomes, conditions = check_chunk([Line("t", 1, json.dumps(second).encode())])
        writer.store(outcomes, conditions, lambda *_: None)
        writer.commit()
        store.connection.set_trace_callback(None)
        after = _table_rows(store.connection)
    assert not [text for text in statements if "SAVEPOINT" in text or "RELEASE" in text]
    unchanged = [name for name in before if before[name] == after[name]]
    assert "access_conditions" in unchanged and "runs" not in unchanged
    for name in unchanged:
        writes = [
            text
            for text in statements
            if text.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
            and f" {name} " in f" {text} ".replace("(", " ")
        ]
        assert writes == [], f"{name} is unchanged, yet written to: {writes}"
    reads_of_old_accesses = [text for text in statements if "FROM accesses WHERE" in text]
    assert reads_of_old_accesses == [], "a new run has no stored access to read"


ROOT = Path(__file__).resolve().parents[2]


def test_a_valid_condition_is_validated_once_after_a_spec_bump(tmp_path: Path) -> None:
    """The newest facet folder copied to the next version with one more optional property and
    the code regenerated (``python -m codegen``): the events now name the new version, and a
    condition is still validated once, by that version's validators."""
    pytest.importorskip("datamodel_code_generator", reason="the codegen extra: .[codegen]")
    newest = spec().version
    major, minor, _ = newest.split("-")
    bumped = f"{major}-{int(minor) + 1}-0"
    schemas = tmp_path / "schemas"
    shutil.copytree(ROOT / "schemas", schemas)
    folder = schemas / "spec" / "facets"
    shutil.copytree(folder / newest, folder / bumped)
    facet = folder / bumped / "BaseSubsetDatasetFacet.json"
    schema = json.loads(facet.read_text().replace(f"/{newest}/", f"/{bumped}/"))
    reads = schema["$defs"]["InputSubsetInputDatasetFacet"]["allOf"][1]["properties"]
    reads["note"] = {"type": "string"}  # optional: not among the required keys
    facet.write_text(json.dumps(schema, indent=2))
    generated = tmp_path / "generated"
    command = [sys.executable, "-m", "codegen", "--schemas", str(schemas), "--output"]
    done = subprocess.run(
        [*command, str(generated)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    path = os.pathsep.join(filter(None, [str(generated), os.environ.get("PYTHONPATH")]))
    test = f"{Path(__file__).relative_to(ROOT)}::test_a_valid_condition_is_validated_once"
    # the regenerated package must be the one imported, else the run proves nothing
    script = (
        "import sys, pytest; from openlineage_subset import spec; "
        f"assert spec().version == {bumped!r}, spec().version; "
        f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', {test!r}]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
