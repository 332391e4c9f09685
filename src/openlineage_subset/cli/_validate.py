"""``ol-subset validate PATH... [--strict] [--format text|json]``: the conformance gate.

It checks JSON files (a facet map, a subset facet, an event, or an array of them), JSON Lines
files (one document per line) and folders of them; ``-`` is standard input, read like a file.
Exit status: 0 all valid, 1 something invalid, 2 some input unusable, 141 (128 + SIGPIPE) when
the reader of the output went away before the end (``| head``): the command stops quietly and
never claims success for what it did not check. Every message names the file (and line), the
JSON path and the problem. An event's ``olsubset_partitionMapping`` output facets (this
project's custom facet) that name its schema are checked too.

It takes its input as hostile:

- each input, and each line of a JSON Lines input, stands alone: one that is unusable (missing,
  unreadable, not UTF-8, not JSON) is reported where it is, and every other is still checked;
- input is read as bytes and decoded strictly as UTF-8 (a leading byte order mark is skipped);
- JSON Lines are read a line at a time, never more than the line limit (``--max-line-bytes``,
  ``$OL_SUBSET_MAX_LINE_BYTES``, 16 MiB by default): a longer line is unusable, reported with
  its number, and the next one is checked; a ``.json`` file or standard input is JSON Lines when
  its first line is a JSON value by itself, and is otherwise one document, read whole up to the
  same limit;
- what Python's ``json`` reads but JSON does not allow, or JSON readers disagree on, is unusable:
  ``NaN`` and ``Infinity``, an integer of more than 4,300 digits, a key repeated in one object,
  nesting deeper than 512 levels, a lone surrogate (``"\\ud800"``, which no UTF-8 text holds);
- text output writes control characters, line separators and the like as Python escapes
  (``\\n``, ``\\x1b``): a line always starts with the name of the input it is about. JSON output
  is ASCII, escaped by ``json.dumps``;
- a closed standard input is an unusable input; with standard output closed (``>&-``) nothing
  is printed and the exit status still tells.
"""

from __future__ import annotations

import abc
import argparse
import contextlib
import io
import json
import os
import re
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from openlineage_subset import (
    DEFAULT_MAX_LINE_BYTES,
    LongLine,
    ParsedJson,
    UnusableJson,
    ValidationIssue,
    custom_facet_issues,
    document_kind,
    input_start,
    max_line_bytes,
    misplaced_subset_facets,
    parse_json,
    read_at_most,
    read_lines,
    too_big,
    validate,
    without_subset_facet,
)
from openlineage_subset.cli._output import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_OUTPUT_CLOSED,
    EXIT_UNUSABLE,
    cannot_read,
    discard_standard_output,
    printable,
)

_JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
_FOLDER_SUFFIXES = (".json", *_JSON_LINES_SUFFIXES)
_STDIN = "<stdin>"
_BLANK = re.compile(rb"[ \t\r\n]*").fullmatch  # JSON's whitespace, no more


@dataclass
class _Result:
    """One document's outcome, or one unusable input (``error`` set)."""

    source: str
    line: int | None = None
    index: int | None = None
    issues: list[ValidationIssue] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    no_subset: str | None = None
    """What the document is when it holds no subset facet (an event without one, another
    facet); then it is neither valid nor invalid, unless subset facets are required."""
    checked: bool = True
    """False for another producer's facet, which this command does not check."""
    document: Any = field(default=None, repr=False)
    unreadable: bool = False
    """The input itself could not be read (missing, a read error, standard input closed, a
    folder with nothing to read), as opposed to what it holds: ``show`` exits 2 for it."""

    @property
    def where(self) -> str:
        if self.line is not None:
            return f"{self.source}:{self.line}"
        if self.index is not None:
            return f"{self.source}[{self.index}]"
        return self.source

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.source,
            "line": self.line,
            "index": self.index,
            "valid": self.error is None and not self.issues if self.checked else None,
            "error": self.error,
            "noSubsetFacet": self.no_subset,
            "issues": [
                {"path": issue.path, "message": issue.message, "rule": issue.rule}
                for issue in self.issues
            ],
            "warnings": self.warnings,
        }


def validate_command(args: argparse.Namespace) -> int:
    try:
        limit = max_line_bytes(args.max_line_bytes)
    except ValueError as error:
        print(f"ol-subset validate: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    with contextlib.ExitStack() as closing:
        # With standard output closed (>&-) there is nowhere to print: the status still tells.
        out = sys.stdout or closing.enter_context(open(os.devnull, "w", encoding="utf-8"))
        if isinstance(out, io.TextIOWrapper):
            # Escaped text is printable, but maybe not in the output's encoding (ASCII, cp1252).
            out.reconfigure(errors="backslashreplace")
        report = _JsonReport(out) if args.format == "json" else _TextReport(out)
        try:
            for path in args.paths:
                for result in read_input(path, limit):
                    if result.error is None:
                        _check(result, args.strict, args.require_subset)
                    report.add(result)
            report.close()
            out.flush()
        except BrokenPipeError:
            discard_standard_output()
            return EXIT_OUTPUT_CLOSED
        return report.status


def _check(result: _Result, strict: bool, require_subset: bool) -> None:
    result.no_subset = without_subset_facet(result.document)
    result.checked = result.no_subset is None or document_kind(result.document) == "event"
    if result.checked:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result.issues = validate(result.document, strict=strict)
            result.issues += _custom_facet_issues(result.issues, result.document, strict)
        result.warnings = [str(warning.message) for warning in caught]
        if not strict:  # strict: issues of the validation; lenient: said, not counted
            result.warnings += [str(issue) for issue in misplaced_subset_facets(result.document)]
    if result.no_subset is not None and require_subset:
        result.checked = True
        result.issues.append(ValidationIssue("$", f"no subset facet: {result.no_subset}"))
    result.document = None  # a JSON Lines input holds one document at a time


def _custom_facet_issues(
    reported: list[ValidationIssue], document: Any, strict: bool
) -> list[ValidationIssue]:
    """The issues of an event's facets of this package (``olsubset_partitionMapping``,
    ``olsubset_streamingBatch``) that ``validate`` has not reported already (the core schema
    checks a facet's ``_producer`` and ``_schemaURL`` too)."""
    if not isinstance(document, dict) or document_kind(document) != "event":
        return []
    seen = {(issue.path, issue.message) for issue in reported}
    found = custom_facet_issues(document, strict=strict)
    return [issue for issue in found if (issue.path, issue.message) not in seen]


def read_input(path_text: str, limit: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[_Result]:
    """The documents of one command-line input, each a result with its document or the error
    that makes it unusable: a file (JSON Lines; or, unless named ``.jsonl`` or ``.ndjson``, one
    document or an array of them when its first line is not a JSON value by itself), a folder
    (its ``.json``, ``.jsonl`` and ``.ndjson`` files, in the order of their paths) or ``-``
    (standard input, read like a file). What ``validate`` checks and ``show`` prints: JSON Lines
    are read a line at a time, a document read whole is held to ``limit``."""
    if path_text == "-":
        if sys.stdin is None:
            yield _Result(_STDIN, error="standard input is closed", unreadable=True)
        else:
            yield from _documents(_STDIN, sys.stdin.buffer, json_lines=False, limit=limit)
        return
    path = Path(path_text)
    try:
        is_folder = path.is_dir()
        stream = None if is_folder else path.open("rb")
    except FileNotFoundError:
        yield _Result(path_text, error="no such file", unreadable=True)
        return
    except OSError as error:
        yield _Result(path_text, error=cannot_read(error), unreadable=True)
        return
    if stream is None:
        yield from _read_folder(path_text, limit)
        return
    with stream:
        json_lines = path.suffix in _JSON_LINES_SUFFIXES
        yield from _documents(path_text, stream, json_lines=json_lines, limit=limit)


def _read_folder(path_text: str, limit: int) -> Iterator[_Result]:
    unreadable: list[_Result] = []

    def report(error: OSError) -> None:
        where = str(error.filename or path_text)
        unreadable.append(_Result(where, error=cannot_read(error), unreadable=True))

    found = sorted(
        path
        for folder, _, names in os.walk(path_text, onerror=report)
        for path in (Path(folder, name) for name in names)
        if path.suffix in _FOLDER_SUFFIXES and path.is_file()
    )
    if not found and not unreadable:
        message = "folder holds no .json, .jsonl or .ndjson file"
        yield _Result(path_text, error=message, unreadable=True)
    yield from unreadable
    for child in found:
        yield from read_input(str(child), limit)


def _documents(
    source: str, stream: BinaryIO, *, json_lines: bool, limit: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[_Result]:
    """The documents of one input, each as a result; a read error ends the input."""
    lines = _Lines(stream, limit)
    try:
        if json_lines:
            yield from _json_lines(source, lines)
        else:
            yield from _json_or_json_lines(source, lines)
    except OSError as error:
        after = f" after line {lines.number}" if lines.number else ""
        yield _Result(source, error=f"{cannot_read(error)}{after}", unreadable=True)


Line = tuple[int, int, bytes | LongLine]
"""(number from 1, byte offset, bytes; or what stands for a line over the limit)"""


class _Lines:
    """The lines of a byte stream (see :func:`read_lines`), without a leading BOM."""

    def __init__(self, stream: BinaryIO, limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.number = 0
        self._lines = read_lines(stream, limit)

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> Line:
        self.number, start, line = next(self._lines)
        if isinstance(line, bytes):
            line, start = input_start(line, start)
        return self.number, start, line


def _json_lines(source: str, lines: Iterator[Line], *, empty: bool = True) -> Iterator[_Result]:
    for number, offset, raw in lines:
        result = _line_result(source, number, offset, raw)
        if result is not None:
            empty = False
            yield result
    if empty:
        yield _Result(source, error="empty file, expected JSON")


def _line_result(source: str, number: int, offset: int, raw: bytes | LongLine) -> _Result | None:
    """The result of one line of JSON Lines; None for a blank line."""
    if isinstance(raw, LongLine):
        return _long_line(source, number, raw)
    if _BLANK(raw):
        return None
    try:
        parsed = parse_json(raw, offset=offset)
    except UnusableJson as problem:
        return _Result(source, line=number, error=str(problem))
    return _usable(_Result(source, line=number, document=parsed.value), parsed)


def _long_line(source: str, number: int, line: LongLine) -> _Result:
    # a line with no end stops the reading: the rest of the input is unreadable
    return _Result(source, line=number, error=str(line), unreadable=not line.ended)


def _json_or_json_lines(source: str, lines: _Lines) -> Iterator[_Result]:
    """A document (or array), or JSON Lines when the first line is a JSON value by itself."""
    read: list[bytes] = []  # the lines up to the first non-blank one, for a document over lines
    size = 0  # their bytes, which count in the limit of a document read whole
    start = None
    for line in lines:
        start = line[1] if start is None else start
        if isinstance(line[2], LongLine):  # one document or JSON Lines: the rest tells
            yield _long_line(source, line[0], line[2])
            yield from _json_lines(source, lines, empty=False)
            return
        if size <= lines.limit:  # past it, only the size counts: the document is refused
            read.append(line[2])
        size += len(line[2])
        if not _BLANK(line[2]):
            break
    else:
        yield _Result(source, error="empty file, expected JSON")
        return
    number, offset, raw = line
    assert isinstance(raw, bytes)
    try:
        parsed = parse_json(raw, offset=offset)
    except UnusableJson:
        rest = read_at_most(lines.stream, max(lines.limit - size, 0))
        if rest is None or size > lines.limit:
            yield _Result(source, error=too_big(lines.limit))
            return
        yield from _whole_document(source, b"".join(read) + rest, start or 0)
        return
    for second in lines:
        if isinstance(second[2], LongLine) or not _BLANK(second[2]):
            yield _usable(_Result(source, line=number, document=parsed.value), parsed)
            yield from _json_lines(source, _chain(second, lines))
            return
    yield from _results(source, parsed)


def _chain(first: Line, rest: _Lines) -> Iterator[Line]:
    yield first
    yield from rest


def _whole_document(source: str, data: bytes, offset: int) -> Iterator[_Result]:
    try:
        parsed = parse_json(data, offset=offset, one_line=False)
    except UnusableJson as problem:
        yield _Result(source, error=str(problem))
        return
    yield from _results(source, parsed)


def _results(source: str, parsed: ParsedJson) -> Iterator[_Result]:
    """An input holding one document, or an array of them."""
    document = parsed.value
    if not isinstance(document, list):
        yield _usable(_Result(source, document=document), parsed)
        return
    if not document:
        yield _Result(source, error="empty array, expected documents")
    for index, item in enumerate(document):
        yield _usable(_Result(source, index=index, document=item), parsed)


def _usable(result: _Result, parsed: ParsedJson) -> _Result:
    """The result, or an unusable one if its document holds what JSON does not allow."""
    problem = parsed.problem_in(result.document)
    if problem is not None:
        result.error, result.document = problem, None
    return result


class _Report(abc.ABC):
    """Writes each result as it comes, and counts them for the summary and the exit status."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.counts: Counter[str] = Counter()

    def add(self, result: _Result) -> None:
        self.write(result, first=not self.counts)
        if result.error is not None:
            self.counts["unusable"] += 1
        elif result.issues:
            self.counts["invalid"] += 1
        elif result.no_subset is not None:
            self.counts["no subset"] += 1
        else:
            self.counts["valid"] += 1

    @property
    def documents(self) -> int:
        return sum(self.counts[kind] for kind in ("valid", "invalid", "no subset"))

    @abc.abstractmethod
    def write(self, result: _Result, *, first: bool) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    @property
    def status(self) -> int:
        if self.counts["unusable"]:
            return EXIT_UNUSABLE
        if self.counts["invalid"]:
            return EXIT_INVALID
        return EXIT_OK


class _TextReport(_Report):
    def write(self, result: _Result, *, first: bool) -> None:
        where = result.where
        if result.error is not None:
            self._line(f"{where}: error: {result.error}")
            return
        for warning in result.warnings:
            self._line(f"{where}: warning: {warning}")
        if not result.issues and result.no_subset is not None:
            checked = "valid, " if result.checked else "not checked, "
            self._line(f"{where}: {checked}no subset facet: {result.no_subset}")
        elif not result.issues:
            self._line(f"{where}: valid")
        for issue in result.issues:
            tag = " [strict]" if issue.rule == "strict" else ""
            self._line(f"{where}: {issue.path}: {issue.message}{tag}")

    def close(self) -> None:
        valid, invalid, unusable = (self.counts[k] for k in ("valid", "invalid", "unusable"))
        without = self.counts["no subset"]
        self._line(
            f"{self.documents} document(s): {valid} valid, {invalid} invalid"
            + (f", {without} without a subset facet" if without else "")
            + (f"; {unusable} input(s) unusable" if unusable else "")
        )

    def _line(self, text: str) -> None:
        self.out.write(printable(text) + "\n")


class _JsonReport(_Report):
    """The report ``json.dump(..., indent=2)`` would write, one result at a time."""

    def write(self, result: _Result, *, first: bool) -> None:
        opening = '{\n  "results": [\n' if first else ",\n"
        text = json.dumps(result.as_json(), indent=2)
        self.out.write(opening + "    " + text.replace("\n", "\n    "))

    def close(self) -> None:
        valid, invalid, unusable = (self.counts[k] for k in ("valid", "invalid", "unusable"))
        summary = {
            "documents": self.documents,
            "valid": valid,
            "invalid": invalid,
            "withoutSubsetFacet": self.counts["no subset"],
            "unusable": unusable,
        }
        closing = "\n  ],\n" if self.counts else '{\n  "results": [],\n'
        text = json.dumps(summary, indent=2)
        self.out.write(closing + '  "summary": ' + text.replace("\n", "\n  ") + "\n}\n")
