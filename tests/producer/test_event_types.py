"""The run states every room reads (ends of runs, failed ends) are the spec's ``eventType`` values,
taken from the model generated from it rather than spelled again in each room."""

from __future__ import annotations

import json

from openlineage_subset.producer import EVENT_TYPES, FAILED_EVENT_TYPES, TERMINAL_EVENT_TYPES
from tests.helpers import ROOT


def _spec_event_types() -> list[str]:
    """The ``eventType`` enum of the newest core spec in schemas/, read from its JSON."""
    folders = sorted(
        (ROOT / "schemas" / "spec").glob("[0-9]*-[0-9]*-[0-9]*"),
        key=lambda folder: tuple(int(part) for part in folder.name.split("-")),
    )
    spec = json.loads((folders[-1] / "OpenLineage.json").read_text(encoding="utf-8"))
    (run_event,) = [part for part in spec["$defs"]["RunEvent"]["allOf"] if "properties" in part]
    enum: list[str] = run_event["properties"]["eventType"]["enum"]
    return enum


def test_the_event_types_are_the_spec_s_in_its_order() -> None:
    assert list(EVENT_TYPES) == _spec_event_types()


def test_a_run_ends_complete_failed_or_aborted_and_fails_by_two_of_them() -> None:
    """The spec's own words: one of COMPLETE, ABORT, FAIL per run; a run that did not complete
    failed or was aborted."""
    assert set(TERMINAL_EVENT_TYPES) == {"COMPLETE", "ABORT", "FAIL"}
    assert set(FAILED_EVENT_TYPES) == set(TERMINAL_EVENT_TYPES) - {"COMPLETE"}
    assert all(isinstance(kind, str) and type(kind) is str for kind in EVENT_TYPES)
