"""Hostile input: unusable files and lines, escapes in output, closed pipes, deep and cyclic values.

The command runs as a real process (``python -m openlineage_subset validate``) wherever exit
statuses, standard input or pipes are at stake; the files are real files in ``tmp_path``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from openlineage_subset import (
    SubsetDocumentError,
    dump,
    field,
    input_facet,
    location,
    matches,
    parse_event,
    parse_facet,
    render,
    validate,
)
from openlineage_subset.cli import main
from openlineage_subset.cli._validate import _documents
from tests.helpers import INPUT_URL, PRODUCER, ROOT

COMMAND = [sys.executable, "-m", "openlineage_subset", "validate"]
LIMIT = 512  # the documented nesting limit (docs/validation.md)
LOCATION = {"type": "location", "locations": ["s3://b/k"]}
VALID = {"subset": {"inputCondition": LOCATION, "_producer": PRODUCER, "_schemaURL": INPUT_URL}}
INVALID = {
    "subset": {"inputCondition": {"type": "nope"}, "_producer": PRODUCER, "_schemaURL": INPUT_URL}
}
EVENT = json.loads((ROOT / "examples" / "daily_sales_events.jsonl").read_text().splitlines()[0])


def _text(document: Any) -> str:
    return json.dumps(document)


def _with_extra(value_json: str) -> str:
    """VALID with one more facet property, written as raw JSON text."""
    return _text(VALID)[:-2] + f', "extra": {value_json}}}}}'


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*COMMAND, *args], capture_output=True, text=True, check=False)
    assert done.stderr == "", done.stderr
    return done


def _run_bytes(*args: str, stdin: bytes) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*COMMAND, *args], input=stdin, capture_output=True, check=False)
    assert done.stderr == b"", done.stderr
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), "")


def _depth(value: Any) -> int:
    """How deep objects and arrays nest in a JSON value, walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, level + 1) for child in children)
    return deepest


def _deep_text(document: Any) -> str:
    """``json.dumps`` of a document deeper than the stack of a test allows by default."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 5 * _depth(document))
    try:
        return json.dumps(document)
    finally:
        sys.setrecursionlimit(limit)


def _chain(links: int) -> dict[str, Any]:
    """A condition of ``links`` nested ANDs: each ``left`` is the next one."""
    node: dict[str, Any] = copy.deepcopy(LOCATION)
    for _ in range(links):
        node = {"type": "binary", "operator": "AND", "left": node, "right": LOCATION}
    return node


def _facet_nesting(levels: int) -> dict[str, Any]:
    """A subset facet whose JSON nests exactly ``levels`` deep."""
    facet = {"inputCondition": _chain(levels - 3), "_producer": PRODUCER, "_schemaURL": INPUT_URL}
    assert _depth(facet) == levels
    return facet


# --- the command: one unusable input never hides the others ---------------------------------

BOM_THEN_NOT_UTF8 = b'\xef\xbb\xbf{\n  "subset": "\xff"\n}\n'
UNUSABLE_FILES: dict[str, tuple[bytes, str]] = {
    "huge_integer.json": (
        _with_extra("1" * 4301).encode(),
        "not usable JSON at $.subset.extra: an integer of 4301 digits",
    ),
    "negative_huge_integer.json": (
        _with_extra("-" + "9" * 5000).encode(),
        "not usable JSON at $.subset.extra: an integer of 5000 digits",
    ),
    "not_utf8.json": (
        b'{"subset": "caf\xe9"}',
        "not UTF-8 text (invalid continuation byte at byte 15)",
    ),
    "not_json.json": (
        b'{"subset": ',
        "not valid JSON: the text is cut short: it ends at line 1, column 11, inside its JSON "
        "value",
    ),
    "nan.json": (_with_extra("NaN").encode(), "at $.subset.extra: NaN is not JSON"),
    "infinity.json": (_with_extra("[1, -Infinity]").encode(), "at $.subset.extra[1]: -Infinity"),
    "duplicate_key.json": (
        b'{"subset": {"inputCondition": {"type": "location", "type": "binary"}}}',
        "not usable JSON at $.subset.inputCondition: the key 'type' appears more than once",
    ),
    "deep.json": (
        _deep_text({"subset": _facet_nesting(LIMIT)}).encode(),
        "not usable JSON at $.subset.inputCondition" + ".left" * (LIMIT - 3) + ".locations: nested",
    ),
    "deeper_than_python.json": (
        b"[" * 100_000 + b"]" * 100_000,
        "nested too deeply: more than 512",
    ),
    "empty.json": (b" \n\t\r\n", "empty file, expected JSON"),
    "bom_then_not_utf8.json": (
        BOM_THEN_NOT_UTF8,  # the byte order mark counts in the offset
        f"not UTF-8 text (invalid start byte at byte {BOM_THEN_NOT_UTF8.index(0xFF)})",
    ),
    "empty_array.json": (b"[]", "empty array, expected documents"),
}


def test_every_unusable_file_is_reported_and_every_other_file_checked(tmp_path: Path) -> None:
    paths = []
    for name, (content, _) in UNUSABLE_FILES.items():
        (tmp_path / name).write_bytes(content)
        paths += [str(tmp_path / name), str(tmp_path / f"{name}.valid.json")]
        (tmp_path / f"{name}.valid.json").write_text(_text(VALID))
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    (tmp_path / "invalid.json").write_text(_text(INVALID))
    extra = [str(tmp_path / "loop.json"), str(tmp_path / "missing.json")]
    done = _run(*paths, *extra, str(tmp_path / "invalid.json"))
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    for name, (_, fragment) in UNUSABLE_FILES.items():
        (line,) = (line for line in lines if line.startswith(f"{tmp_path / name}: "))
        assert line.startswith(f"{tmp_path / name}: error: ") and fragment in line, line
        assert f"{tmp_path / name}.valid.json: valid" in lines
    assert (
        f"{tmp_path / 'loop.json'}: error: cannot read: Too many levels of symbolic links" in lines
    )
    assert f"{tmp_path / 'missing.json'}: error: no such file" in lines
    assert any(line.startswith(f"{tmp_path / 'invalid.json'}: $.subset.") for line in lines)
    count = len(UNUSABLE_FILES)
    assert (
        lines[-1]
        == f"{count + 1} document(s): {count} valid, 1 invalid; {count + 2} input(s) unusable"
    )


def test_each_line_of_json_lines_stands_alone(tmp_path: Path) -> None:
    lines = [
        _text(VALID).encode(),
        _with_extra("1" * 5000).encode(),
        b'{"subset": "\xff"}',
        _with_extra("Infinity").encode(),
        b'{"a": 1, "a": 1}',
        b"{not json",
        b"[" * 600 + b"]" * 600,
        b"\xef\xbb\xbf" + _text(VALID).encode(),  # a byte order mark only starts a file
        _text(INVALID).encode(),
        b"",
        _text(VALID).encode(),
    ]
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    done = _run(str(path))
    assert done.returncode == 2
    offset_of_3 = len(lines[0]) + len(lines[1]) + 2
    assert done.stdout.splitlines() == [
        f"{path}:1: valid",
        f"{path}:2: error: not usable JSON at $.subset.extra: an integer of 5000 digits; this "
        "version reads at most 4300 (Python's limit)",
        f"{path}:3: error: not UTF-8 text (invalid start byte at byte {offset_of_3 + 12})",
        f"{path}:4: error: not usable JSON at $.subset.extra: Infinity is not JSON (JSON has no "
        "NaN or Infinity)",
        f"{path}:5: error: not usable JSON at $: the key 'a' appears more than once in one object,"
        " and JSON readers disagree on which value counts",
        f"{path}:6: error: not valid JSON: Expecting property name enclosed in double quotes "
        "(column 2)",
        f"{path}:7: error: not usable JSON at $" + "[0]" * LIMIT + ": nested too deeply: more "
        "than 512 levels of objects and arrays, the most this version reads; write long AND/OR "
        "chains as balanced trees (openlineage_subset.all_of / any_of)",
        f"{path}:8: error: not valid JSON: a byte order mark (U+FEFF) only starts an input",
        f"{path}:9: $.subset.inputCondition.type: unknown type 'nope', expected one of "
        "'location', 'partition', 'binary', 'compare'",
        f"{path}:11: valid",
        "3 document(s): 2 valid, 1 invalid; 7 input(s) unusable",
    ]


@pytest.mark.parametrize(
    "number",
    [
        "1e400",
        "-1e400",
        "1" * 5000 + ".5",
        "0." + "1" * 5000 + "e-99999",
        "9" * 4300,
        "-" + "9" * 4300,
    ],
)
def test_numbers_python_reads_are_accepted(tmp_path: Path, number: str) -> None:
    path = tmp_path / "number.json"
    path.write_text(_with_extra(number))
    done = _run(str(path))
    assert (done.returncode, done.stdout.splitlines()[0]) == (0, f"{path}: valid")


def test_a_byte_order_mark_may_start_a_file_and_line_breaks_in_strings_stay(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(VALID, indent=2).encode())
    # U+2028 and U+0085 are line breaks to str.splitlines, not to JSON Lines.
    document = copy.deepcopy(VALID)
    document["subset"]["inputCondition"]["locations"] = ["s3://a\u2028b\x85c"]
    lines = tmp_path / "separators.jsonl"
    lines.write_text(json.dumps(document, ensure_ascii=False) + "\n", encoding="utf-8")
    done = _run(str(path), str(lines))
    assert done.returncode == 0
    assert done.stdout.splitlines()[:2] == [f"{path}: valid", f"{lines}:1: valid"]


def test_a_lower_integer_limit_of_python_is_an_unusable_input(tmp_path: Path) -> None:
    path = tmp_path / "number.json"
    path.write_text(_with_extra("7" * 1000))
    environment = {**os.environ, "PYTHONINTMAXSTRDIGITS": "640"}
    done = subprocess.run(
        [*COMMAND, str(path)], capture_output=True, text=True, env=environment, check=False
    )
    assert (done.returncode, done.stderr) == (2, "")
    # Python's own words: "(640 digits)" from 3.11 on, "(640)" in 3.10.
    assert done.stdout.startswith(f"{path}: error: not usable JSON: Exceeds the limit (640")


# --- standard input is read like a file ------------------------------------------------------


def test_standard_input_is_decoded_strictly() -> None:
    done = _run_bytes("-", stdin=b'{"subset": "\xc3\x28"}')
    assert done.returncode == 2
    assert done.stdout.splitlines()[0] == (
        "<stdin>: error: not UTF-8 text (invalid continuation byte at byte 12)"
    )


def test_standard_input_holds_a_document_an_array_or_json_lines() -> None:
    pretty = json.dumps(VALID, indent=2).encode()
    done = _run_bytes("-", stdin=pretty)
    assert (done.returncode, done.stdout.splitlines()[0]) == (0, "<stdin>: valid")
    done = _run_bytes("-", stdin=_text([VALID, INVALID]).encode())
    assert done.returncode == 1 and done.stdout.splitlines()[0] == "<stdin>[0]: valid"
    done = _run_bytes("-", stdin=f"{_text(VALID)}\n\n{_text(INVALID)}\n".encode())
    assert done.returncode == 1
    assert done.stdout.splitlines()[:2] == [
        "<stdin>:1: valid",
        "<stdin>:3: $.subset.inputCondition.type: unknown type 'nope', expected one of "
        "'location', 'partition', 'binary', 'compare'",
    ]


def test_empty_and_closed_standard_input_are_unusable() -> None:
    done = _run_bytes("-", stdin=b"")
    assert (done.returncode, done.stdout.splitlines()[0]) == (
        2,
        "<stdin>: error: empty file, expected JSON",
    )
    script = f"exec {shlex.join(COMMAND)} - <&-"
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (2, "")
    assert done.stdout.splitlines()[0] == "<stdin>: error: standard input is closed"


# --- closed output ---------------------------------------------------------------------------


def _environment(*, buffered: bool) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return environment if buffered else {**environment, "PYTHONUNBUFFERED": "1"}


@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_closed_output_pipe_stops_quietly_with_141(
    tmp_path: Path, output_format: str, buffered: bool
) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text((_text(VALID) + "\n") * 20_000)  # far more output than a pipe buffers
    child = subprocess.Popen(
        [*COMMAND, "--format", output_format, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(buffered=buffered),
    )
    assert child.stdout is not None and child.stderr is not None
    first = child.stdout.readline()
    child.stdout.close()  # as `| head -1` does
    assert child.wait(timeout=60) == 141
    assert first in (f"{path}:1: valid\n".encode(), b"{\n")
    assert child.stderr.read() == b""


@pytest.mark.parametrize("buffered", [True, False])
def test_output_nobody_reads_stops_quietly_with_141(tmp_path: Path, buffered: bool) -> None:
    path = tmp_path / "valid.json"
    path.write_text(_text(VALID))
    child = subprocess.Popen(
        [*COMMAND, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(buffered=buffered),
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # as `| true` does: the output, all buffered, fails at the last flush
    assert child.wait(timeout=60) == 141
    assert child.stderr.read() == b""


def test_a_closed_standard_output_still_gives_the_status(tmp_path: Path) -> None:
    path = tmp_path / "invalid.json"
    path.write_text(_text(INVALID))
    script = f"exec {shlex.join([*COMMAND, str(path)])} >&-"
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (1, "")


# --- reading: one line at a time -------------------------------------------------------------


class _Tape:
    """A byte stream that counts the lines it has handed out."""

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines
        self.handed_out = 0

    def readline(self, size: int = -1) -> bytes:  # every line here is shorter than size
        if self.handed_out == len(self._lines):
            return b""
        self.handed_out += 1
        return self._lines[self.handed_out - 1]

    def read(self, size: int = -1) -> bytes:
        rest = self._lines[self.handed_out :]
        self.handed_out = len(self._lines)
        return b"".join(rest)


@pytest.mark.parametrize("json_lines", [True, False])
def test_json_lines_are_read_one_line_at_a_time(json_lines: bool) -> None:
    tape = _Tape([(_text(VALID) + "\n").encode()] * 50)
    seen = []
    for result in _documents("x", tape, json_lines=json_lines):
        assert result.error is None and result.line is not None
        # A .jsonl file is read up to the line reported; any other input one line further,
        # to tell one document on one line from JSON Lines.
        ahead = 1 if not json_lines and result.line == 1 else 0
        assert tape.handed_out == result.line + ahead
        seen.append(result.line)
    assert seen == list(range(1, 51))


class _FailingTape(_Tape):
    def readline(self, size: int = -1) -> bytes:
        if self.handed_out == 2:
            raise OSError(5, "Input/output error")
        return super().readline(size)


def test_a_read_error_ends_the_input_after_what_was_read() -> None:
    tape = _FailingTape([(_text(VALID) + "\n").encode()] * 5)
    results = list(_documents("x", tape, json_lines=True))
    assert [(r.line, r.error) for r in results] == [
        (1, None),
        (2, None),
        (None, "cannot read: Input/output error after line 2"),
    ]


def test_an_unreadable_folder_is_reported_and_the_rest_checked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "hidden.json").write_text(_text(VALID))
    (tmp_path / "seen.json").write_text(_text(VALID))
    scandir = os.scandir

    def refusing(path: Any) -> Any:  # a folder without read permission (root reads any)
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    assert main(["validate", str(tmp_path)]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{tmp_path / 'locked'}: error: cannot read: Permission denied",
        f"{tmp_path / 'seen.json'}: valid",
        "1 document(s): 1 valid, 0 invalid; 1 input(s) unusable",
    ]


# --- escaping what is printed ----------------------------------------------------------------

_HOSTILE = st.text(
    alphabet=st.sampled_from(
        [
            *"ab/:' \\\n\r\t\x00\x07\x0b\x0c\x1b\x1c\x1d\x1e\x7f\x85\x9b\xa0\u2028\u2029\u202e",
            *"\ufeff\ud800\U0001f600",
        ]
    ),
    min_size=1,
    max_size=12,
)


def _event_with_facet_key(key: str) -> dict[str, Any]:
    event = copy.deepcopy(EVENT)
    event["run"]["facets"] = {key: 5}  # the issue's path names the key
    return event


@given(key=_HOSTILE, name=_HOSTILE.filter(lambda n: "/" not in n and n not in (".", "..")))
def test_printed_lines_cannot_be_forged(
    tmp_path_factory: pytest.TempPathFactory, key: str, name: str
) -> None:
    folder = tmp_path_factory.mktemp("escape")
    path = folder / f"{name}.json"
    try:
        path.write_text(json.dumps(_event_with_facet_key(key)), encoding="utf-8")
    except (UnicodeEncodeError, ValueError):  # a lone surrogate, a NUL: not a file name
        assume(False)
    out = io.StringIO()
    lone_surrogate = re.search("[\ud800-\udfff]", key) is not None  # no UTF-8 text holds it
    with contextlib.redirect_stdout(out):
        assert main(["validate", str(path)]) == (2 if lone_surrogate else 1)
    text = out.getvalue()
    # splitlines() breaks at every line boundary a viewer might honour, not only at \n.
    lines = text.splitlines()
    assert len(lines) == text.count("\n") == 2 and text.endswith("\n")
    assert lines[0].startswith(f"{folder}/") and lines[0].isprintable()
    if lone_surrogate:
        assert lines[1] == "0 document(s): 0 valid, 0 invalid; 1 input(s) unusable"
    else:
        assert lines[1] == "1 document(s): 0 valid, 1 invalid"


def test_escapes_are_written_as_python_writes_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a\nb\x1b[2J.json"
    path.write_text(json.dumps(_event_with_facet_key("k\n/x.json: valid\u2028")))
    assert main(["validate", str(path)]) == 1
    (line, _) = capsys.readouterr().out.splitlines()
    assert line == (
        f"{tmp_path}/a\\nb\\x1b[2J.json: $.run.facets['k\\n/x.json: valid\\u2028']: expected an "
        "object, got integer 5"
    )


def test_json_output_is_ascii_and_keeps_every_character(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key = "k\n\x1b\u2028\U0001f600é"  # a lone surrogate makes the input unusable: see below
    path = tmp_path / "a\nb.json"
    path.write_text(json.dumps(_event_with_facet_key(key)))
    assert main(["validate", "--format", "json", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.isascii()
    report = json.loads(out)
    assert out == json.dumps(report, indent=2) + "\n"  # what json.dump(..., indent=2) writes
    (result,) = report["results"]
    assert result["file"] == str(path)
    assert result["issues"][0]["path"] == f"$.run.facets['{key}']"


def test_output_in_ascii_stays_readable(tmp_path: Path) -> None:
    path = tmp_path / "zażółć.json"
    path.write_text(json.dumps(_event_with_facet_key("kraj_ź")), encoding="utf-8")
    environment = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run(
        [*COMMAND, str(path)], capture_output=True, text=True, env=environment, check=False
    )
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout.startswith(f"{tmp_path}/za\\u017c\\xf3\\u0142\\u0107.json: $.run.facets")


# --- the Python API: deep and cyclic values --------------------------------------------------


def _event_with_subset(facet: dict[str, Any]) -> dict[str, Any]:
    event = copy.deepcopy(EVENT)
    event["inputs"][0]["inputFacets"]["subset"] = facet
    return event


def _model_nesting(levels: int) -> Any:
    """A subset facet model whose JSON nests exactly ``levels`` deep."""
    condition = location(["s3://b/k"])
    for _ in range(levels - 3):
        condition = condition & location(["s3://b/k"])
    facet = input_facet(condition, producer=PRODUCER)
    assert _depth(dump(facet)) == levels
    return facet


def _event_nesting(levels: int) -> dict[str, Any]:
    event = _event_with_subset(_facet_nesting(levels - 4))
    assert _depth(event) == levels
    return event


# Each public function, on a value that nests ``levels`` deep.
APIS: dict[str, Callable[[int], object]] = {
    "parse_facet": lambda levels: parse_facet(_facet_nesting(levels)),
    "parse_event": lambda levels: parse_event(_event_nesting(levels)),
    "render": lambda levels: render(_facet_nesting(levels)),
    "matches": lambda levels: matches(_facet_nesting(levels), {}, path="s3://b/k/part-0"),
    "dump": lambda levels: dump(_model_nesting(levels)),
    "validate": lambda levels: validate(_facet_nesting(levels)),
}
# Where each first passes the limit, in document order: the ``locations`` array of the
# innermost location (an event puts 4 levels above the facet).
TOO_DEEP_AT = {
    **dict.fromkeys(APIS, "$.inputCondition" + ".left" * (LIMIT - 2) + ".locations"),
    "parse_event": "$.inputs[0].inputFacets.subset.inputCondition"
    + ".left" * (LIMIT - 6)
    + ".locations",
}


@pytest.mark.parametrize("api", APIS)
def test_the_nesting_limit_is_the_documented_one(api: str) -> None:
    APIS[api](LIMIT)  # the limit itself is fine
    if api == "validate":
        (issue,) = APIS[api](LIMIT + 1)  # type: ignore[misc]
    else:
        with pytest.raises(SubsetDocumentError) as raised:
            APIS[api](LIMIT + 1)
        (issue,) = raised.value.issues
    assert issue.path == TOO_DEEP_AT[api]
    assert issue.message.startswith(f"nested too deeply: more than {LIMIT} levels")


@pytest.mark.parametrize("api", APIS)
def test_the_limit_holds_on_a_nearly_full_stack(api: str) -> None:
    limit_before = sys.getrecursionlimit()

    def call_with_frames_left(frames: int) -> object:
        depth, frame = 0, sys._getframe()
        while frame.f_back is not None:
            depth, frame = depth + 1, frame.f_back
        if sys.getrecursionlimit() - depth > frames:
            return call_with_frames_left(frames)
        return APIS[api](LIMIT)

    call_with_frames_left(40)
    assert sys.getrecursionlimit() == limit_before


def _cyclic_facet() -> dict[str, Any]:
    condition: dict[str, Any] = {"type": "binary", "operator": "AND", "right": LOCATION}
    condition["left"] = condition
    return {"inputCondition": condition, "_producer": PRODUCER, "_schemaURL": INPUT_URL}


CYCLIC: dict[str, Callable[[dict[str, Any]], object]] = {
    "parse_facet": parse_facet,
    "parse_event": lambda facet: parse_event(_event_with_subset(facet)),
    "render": render,
    "matches": lambda facet: matches(facet, {}, path="s3://b/k"),
    "validate": validate,
}


@pytest.mark.parametrize("api", CYCLIC)
def test_a_value_that_contains_itself_is_refused(api: str) -> None:
    if api == "validate":
        (issue,) = validate(_cyclic_facet())
    else:
        with pytest.raises(SubsetDocumentError) as raised:
            CYCLIC[api](_cyclic_facet())
        (issue,) = raised.value.issues
    above = "$.inputs[0].inputFacets.subset" if api == "parse_event" else "$"
    assert issue.path == f"{above}.inputCondition.left"
    assert issue.message.startswith(f"contains itself (the value at {above}.inputCondition)")


def test_deep_and_cyclic_models_rows_and_schemas_are_refused() -> None:
    condition = field("a") == 1
    for _ in range(LIMIT):
        condition = condition & (field("a") == 1)
    for call in (dump, render, lambda c: matches(c, {"a": 1})):
        with pytest.raises(SubsetDocumentError, match=f"more than {LIMIT} levels"):
            call(condition)
    model = field("a") == 1
    model.additional_properties["self"] = model
    with pytest.raises(SubsetDocumentError, match=r"\$\.self: contains itself"):
        dump(model)
    deep_value: list[Any] = []
    for _ in range(LIMIT * 2):
        deep_value = [deep_value]
    with pytest.raises(SubsetDocumentError, match="cannot read the row"):
        matches(field("a") == 1, {"a": deep_value})
    with pytest.raises(SubsetDocumentError, match="cannot read the schema"):
        matches(field("a") == 1, {"a": 1}, {"a": deep_value})


def test_deep_walks_in_threads_share_the_recursion_limit() -> None:
    limit_before = sys.getrecursionlimit()
    facet = _facet_nesting(LIMIT)
    failures: list[BaseException] = []

    def check() -> None:
        try:
            for _ in range(10):
                assert validate(facet) == []
                parse_facet(facet)
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=check) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sys.getrecursionlimit() == limit_before
