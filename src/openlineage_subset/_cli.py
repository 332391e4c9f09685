"""The ``ol-subset`` command line.

``ol-subset validate PATH... [--strict] [--format text|json]`` checks JSON files (a facet map,
a subset facet, an event, or an array of them), JSON Lines files (one document per line) and
folders of them. Exit status: 0 all valid, 1 something invalid, 2 some input unusable (missing,
unreadable, not JSON). Every message names the file (and line), the JSON path and the problem.

``ol-subset run [--output FILE] [--namespace NS] SCRIPT.py [ARGS...]`` runs a PySpark script
with capture enabled; ``ol-subset demo`` runs the demo pipeline. Both need the ``spark`` extra
and a Java runtime, and say so in one line when either is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from openlineage_subset._issues import ValidationIssue
from openlineage_subset._validate import validate

EXIT_VALID, EXIT_INVALID, EXIT_UNUSABLE = 0, 1, 2
_JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
_FOLDER_SUFFIXES = (".json", *_JSON_LINES_SUFFIXES)


@dataclass
class _Result:
    """One document's outcome, or one unusable input (``error`` set)."""

    source: str
    line: int | None = None
    index: int | None = None
    issues: list[ValidationIssue] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    document: Any = field(default=None, repr=False)

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
            "valid": self.error is None and not self.issues,
            "error": self.error,
            "issues": [
                {"path": issue.path, "message": issue.message, "rule": issue.rule}
                for issue in self.issues
            ],
            "warnings": self.warnings,
        }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ol-subset``; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_UNUSABLE
    try:
        status: int = args.handler(args)
    except KeyboardInterrupt:
        return 130
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ol-subset", description="OpenLineage subset dataset facets: validate, capture, demo."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "validate",
        help="validate facet maps, subset facets and OpenLineage events",
        description=(
            "Validate JSON files (a facet map, a subset facet, an OpenLineage event, or an array "
            "of them), JSON Lines files (.jsonl/.ndjson, one document per line) and folders of "
            "them. '-' reads standard input. Exit 0 when all are valid, 1 when any is invalid, "
            "2 when an input is unusable."
        ),
    )
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument(
        "--strict",
        action="store_true",
        help="also enforce the rules the schema states only in prose (allowed values, "
        "_schemaURL, facet roles, formats)",
    )
    check.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    check.set_defaults(handler=_validate_command)
    run = commands.add_parser(
        "run",
        help="run a PySpark script with lineage capture on",
        description=(
            "Run an unmodified PySpark script with subset-facet capture enabled for every "
            "SparkSession it creates. Options come before the script; everything after the "
            "script goes to it. Events go to FILE as JSON Lines unless openlineage-python is "
            "configured (openlineage.yml, OPENLINEAGE_URL, OPENLINEAGE__TRANSPORT__...)."
        ),
    )
    run.add_argument("--output", metavar="FILE", help="JSON Lines file for the events")
    run.add_argument("--namespace", metavar="NS", help="namespace of the jobs")
    run.add_argument("script", metavar="SCRIPT.py")
    run.add_argument("arguments", nargs=argparse.REMAINDER, metavar="ARGS")
    run.set_defaults(handler=_run_command)
    demo = commands.add_parser(
        "demo",
        help="run the demo pipeline on local Spark and show its lineage",
        description=(
            "Generate a small partitioned sales dataset, run a daily pipeline on local Spark "
            "with capture on, validate the events and print what each run read and wrote."
        ),
    )
    demo.add_argument("--workdir", metavar="DIR", help="where the data and events go")
    demo.set_defaults(handler=_demo_command)
    return parser


def _spark_ready(command: str) -> bool:
    """Whether the spark extra and a Java runtime are there; says what to do when not."""
    try:
        import openlineage.client  # noqa: F401, PLC0415
        import pyspark  # noqa: F401, PLC0415
    except ImportError:
        print(
            f"ol-subset {command} needs the spark extra: pip install 'openlineage-subset[spark]'",
            file=sys.stderr,
        )
        return False
    from openlineage_subset.spark._java import JAVA_HINT, find_java  # noqa: PLC0415

    if find_java() is None:
        print(f"ol-subset {command} {JAVA_HINT}", file=sys.stderr)
        return False
    return True


def _run_command(args: argparse.Namespace) -> int:
    if not Path(args.script).is_file():
        print(f"ol-subset run: {args.script}: no such file", file=sys.stderr)
        return EXIT_UNUSABLE
    if not _spark_ready("run"):
        return EXIT_UNUSABLE
    from openlineage_subset.spark._run import run_script  # noqa: PLC0415

    return run_script(args.script, args.arguments, output=args.output, namespace=args.namespace)


def _demo_command(args: argparse.Namespace) -> int:
    if not _spark_ready("demo"):
        return EXIT_UNUSABLE
    from openlineage_subset.spark._demo import run_demo  # noqa: PLC0415

    return run_demo(args.workdir)


def _validate_command(args: argparse.Namespace) -> int:
    results = []
    for path in args.paths:
        for result in _read(path):
            if result.error is None:
                _check(result, args.strict)
            results.append(result)
    _report(results, args.format, sys.stdout)
    if any(result.error is not None for result in results):
        return EXIT_UNUSABLE
    if any(result.issues for result in results):
        return EXIT_INVALID
    return EXIT_VALID


def _check(result: _Result, strict: bool) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result.issues = validate(result.document, strict=strict)
    result.warnings = [str(warning.message) for warning in caught]


def _read(path_text: str) -> Iterator[_Result]:
    if path_text == "-":
        yield from _parse_text("<stdin>", sys.stdin.read(), json_lines=False)
        return
    path = Path(path_text)
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _FOLDER_SUFFIXES)
        if not found:
            yield _Result(path_text, error="folder holds no .json, .jsonl or .ndjson file")
        for child in found:
            yield from _read(str(child))
        return
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        yield _Result(path_text, error="no such file")
        return
    except UnicodeDecodeError as error:
        yield _Result(path_text, error=f"not UTF-8 text ({error.reason} at byte {error.start})")
        return
    except OSError as error:
        yield _Result(path_text, error=f"cannot read: {error.strerror or error}")
        return
    yield from _parse_text(path_text, text, json_lines=path.suffix in _JSON_LINES_SUFFIXES)


def _parse_text(source: str, text: str, *, json_lines: bool) -> Iterator[_Result]:
    if not text.strip():
        yield _Result(source, error="empty file, expected JSON")
        return
    if not json_lines:
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            if error.msg == "Extra data" and _looks_like_json_lines(text):
                json_lines = True
            else:
                yield _Result(source, error=_json_error(error))
                return
        except RecursionError:
            yield _Result(source, error="not usable JSON: nested too deeply")
            return
        else:
            if isinstance(document, list):
                if not document:
                    yield _Result(source, error="empty array, expected documents")
                for index, item in enumerate(document):
                    yield _Result(source, index=index, document=item)
            else:
                yield _Result(source, document=document)
            return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield _Result(source, line=number, document=json.loads(line))
        except json.JSONDecodeError as error:
            yield _Result(source, line=number, error=_json_error(error))
        except RecursionError:
            yield _Result(source, line=number, error="not usable JSON: nested too deeply")


def _looks_like_json_lines(text: str) -> bool:
    try:
        for line in text.splitlines():
            if line.strip():
                json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def _json_error(error: json.JSONDecodeError) -> str:
    return f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"


def _report(results: list[_Result], output_format: str, out: TextIO) -> None:
    valid = sum(1 for r in results if r.error is None and not r.issues)
    invalid = sum(1 for r in results if r.error is None and r.issues)
    unusable = sum(1 for r in results if r.error is not None)
    if output_format == "json":
        summary = {
            "documents": valid + invalid,
            "valid": valid,
            "invalid": invalid,
            "unusable": unusable,
        }
        json.dump({"results": [r.as_json() for r in results], "summary": summary}, out, indent=2)
        out.write("\n")
        return
    for result in results:
        if result.error is not None:
            out.write(f"{result.where}: error: {result.error}\n")
            continue
        for warning in result.warnings:
            out.write(f"{result.where}: warning: {warning}\n")
        if not result.issues:
            out.write(f"{result.where}: valid\n")
        for issue in result.issues:
            tag = " [strict]" if issue.rule == "strict" else ""
            out.write(f"{result.where}: {issue.path}: {issue.message}{tag}\n")
    out.write(
        f"{valid + invalid} document(s): {valid} valid, {invalid} invalid"
        + (f"; {unusable} input(s) unusable" if unusable else "")
        + "\n"
    )
