"""``ol-subset run``'s exit, without Spark: its captures share one close budget."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("pyspark")

from openlineage_subset import spark
from openlineage_subset.cli._run import run_script
from openlineage_subset.delivery import Counts, ExitBudget, Places
from openlineage_subset.spark import _capture


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


class SpentHandle:
    """A capture whose close() spends all the time it is given (a hanging endpoint)."""

    def __init__(self, clock: Clock, budget: float) -> None:
        self.clock = clock
        self._closing = False
        self.given: list[float | None] = []
        self.emitter = SimpleNamespace(
            close_timeout=budget, places=Places("nowhere", Path("outbox"), Path("q.jsonl"))
        )
        self.counts = Counts()

    def close(self, timeout: float | None = None, *, error: BaseException | None = None) -> bool:
        self._closing = True
        self.given.append(timeout)
        self.clock.now += self.emitter.close_timeout if timeout is None else timeout
        return False


def test_two_captures_of_one_script_delay_its_exit_by_one_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    handles = [SpentHandle(clock, 5.0), SpentHandle(clock, 5.0)]

    class Sessions:
        def __init__(self, **_: Any) -> None:
            pass

        def stop(self) -> list[SpentHandle]:
            return handles

    # ``ol-subset run`` takes the class from spark's face when it runs, so the face is patched.
    monkeypatch.setattr(spark, "NewSessionCapture", Sessions)
    monkeypatch.setattr(_capture, "EXIT_BUDGET", ExitBudget(clock=clock))
    script = tmp_path / "job.py"
    script.write_text("print('done')\n")
    started = clock.now
    assert run_script(str(script), [], output=None, namespace=None) == 0
    assert [handle.given for handle in handles] == [[5.0], [0.0]]
    assert clock.now - started == 5.0
