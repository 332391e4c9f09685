"""The emitter without Spark: its settings are checked once, and closing never raises."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.delivery._emitter import Emitter, ExitBudget, open_emitter
from openlineage_subset.producer._events import JobRef, run_event
from openlineage_subset.producer._settings import LineageSettingsWarning

PRODUCER = "https://example.com/tests"


class ListTransport:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)


def _event(number: int) -> dict[str, Any]:
    job = JobRef("tests", "emitter", f"0190f4a7-1c2b-7d3e-8f4a-{number:012d}")
    return run_event("START", event_time="2024-10-15T00:00:00Z", job=job, producer=PRODUCER)


@pytest.mark.parametrize("value", ["1e10", "1e300", "inf", "-inf", "nan", "-1", "five"])
def test_an_unusable_close_timeout_warns_and_close_delivers_within_the_default(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OL_SUBSET_CLOSE_TIMEOUT", value)
    transport = ListTransport()
    with pytest.warns(LineageSettingsWarning, match="OL_SUBSET_CLOSE_TIMEOUT") as said:
        emitter = open_emitter(
            transport=transport,
            output=None,
            quarantine=tmp_path / "q.jsonl",
            outbox=tmp_path / "outbox",
            close_timeout=None,
        )
    assert len(said) == 1
    assert math.isfinite(emitter.close_timeout) and 0 < emitter.close_timeout <= 60
    emitter.submit([_event(1), _event(2)])
    assert emitter.close() is True
    assert len(transport.events) == 2
    assert emitter.counts["emitted"] == 2


@pytest.mark.parametrize("value", [1e10, math.inf, math.nan, -1.0])
def test_an_unusable_close_timeout_argument_is_refused_at_once(
    value: float, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="close_timeout"):
        open_emitter(
            transport=ListTransport(),
            output=None,
            quarantine=tmp_path / "q.jsonl",
            outbox=tmp_path / "outbox",
            close_timeout=value,
        )


@pytest.mark.parametrize("value", [1e10, math.inf, math.nan, -3.0, "soon"])
def test_an_unusable_timeout_given_to_flush_or_close_warns_instead_of_raising(
    value: Any, tmp_path: Path
) -> None:
    transport = ListTransport()
    emitter = Emitter(transport, tmp_path / "q.jsonl", tmp_path / "outbox", close_timeout=5)
    emitter.submit([_event(1)])
    with pytest.warns(LineageSettingsWarning, match=r"flush\(timeout="):
        assert emitter.flush(value) is True
    emitter.submit([_event(2)])
    with pytest.warns(LineageSettingsWarning, match=r"close\(timeout="):
        assert emitter.close(value) is True
    assert len(transport.events) == 2


def test_a_usable_timeout_gives_no_warning(tmp_path: Path) -> None:
    emitter = Emitter(ListTransport(), tmp_path / "q.jsonl", tmp_path / "outbox", close_timeout=5)
    emitter.submit([_event(1)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert emitter.flush(3) is True
        assert emitter.close(0.0 + 3) is True


def test_the_exit_budget_is_counted_once_from_the_first_capture_closing() -> None:
    now = [1000.0]
    budget = ExitBudget(clock=lambda: now[0])
    assert budget.remaining(5.0) == 5.0
    now[0] += 4.0
    assert budget.remaining(5.0) == 1.0
    assert budget.remaining(10.0) == 6.0, "a longer budget of its own keeps its own length"
    now[0] += 30.0
    assert budget.remaining(5.0) == 0.0
