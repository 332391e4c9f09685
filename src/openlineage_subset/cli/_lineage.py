"""``ol-subset lineage ingest|impact|provenance|history|partitions|datasets|runs|report|serve|
settings``: the command line.

Exit status: 0 done; 1 ``ingest`` stored what it could but some lines were invalid; 2 nothing
answered (a database that is not a lineage database, or that another process kept locked
past ``--wait``; an unknown or ambiguous dataset, a partition column the dataset never had, a bad
argument, an input that does not exist).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from openlineage_subset import max_line_bytes
from openlineage_subset.cli._output import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_UNUSABLE,
    add_max_line_bytes,
    printable,
)
from openlineage_subset.cli._serve import add_serve_parser
from openlineage_subset.lineage import (
    LOCK_WAIT,
    OTHER_NAMES,
    OTHER_NAMES_CHOICES,
    PARTITION_DIRECTORIES,
    PARTITION_DIRECTORIES_CHOICES,
    DatasetsReport,
    HistoryQuery,
    HistoryReport,
    ImpactQuery,
    Lineage,
    LineageDatabaseError,
    LineageQueryError,
    LineageStore,
    PartitionsQuery,
    PartitionsReport,
    ProvenanceQuery,
    RunsQuery,
    RunsReport,
    history_text,
    impact_text,
    indented_json,
    ingest,
    partition_from_text,
    partitions_text,
    provenance_text,
    prune,
    set_setting,
    setting,
)
from openlineage_subset.producer import NULL_PARTITION

DEFAULT_DB = "lineage.db"


def add_lineage_parser(commands: Any) -> None:
    """Add ``lineage`` and its subcommands to the ``ol-subset`` subcommands."""
    lineage = commands.add_parser(
        "lineage",
        help="partition lineage: ingest events, then ask impact, provenance, history",
        description=(
            "Partition lineage from OpenLineage events: ingest them into a SQLite file, then ask "
            "which runs a partition affected (impact), where it came from (provenance), who "
            "touched it (history), or what is known of a dataset's partitions."
        ),
    )
    actions = lineage.add_subparsers(dest="lineage_command", metavar="QUERY", required=True)
    read = actions.add_parser(
        "ingest",
        help="store the events of JSON Lines files in the lineage database",
        description=(
            "Store the RunEvents of JSON Lines files (.jsonl, .json, .ndjson) and folders of them "
            "in the lineage database; '-' is standard input, and a .json file may hold one "
            "(pretty-printed) event or a JSON array, as validate reads them. Invalid lines are "
            "reported with file:line and skipped; "
            "events already stored change nothing. Exit 0, 1 if a line was invalid, 2 if an "
            "input or the database is unusable."
        ),
    )
    read.add_argument("events", nargs="+", metavar="EVENTS")
    read.add_argument(
        "--jobs",
        metavar="N",
        type=_jobs,
        help="processes checking the events (parse, validate), this one included, which alone "
        "stores them (default: one per CPU for 8 MB of input or more, else 1; never more than "
        "the CPUs available, nor than one per megabyte of input, plus this one)",
    )
    read.add_argument(
        "--wait",
        metavar="SECONDS",
        type=_seconds,
        default=LOCK_WAIT,
        help="while another process holds the database's write lock and commits nothing, wait "
        f"this long before giving up (default {LOCK_WAIT:g}); another ingest that commits is "
        "waited for as long as it runs",
    )
    add_max_line_bytes(read)
    _common(read, dataset=False)
    read.set_defaults(handler=_ingest_command)
    queries: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
        "impact": ("runs affected by a dataset or partition, and what to recompute", _impact),
        "provenance": ("the runs and inputs a partition's data came from", _provenance),
        "history": ("the runs that read or wrote a dataset or partition, in order", _history),
        "partitions": ("each known partition: last writer, reads since", _partitions),
    }
    for name, (summary, handler) in queries.items():
        query = actions.add_parser(name, help=summary, description=summary[0].upper() + summary[1:])
        query.add_argument(
            "dataset",
            metavar="DATASET",
            help="the dataset's name, or its end after a '/' (lake/sales for /data/lake/sales)",
        )
        if name != "partitions":
            query.add_argument(
                "--partition",
                action="append",
                metavar="COLUMN=VALUE",
                help="a partition column's value (repeat for each column); "
                f"{NULL_PARTITION} is the null partition",
            )
        if name == "impact":
            query.add_argument(
                "--since", metavar="TIME", help="affected data is what was there from TIME on"
            )
            query.add_argument(
                "--location",
                metavar="PATH",
                help="a file or directory of the dataset (a bad file that landed): only the "
                "runs that may have read it are affected",
            )
        if name in ("impact", "provenance"):
            query.add_argument("--depth", metavar="N", type=int, help="at most N run hops")
        _common(query, dataset=True)
        query.set_defaults(handler=handler)
    listing = actions.add_parser(
        "datasets",
        help="every dataset, the most recently written first",
        description="Every dataset of the database, the most recently written first, with "
        "its last write and how many runs wrote and read it.",
    )
    _common(listing, dataset=False)
    listing.set_defaults(handler=_datasets)
    listing = actions.add_parser(
        "runs",
        help="the runs, the most recently started first, with what each read and wrote",
        description="The runs of the database, the most recently started first, with what "
        "each read and wrote.",
    )
    listing.add_argument("--job", metavar="JOB", help="only this job's (NAME or NAMESPACE.NAME)")
    listing.add_argument(
        "--limit", metavar="N", type=int, default=100, help="at most N runs (default 100)"
    )
    _common(listing, dataset=False)
    listing.set_defaults(handler=_runs)
    add_serve_parser(actions)
    _add_report_parser(actions)
    _add_settings_parser(actions)
    _add_prune_parser(actions)


def _add_prune_parser(actions: Any) -> None:
    pruning = actions.add_parser(
        "prune",
        help="remove the runs that ended before a time, but the last writers of partitions",
        description=(
            "Remove from the lineage database the runs that ended (or, never ending, had "
            "their latest event) before --before, with their events, but for the last writers "
            "of what partitions hold (kept however old), then give the space back (VACUUM, "
            "unless --no-vacuum). Answers that reach before that time say that runs before it "
            "were pruned. Safe while an ingest or 'lineage serve' writes: runs are removed a "
            "few hundred at a time; VACUUM holds the database's write lock while it copies the "
            "file (writers wait): --no-vacuum leaves the space free inside the file, reused "
            "by later events. Events ingested again after are stored again."
        ),
    )
    pruning.add_argument(
        "--before",
        metavar="TIME",
        required=True,
        help="ISO 8601 (2024-10-15, or 2024-10-15T10:00:00Z); a date is its midnight, UTC",
    )
    pruning.add_argument(
        "--no-vacuum",
        action="store_true",
        help="leave the freed space inside the file (no VACUUM, no long write lock)",
    )
    _common(pruning, dataset=False)
    pruning.set_defaults(handler=_prune)


def _prune(args: argparse.Namespace) -> int:
    try:
        report = prune(args.db, args.before, vacuum=not args.no_vacuum)
    except (LineageDatabaseError, LineageQueryError) as error:
        return _fail(args, str(error))
    if args.format == "json":
        print(json.dumps(report.as_json(), indent=2))
    else:
        print(printable(report.summary()))
    return EXIT_OK


def _add_settings_parser(actions: Any) -> None:
    settings = actions.add_parser(
        "settings",
        help="show or set the database's settings (partition directories, other names)",
        description=(
            "Show the lineage database's settings, or set them (making the database when it is "
            "missing). --partition-directories: whether ingest reads a dataset named as a "
            "partition directory (/lake/raw/day=2024-11-03) as partition day=2024-11-03 of "
            "/lake/raw (as-partitions, the default) or keeps it as a dataset (as-datasets). "
            "--other-names: whether the names an event's symlinks facet (or a storage "
            "location) gives a dataset join those datasets into one (join, the default) or are "
            "left alone (ignore: no producer can join another's datasets with its own). "
            "A setting applies to the events ingested after it; those stored keep their reading."
        ),
    )
    settings.add_argument(
        "--partition-directories",
        choices=PARTITION_DIRECTORIES_CHOICES,
        help="as-partitions (default) or as-datasets",
    )
    settings.add_argument(
        "--other-names", choices=OTHER_NAMES_CHOICES, help="join (default) or ignore"
    )
    _common(settings, dataset=False)
    settings.set_defaults(handler=_settings)


def _settings(args: argparse.Namespace) -> int:
    wanted = {
        name: value
        for name, value in (
            (PARTITION_DIRECTORIES, args.partition_directories),
            (OTHER_NAMES, args.other_names),
        )
        if value is not None
    }
    try:
        with LineageStore.open(args.db, create=bool(wanted)) as store:
            before = {name: set_setting(store, name, value) for name, value in wanted.items()}
            values = {name: setting(store, name) for name in (PARTITION_DIRECTORIES, OTHER_NAMES)}
    except LineageDatabaseError as error:
        return _fail(args, str(error))
    if args.format == "json":
        print(json.dumps(values, indent=2))
        return EXIT_OK
    for name, value in values.items():
        words = name.replace("_", " ")
        was = before.get(name, value)
        told = f" (was {was})" if was != value else ""
        print(printable(f"{words}: {value}{told}, in {args.db}"))
    if any(before[name] != values[name] for name in before):
        print("applies to the events ingested from now on; those stored keep their reading")
    return EXIT_OK


def _add_report_parser(actions: Any) -> None:
    report = actions.add_parser(
        "report",
        help="an HTML page: the run graph of an impact or provenance answer, partition grids",
        description=(
            "Write one self-contained HTML page (no network when viewed) with the run graph of "
            "the impact answer (or, with --provenance, the provenance answer) of DATASET and a "
            "grid of partitions per dataset in it: affected, possibly affected, written, read; "
            "hover over a cell or a run for the runs and conditions behind it. Without DATASET: "
            "every job and dataset, and each partition's last completed writer."
        ),
    )
    report.add_argument(
        "dataset",
        metavar="DATASET",
        nargs="?",
        help="as for impact and provenance; none: an overview of every job and dataset",
    )
    report.add_argument(
        "--html", metavar="FILE", required=True, help="the page to write (overwritten)"
    )
    report.add_argument(
        "--provenance", action="store_true", help="draw the provenance answer, not the impact"
    )
    report.add_argument(
        "--partition", action="append", metavar="COLUMN=VALUE", help="as for impact"
    )
    report.add_argument("--since", metavar="TIME", help="as for impact (not with --provenance)")
    report.add_argument("--depth", metavar="N", type=int, help="at most N run hops")
    report.add_argument(
        "--db", metavar="PATH", default=DEFAULT_DB, help=f"lineage database (default {DEFAULT_DB})"
    )
    report.add_argument("--namespace", metavar="NS", help="the dataset's namespace")
    report.set_defaults(handler=_report)


def _common(parser: argparse.ArgumentParser, *, dataset: bool) -> None:
    parser.add_argument(
        "--db", metavar="PATH", default=DEFAULT_DB, help=f"lineage database (default {DEFAULT_DB})"
    )
    if dataset:
        parser.add_argument("--namespace", metavar="NS", help="the dataset's namespace")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")


def _fail(args: argparse.Namespace, message: str) -> int:
    """Say why nothing was answered (names in ``message`` shown as escapes, each of its lines
    kept): exit 2."""
    lines = (printable(line) for line in message.split("\n"))
    print(f"ol-subset lineage {args.lineage_command}: " + "\n".join(lines), file=sys.stderr)
    return EXIT_UNUSABLE


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"a number of processes, 1 or more; got {text!r}")
    return jobs


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < 10**6:
        raise argparse.ArgumentTypeError(f"a number of seconds, 0 to 999999; got {text!r}")
    return seconds


def _ingest_command(args: argparse.Namespace) -> int:
    try:
        limit = max_line_bytes(args.max_line_bytes)
    except ValueError as error:  # $OL_SUBSET_MAX_LINE_BYTES
        return _fail(args, str(error))
    try:
        report = ingest(args.events, args.db, jobs=args.jobs, max_line_bytes=limit, wait=args.wait)
    except LineageDatabaseError as error:
        return _fail(args, str(error))
    if args.format == "json":
        print(json.dumps(report.as_json(), indent=2))
    else:
        for problem in report.problems:  # a file's name, a line's value: shown, not obeyed
            print(printable(str(problem)))
        for note in report.notes():  # a producer's name: shown, not obeyed
            print(printable(note))
        print(printable(f"{report.summary()}, in {args.db}"))
        grouped = report.directories_note(args.db)
        if grouped is not None:
            print(printable(grouped))
    if report.unreadable:
        return EXIT_UNUSABLE
    return EXIT_INVALID if report.invalid else EXIT_OK


_Query = TypeVar("_Query")


def _answer(
    args: argparse.Namespace,
    query: Callable[[], _Query],
    ask: Callable[[Lineage, _Query], Any],
    text: Callable[[Any], list[str]],
) -> int:
    """Print the answer to ``query`` (made, and so checked, before the database ``--db`` is
    opened) that ``ask`` gets, as ``--format`` says."""
    try:
        asked = query()
        with Lineage(args.db) as lineage:
            report = ask(lineage, asked)
    except (LineageDatabaseError, LineageQueryError) as error:
        return _fail(args, str(error))
    if args.format == "json":
        print(indented_json(report.as_json()))
    else:
        print("\n".join(text(report)))
    return EXIT_OK


def _impact(args: argparse.Namespace) -> int:
    def query() -> ImpactQuery:
        return ImpactQuery.from_text(
            args.dataset,
            args.partition,
            since=args.since,
            depth=args.depth,
            namespace=args.namespace,
            location=args.location,
        )

    return _answer(args, query, Lineage.impact, impact_text)


def _provenance(args: argparse.Namespace) -> int:
    def query() -> ProvenanceQuery:
        return ProvenanceQuery.from_text(
            args.dataset, args.partition, depth=args.depth, namespace=args.namespace
        )

    return _answer(args, query, Lineage.provenance, provenance_text)


def _history(args: argparse.Namespace) -> int:
    """Printed a piece at a time (:meth:`Lineage.history_in_pieces`): the history of a dataset
    read and written millions of times is printed whole without holding it."""
    try:
        query = HistoryQuery.from_text(args.dataset, args.partition, namespace=args.namespace)
        with Lineage(args.db) as lineage:
            pieces = lineage.history_in_pieces(query)
            first = next(pieces)  # an unknown dataset raises here, before anything is printed
            _print_pieces(
                args.format == "json", "entries", first, pieces, history_text, lambda r: r.entries
            )
    except (LineageDatabaseError, LineageQueryError) as error:
        return _fail(args, str(error))
    return EXIT_OK


def _partitions(args: argparse.Namespace) -> int:
    """Printed a piece at a time (:meth:`Lineage.partitions_in_pieces`): a dataset of
    millions of partitions is listed whole without holding it."""
    try:
        query = PartitionsQuery(args.dataset, args.namespace)
        with Lineage(args.db) as lineage:
            pieces = lineage.partitions_in_pieces(query)
            first = next(pieces)  # an unknown dataset raises here, before anything is printed
            _print_pieces(
                args.format == "json",
                "partitions",
                first,
                pieces,
                partitions_text,
                lambda report: report.partitions,
            )
    except (LineageDatabaseError, LineageQueryError) as error:
        return _fail(args, str(error))
    return EXIT_OK


_Report = TypeVar("_Report", PartitionsReport, HistoryReport)


def _print_pieces(
    as_json: bool,
    key: str,
    first: _Report,
    rest: Iterator[_Report],
    text: Callable[..., list[str]],
    items: Callable[[_Report], Sequence[Any]],
) -> None:
    """The pieces of an answer printed as the whole answer would be (the same text, the same
    JSON): ``key`` names its list in JSON, ``items`` gives a piece's, ``text`` its lines (the
    heading's too unless ``header=False``)."""
    out = sys.stdout
    if not as_json:
        out.write("\n".join(text(first)) + "\n")
        for piece in rest:
            out.write("".join(line + "\n" for line in text(piece, header=False)))
        return
    if not items(first):  # nothing listed: the answer says why, whole
        out.write(indented_json(first.as_json()) + "\n")
        return
    head, tail = indented_json({**first.as_json(), key: [0]}).rsplit("\n    0\n", 1)
    out.write(head)
    between = "\n"
    for piece in itertools.chain([first], rest):
        for item in items(piece):
            out.write(between + "    " + indented_json(item.as_json()).replace("\n", "\n    "))
            between = ",\n"
    out.write("\n" + tail + "\n")


def _datasets(args: argparse.Namespace) -> int:
    return _answer(args, lambda: None, lambda lineage, _: lineage.datasets(), _datasets_text)


def _datasets_text(report: DatasetsReport) -> list[str]:
    lines = [
        f"{item.dataset}: last written {item.as_json()['lastWrittenAt'] or 'never'}, "
        f"{item.writes} write(s), {item.reads} read(s), {item.partitions} partition(s) known"
        for item in report.datasets
    ]
    return [printable(line) for line in lines] or ["no dataset yet; ingest events first"]


def _runs(args: argparse.Namespace) -> int:
    def query() -> RunsQuery:
        return RunsQuery.from_text(args.job, args.limit)

    return _answer(args, query, Lineage.runs, _runs_text)


def _runs_text(report: RunsReport) -> list[str]:
    lines = [f"{report.shown} of {report.total} run(s), the latest first"]
    if report.shown != len(report.runs):
        lines[0] += f", in {len(report.runs)} row(s): a job's runs under one parent run are one"
    for item in report.runs:
        run = item.run.as_json()
        lines.append(f"{item.run.run_id} {item.run.job} {item.run.status} {run['startedAt']}")
        if item.family is not None:
            lines.append(
                f"  the newest of {item.family.runs} runs of this job under run "
                f"{item.family.parent_run_id} (its page in the web UI lists them all)"
            )
        for verb, accesses in (("read", item.inputs), ("wrote", item.outputs)):
            lines.extend(
                f"  {verb} {access.dataset}: {access.condition or '(whole dataset)'}"
                for access in accesses
            )
    return [printable(line) for line in lines]


def _report(args: argparse.Namespace) -> int:
    # Here, not at the top: the report's templates (Jinja2) load for this command alone.
    from openlineage_subset.report import page, report_picture  # noqa: PLC0415

    try:
        picture = report_picture(
            args.db,
            args.dataset,
            provenance=args.provenance,
            partition=partition_from_text(args.partition),
            since=args.since,
            depth=args.depth,
            namespace=args.namespace,
        )
    except (LineageDatabaseError, LineageQueryError) as error:
        return _fail(args, str(error))
    try:
        with open(args.html, "w", encoding="utf-8") as out:
            out.write(page(picture, source=args.db))
    except OSError as error:
        return _fail(args, f"cannot write {args.html}: {error.strerror or error}")
    cells = sum(len(grid.cells) for grid in picture.grids)
    print(
        printable(
            f"wrote {args.html}: {picture.runs} run(s), {len(picture.grids)} dataset grid(s), "
            f"{cells} partition cell(s)"
        )
    )
    return EXIT_OK
