"""The emitter without Spark: its settings are checked once, and closing never raises."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from openlineage_subset.delivery import _emitter as emitter_module
from openlineage_subset.delivery._emitter import Emitter, ExitBudget, open_emitter
from openlineage_subset.delivery._sending import JsonLinesTransport
from openlineage_subset.producer import JobRef, LineageSettingsWarning, run_event

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
    monkeypatch.setattr(emitter_module, "_BUDGET_PROBLEMS_SAID", set())
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


def test_an_unusable_close_timeout_variable_is_said_once_per_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OL_SUBSET_CLOSE_TIMEOUT", "soon")
    monkeypatch.setattr(emitter_module, "_BUDGET_PROBLEMS_SAID", set())
    emitters = []
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")  # what Python would not repeat, shown: said once by us
        for number in range(3):
            emitters.append(
                open_emitter(
                    transport=ListTransport(),
                    output=None,
                    quarantine=tmp_path / f"q{number}.jsonl",
                    outbox=tmp_path / f"outbox{number}",
                    close_timeout=None,
                )
            )
    assert [str(w.message).split("=")[0] for w in said] == ["OL_SUBSET_CLOSE_TIMEOUT"]
    assert {emitter.close_timeout for emitter in emitters} == {5.0}  # each uses the default
    for emitter in emitters:
        emitter.close()


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


# The summary counts what reached the quarantine file -----------------------------------------


def _invalid(number: int) -> dict[str, Any]:
    """An event strict validation refuses (no producer URI): it goes to the quarantine."""
    return {"eventType": "START", "run": {"runId": f"r-{number}"}, "pad": "x" * 300}


def _summary_of(emitter: Emitter) -> str:
    from openlineage_subset.cli import summary

    return summary(SimpleNamespace(counts=emitter.counts, emitter=emitter))  # type: ignore[arg-type]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_quarantine_on_a_full_disk_is_not_said_to_hold_the_events(tmp_path: Path) -> None:
    emitter = Emitter(None, "/dev/full", tmp_path / "outbox", close_timeout=1)
    emitter.submit([_invalid(n) for n in range(15)])
    emitter.close()
    said = _summary_of(emitter)
    assert "quarantined in" not in said
    assert "15 could not be written to /dev/full" in said
    assert "No space left on device" in said


def test_a_quarantine_cut_short_by_a_file_size_limit_counts_only_its_lines(
    tmp_path: Path,
) -> None:
    """RLIMIT_FSIZE (in a child process) lets a few records in, then every write fails."""
    quarantine = tmp_path / "q.jsonl"
    script = textwrap.dedent(
        f"""
        import resource
        from types import SimpleNamespace
        from openlineage_subset.cli._run import summary
        from openlineage_subset.delivery._emitter import Emitter
        emitter = Emitter(None, {str(quarantine)!r}, {str(tmp_path / "outbox")!r},
                          close_timeout=1)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, resource.RLIM_INFINITY))
        emitter.submit([{{"eventType": "START", "run": {{"runId": f"r-{{n}}"}}, "pad": "x" * 300}}
                        for n in range(15)])
        emitter.close()
        print(summary(SimpleNamespace(counts=emitter.counts, emitter=emitter)))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    kept = len(quarantine.read_bytes().splitlines())
    assert 0 < kept < 15
    said = done.stdout
    assert f"{kept} quarantined in {quarantine}" in said
    assert f"{15 - kept} could not be written to {quarantine}" in said
    assert "File too large" in said


# A FIFO as the output ------------------------------------------------------------------------


def test_a_fifo_no_one_reads_is_an_unusable_output_not_a_sink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("OPENLINEAGE_URL", "OPENLINEAGE_CONFIG", "OL_SUBSET_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("pathlib.Path.home", lambda: tmp_path)
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    with pytest.warns(LineageSettingsWarning, match="no process reads") as said:
        emitter = open_emitter(
            transport=None, output=fifo, quarantine=None, outbox=None, close_timeout=2
        )
    assert "openlineage-events.jsonl" in str(said[0].message)
    emitter.submit([_event(n) for n in range(20)])
    assert emitter.close() is True
    written = (tmp_path / "openlineage-events.jsonl").read_bytes().splitlines()
    assert emitter.counts["emitted"] == len(written) == 20


def test_a_fifo_whose_reader_left_fails_the_send_instead_of_claiming_it(tmp_path: Path) -> None:
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    transport = JsonLinesTransport.create(fifo)
    transport.emit(_event(1))
    assert os.read(reader, 1 << 16).count(b"\n") == 1
    os.close(reader)
    with pytest.raises(OSError):
        transport.emit(_event(2))
    with pytest.raises(OSError, match="no process reads"):
        transport.emit(_event(3))


def test_a_fifo_reader_gets_every_event_as_one_stream(tmp_path: Path) -> None:
    """``cat fifo > copy``: it must not see an end of file after the first event."""
    fifo, copy = tmp_path / "events.fifo", tmp_path / "copy.jsonl"
    os.mkfifo(fifo)
    with copy.open("wb") as sink:
        cat = subprocess.Popen(["cat", str(fifo)], stdout=sink)
    try:
        while True:  # until cat has opened the FIFO
            try:
                transport = JsonLinesTransport.create(fifo)
                break
            except OSError:
                assert cat.poll() is None
                time.sleep(0.01)
        emitter = Emitter(transport, tmp_path / "q.jsonl", tmp_path / "outbox", close_timeout=10)
        emitter.submit([_event(n) for n in range(20)])
        assert emitter.close() is True
        assert emitter.counts["emitted"] == 20
        assert transport._pipe is not None
        os.close(transport._pipe)  # the end of the stream: cat ends
        assert cat.wait(timeout=30) == 0
    finally:
        cat.kill()
    assert len(copy.read_bytes().splitlines()) == 20
