"""Every reader of JSON Lines (``validate``, ``show``, ``lineage ingest``) is bounded by one line
limit, whatever the input: a line over it is reported with its number, the limit and how to
raise it, and the next line is read; an input with no line end ends with that error.

Memory is checked as the operating system counts it: each command runs in a child process whose
address space is capped (``RLIMIT_AS``), on inputs many times larger than the cap. Sparse files
give gigabytes of zeros (no newline) without writing them to disk.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lineage.events import event

COMMAND = [sys.executable, "-m", "openlineage_subset"]
CAP = 512 << 20
"""The address space each command gets: a few times what the interpreter and the line limit
need, far less than the inputs below."""
LIMIT_WORDS = "raise the limit with --max-line-bytes or $OL_SUBSET_MAX_LINE_BYTES"
EVENT = event(1, "COMPLETE", 0, job="after-the-long-line")
LINE = json.dumps(EVENT)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as Linux counts it")


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def _run(
    *args: str, stdin: int | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*COMMAND, *args],
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        preexec_fn=_capped,
        env=env,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    return done


def _sparse(path: Path, zeros: int, after: bytes = b"") -> Path:
    """A file of ``zeros`` NUL bytes (no newline), then ``after``: no disk for the zeros."""
    with path.open("wb") as out:
        out.truncate(zeros)
        out.seek(zeros)
        out.write(after)
    return path


def _validate(path: Path, _: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return _run("validate", *options, str(path))


def _show(path: Path, _: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return _run("show", *options, str(path))


def _ingest(path: Path, folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return _run("lineage", "ingest", "--jobs", "1", *options, str(path), "--db", str(folder / "db"))


READERS = {"validate": _validate, "show": _show, "ingest": _ingest}


def _output(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


def _said_of(done: subprocess.CompletedProcess[str], path: Path, line: int) -> list[str]:
    """The lines of output about ``line`` of ``path``."""
    return [said for said in _output(done).splitlines() if said.startswith(f"{path}:{line}: ")]


def _continued(reader: str, done: subprocess.CompletedProcess[str], path: Path, line: int) -> None:
    """The reader read the event on ``line``, after the long one."""
    output = _output(done)
    if reader == "validate":
        assert f"{path}:{line}: valid" in output
    elif reader == "show":
        assert "run after-the-long-line  COMPLETE" in output
    else:
        assert "1 event(s) stored" in output


@pytest.mark.parametrize("reader", READERS)
def test_a_line_over_the_limit_is_named_and_the_next_line_read(reader: str, tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(f"{{}}\n{'x' * 5000}\n{LINE}\n", encoding="utf-8")
    done = READERS[reader](path, tmp_path, "--max-line-bytes", "4000")
    assert done.returncode == (2 if reader == "validate" else 1)  # as for a line not JSON
    (said,) = _said_of(done, path, 2)
    assert said.endswith(
        f"a line of 5000 bytes, over the limit of 4000 bytes: skipped; {LIMIT_WORDS}"
    )
    _continued(reader, done, path, 3)


@pytest.mark.parametrize("reader", READERS)
def test_a_line_of_hundreds_of_megabytes_takes_no_more_than_the_limit(
    reader: str, tmp_path: Path
) -> None:
    """Line 1 is 300 MB of zeros: read whole, it takes more than the reader's address space."""
    path = _sparse(tmp_path / "events.jsonl", 300 << 20, f"\n{LINE}\n".encode())
    done = READERS[reader](path, tmp_path)
    (said,) = _said_of(done, path, 1)
    assert f"a line of {300 << 20} bytes, over the limit of {16 << 20} bytes" in said
    _continued(reader, done, path, 2)


@pytest.mark.parametrize("reader", ["validate", "show"])
def test_dev_zero_ends_with_the_error_in_bounded_memory(reader: str, tmp_path: Path) -> None:
    done = READERS[reader](Path("/dev/zero"), tmp_path, "--max-line-bytes", "1M")
    assert done.returncode == 2  # an input not read to its end: unusable, for show too
    assert "/dev/zero:1: " in _output(done)
    assert "with no end, over the limit of 1048576 bytes: the rest of the input is not read" in (
        _output(done)
    )


def test_standard_input_without_newline_ends_with_the_error() -> None:
    """Standard input that never ends a line, at the default limit."""
    with open("/dev/zero", "rb") as zeros:
        done = _run("validate", "-", stdin=zeros.fileno())
    assert done.returncode == 2
    assert done.stdout.startswith("<stdin>:1: error: a line of more than ")
    assert f"with no end, over the limit of {16 << 20} bytes" in done.stdout
    assert "the rest of the input is not read" in done.stdout


def test_a_document_read_whole_is_held_to_the_limit(tmp_path: Path) -> None:
    """A .json file over several lines is one document, read whole: not past the limit."""
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"a": "x" * 5000}, indent=2), encoding="utf-8")
    done = _run("validate", "--max-line-bytes", "4000", str(path))
    assert done.returncode == 2
    assert "more than 4000 bytes, the limit of a document read whole" in done.stdout
    assert LIMIT_WORDS in done.stdout


def test_the_limit_comes_from_the_environment_and_a_wrong_one_is_said(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(f"{'x' * 5000}\n", encoding="utf-8")
    environment = {**os.environ, "OL_SUBSET_MAX_LINE_BYTES": "4K"}
    done = _run("validate", str(path), env=environment)
    assert "over the limit of 4096 bytes" in done.stdout
    for args in (["validate"], ["show"], ["lineage", "ingest", "--db", str(tmp_path / "db")]):
        done = _run(*args, str(path), env={**os.environ, "OL_SUBSET_MAX_LINE_BYTES": "lots"})
        assert done.returncode == 2
        assert "$OL_SUBSET_MAX_LINE_BYTES: a number of bytes, 1 or more" in done.stderr
        done = _run(*args, "--max-line-bytes", "0", str(path))
        assert done.returncode == 2
        assert "--max-line-bytes: a number of bytes, 1 or more" in done.stderr


# --- show: one event at a time, read as validate reads --------------------------------------


def test_show_keeps_no_event_it_has_merged(tmp_path: Path) -> None:
    """700 MB of events through a pipe, in 512 MiB: show keeps what it prints, not the events."""
    script = (
        f"import json, sys\nevent = json.loads({LINE!r})\n"
        "event['run'] = {'runId': 'r', 'facets': {'big': {'blob': 'x' * (1 << 20)}}}\n"
        "line = json.dumps(event).encode() + b'\\n'\n"
        "for _ in range(700):\n    sys.stdout.buffer.write(line)\n"
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE) as producer:
        assert producer.stdout is not None
        done = _run("show", "/dev/stdin", stdin=producer.stdout.fileno())
        producer.stdout.close()
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("run after-the-long-line  COMPLETE")


def _show_lines(tmp_path: Path, *lines: bytes) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return _run("show", str(path))


def test_show_takes_a_byte_order_mark_as_validate_does(tmp_path: Path) -> None:
    done = _show_lines(tmp_path, b"\xef\xbb\xbf" + LINE.encode())
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("run after-the-long-line  COMPLETE")
    path = tmp_path / "events.jsonl"
    assert _run("validate", str(path)).stdout.startswith(f"{path}:1: valid")


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (LINE[:-1] + ', "x": NaN}', "not usable JSON at $.x: NaN is not JSON"),
        (LINE[:-1] + ', "x": -Infinity}', "not usable JSON at $.x: -Infinity is not JSON"),
        (LINE[:-1] + ', "job": {}}', "not usable JSON at $: the key 'job' appears more than once"),
        (
            '{"run": {"runId": "r"}, "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "not usable JSON: nested too deeply",
        ),
        ('{"run": {"runId": "\\udc00"}}', "not usable JSON at $.run.runId: a lone surrogate"),
    ],
    ids=["nan", "infinity", "repeated-key", "deep", "lone-surrogate"],
)
def test_show_skips_what_validate_refuses_in_its_words(
    tmp_path: Path, line: str, words: str
) -> None:
    done = _show_lines(tmp_path, line.encode(), LINE.encode())
    path = tmp_path / "events.jsonl"
    assert done.returncode == 1
    assert done.stdout.startswith("run after-the-long-line  COMPLETE"), "the next line is read"
    (said,) = done.stderr.splitlines()
    assert said.startswith(f"{path}:1: skipped: {words}")
    checked = _run("validate", str(path))
    assert f"{path}:1: error: {said.partition(': skipped: ')[2]}" in checked.stdout
