"""The ``ol-subset`` command line: its parser, and each command's front.

- ``validate PATH...``: conformance check of facets and events (:mod:`._validate`);
- ``show EVENTS...``: what each run read and wrote (:mod:`._show`);
- ``run [--output FILE] [--namespace NS] SCRIPT.py [ARGS...]``: a PySpark script with capture on
  (:mod:`._run`); ``demo``: the demo pipeline (:mod:`._demo`). Both need the ``spark`` extra
  and a Java runtime (:mod:`._java`), and say so in one line when either is missing;
- ``connect-server``: a Spark Connect server whose clients' actions are captured
  (:mod:`._connect_server`);
- ``replay OUTBOX``: send what an outbox still holds
  (:mod:`openlineage_subset.delivery._replay`);
- ``lineage ingest|impact|provenance|history|partitions|report``: partition lineage
  (:mod:`._lineage`, :mod:`openlineage_subset.lineage`, docs/lineage.md).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from openlineage_subset import __version__
from openlineage_subset.cli._connect_server import add_connect_server_parser
from openlineage_subset.cli._java import spark_ready
from openlineage_subset.cli._lineage import add_lineage_parser
from openlineage_subset.cli._output import (
    EXIT_INTERRUPTED,
    EXIT_OUTPUT_CLOSED,
    EXIT_UNUSABLE,
    add_max_line_bytes,
    discard_standard_output,
)
from openlineage_subset.cli._run import add_capture_arguments
from openlineage_subset.cli._show import show_command
from openlineage_subset.cli._validate import validate_command
from openlineage_subset.delivery import (
    ARGUMENT_HELP,
    DEFAULT_REPLAY_TIMEOUT,
    MAX_CLOSE_TIMEOUT,
    REPLAY_DESCRIPTION,
    REPLAY_HELP,
    replay_command,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ol-subset``; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_UNUSABLE
    try:
        status: int = args.handler(args)
        if sys.stdout is not None:  # None when started with standard output closed
            sys.stdout.flush()  # output still buffered meets a closed pipe here, not at exit
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as a shell tool
        discard_standard_output()
        return EXIT_OUTPUT_CLOSED
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ol-subset",
        description="OpenLineage subset dataset facets: validate, capture, demo, lineage.",
    )
    parser.add_argument("--version", action="version", version=f"ol-subset {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "validate",
        help="validate facet maps, subset facets and OpenLineage events",
        description=(
            "Validate JSON files (a facet map, a subset facet, an OpenLineage event, or an array "
            "of them), JSON Lines files (.jsonl/.ndjson, one document per line) and folders of "
            "them. '-' reads standard input. Exit 0 when all are valid, 1 when any is invalid, "
            "2 when an input is unusable, 141 when the output pipe closes before the end."
        ),
    )
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument(
        "--strict",
        action="store_true",
        help="also enforce the rules the schema states only in prose (allowed values, "
        "_schemaURL, facet roles, formats)",
    )
    check.add_argument(
        "--require-subset",
        action="store_true",
        help="count a document without a subset facet (an event without one, another facet) as "
        "invalid; by default it is reported as such and does not fail the check",
    )
    check.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    add_max_line_bytes(check)
    check.set_defaults(handler=validate_command)
    run = commands.add_parser(
        "run",
        # SCRIPT.py is checked by the command: argparse calls ARGS required too (it is not).
        usage="ol-subset run [-h] [--output FILE] [--namespace NS] SCRIPT.py [ARGS ...]",
        help="run a PySpark script with lineage capture on",
        description=(
            "Run an unmodified PySpark script with subset-facet capture enabled for every "
            "SparkSession it creates. Options come before the script; everything after the "
            "script goes to it. Events go to FILE as JSON Lines unless openlineage-python is "
            "configured (openlineage.yml, OPENLINEAGE_URL, OPENLINEAGE__TRANSPORT__...)."
        ),
    )
    add_capture_arguments(run)
    run.add_argument("script", metavar="SCRIPT.py", nargs="?", help="the PySpark script to run")
    run.add_argument(
        "arguments", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's own arguments"
    )
    run.set_defaults(handler=_run_command, run_parser=run)
    demo = commands.add_parser(
        "demo",
        help="run the demo pipeline on local Spark and show its lineage",
        description=(
            "Generate a small partitioned sales dataset, run a daily pipeline on local Spark "
            "with capture on, validate the events and print what each run read and wrote."
        ),
    )
    demo.add_argument(
        "--workdir",
        metavar="DIR",
        help="where the data, the events and the lineage database go (default: a new "
        "temporary folder, named in the first line of output)",
    )
    demo.set_defaults(handler=_demo_command)
    show = commands.add_parser(
        "show",
        help="print what each run of an events file read and wrote",
        description=(
            "Print, for each run of the events read, what it read and wrote: one line a "
            "dataset, with its subset condition, or '(whole dataset)' when it has none. A run's "
            "events are merged (its state is the terminal one). EVENTS are read as validate "
            "reads them: JSON Lines, a .json file holding one event or a JSON array of them, "
            "folders, '-' for standard input. What is not a RunEvent is reported on standard "
            "error with file:line or file[index]. Exit 0, 1 if something was skipped, 2 if an "
            "input cannot be read."
        ),
    )
    show.add_argument("events", nargs="+", metavar="EVENTS")
    show.add_argument(
        "--relative-to",
        metavar="DIR",
        help="show file datasets inside DIR by their path relative to it (default: full names)",
    )
    add_max_line_bytes(show)
    show.set_defaults(handler=show_command)
    replay = commands.add_parser("replay", help=REPLAY_HELP, description=REPLAY_DESCRIPTION)
    replay.add_argument("outbox", metavar="OUTBOX", help=ARGUMENT_HELP["outbox"])
    replay.add_argument("--output", metavar="FILE", help=ARGUMENT_HELP["output"])
    replay.add_argument("--quarantine", metavar="FILE", help=ARGUMENT_HELP["quarantine"])
    replay.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_seconds,
        default=DEFAULT_REPLAY_TIMEOUT,
        help=ARGUMENT_HELP["timeout"],
    )
    replay.set_defaults(handler=_replay_command)
    add_connect_server_parser(commands)
    add_lineage_parser(commands)
    return parser


def _seconds(text: str) -> float:
    """A number of seconds from 0 to a day (``nan``, ``inf``, ``1e10`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= MAX_CLOSE_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds from 0 to {MAX_CLOSE_TIMEOUT:g} (a day)"
        )
    return value


def _replay_command(args: argparse.Namespace) -> int:
    return replay_command(
        args.outbox, output=args.output, quarantine=args.quarantine, timeout=args.timeout
    )


def _run_command(args: argparse.Namespace) -> int:
    if args.script is None:
        args.run_parser.error("the following argument is required: SCRIPT.py")
    if not Path(args.script).is_file():
        print(f"ol-subset run: {args.script}: no such file", file=sys.stderr)
        return EXIT_UNUSABLE
    if not spark_ready("run"):
        return EXIT_UNUSABLE
    # Imported here: the other commands start without loading capture (or needing PySpark).
    from openlineage_subset.cli._run import run_script  # noqa: PLC0415

    return run_script(args.script, args.arguments, output=args.output, namespace=args.namespace)


def _demo_command(args: argparse.Namespace) -> int:
    if not spark_ready("demo"):
        return EXIT_UNUSABLE
    from openlineage_subset.cli._demo import run_demo  # noqa: PLC0415

    return run_demo(args.workdir)
