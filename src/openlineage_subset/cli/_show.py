"""``ol-subset show EVENTS...``: what each run read and wrote, one line a dataset.

The events of a run are merged in the order they are read: its state is that of its terminal
event (``COMPLETE``, ``FAIL``, ``ABORT``) if any, else of its latest; its datasets are the union
of its events' inputs and outputs (a run's datasets may be spread over several events, as
:func:`~openlineage_subset.producer._budget.bound_event` spreads them), each with the latest
subset facet an event gave it and the latest lifecycle change. Runs are listed in the order of
their first event; a run with no dataset is shown as the parent of the runs that name it in
their parent facet (a Spark application, an Airflow DAG run).

For any OpenLineage producer's events, not only this package's: conditions are rendered with
:func:`~openlineage_subset.render`; a partition list longer than a few is cut short with a count.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openlineage_subset import DEFAULT_MAX_LINE_BYTES, max_line_bytes, render
from openlineage_subset.cli._output import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_OUTPUT_CLOSED,
    EXIT_UNUSABLE,
    discard_standard_output,
    printable,
)
from openlineage_subset.cli._validate import read_input
from openlineage_subset.lineage import (
    column_order,
    in_column_order,
    listed_partitions,
    location_paths,
)
from openlineage_subset.producer import TERMINAL_EVENT_TYPES, dataset_label

SHOWN_PARTITIONS = 4
"""A condition listing more partitions than this shows the first few and a count."""
_SIDES = (("inputs", "inputFacets", "in"), ("outputs", "outputFacets", "out"))


@dataclass
class _Run:
    """What the events of one run said, merged."""

    job: str
    state: str
    terminal: bool
    parent: str | None
    error: str | None = None
    """The first line of the error its terminal event's ``errorMessage`` facet gives."""
    datasets: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    """(direction, namespace, name) -> {"subset": facet or None, "lifecycle": change or None}"""


def show_command(args: argparse.Namespace) -> int:
    """``ol-subset show``: exit 0, 1 when a document was skipped, 2 when an input cannot be
    read."""
    try:
        limit = max_line_bytes(args.max_line_bytes)
    except ValueError as error:
        print(f"ol-subset show: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    status = EXIT_OK

    def events() -> Iterator[dict[str, Any]]:
        """The events of every input, one at a time: only their merge is kept."""
        nonlocal status
        for path in args.events:
            for where, found in read_events(path, limit):
                if isinstance(found, UnreadableInput):
                    print(printable(f"{where}: {found}"), file=sys.stderr)
                    status = EXIT_UNUSABLE
                elif isinstance(found, str):
                    print(printable(f"{where}: skipped: {found}"), file=sys.stderr)
                    status = max(status, EXIT_INVALID)
                else:
                    yield found

    root = Path(args.relative_to).absolute() if args.relative_to else None
    try:
        for line in summary_lines(events(), root):
            print(printable(line))
        sys.stdout.flush()
    except BrokenPipeError:
        discard_standard_output()
        return EXIT_OUTPUT_CLOSED
    return status


def summary_lines(events: Iterable[Mapping[str, Any]], root: Path | None = None) -> list[str]:
    """The summary of the runs of ``events``: ``run <job>  <state>``, then one line per
    dataset with its condition; dataset names inside ``root`` are shown relative to it.

    >>> start = {"eventType": "START", "run": {"runId": "r1"}, "job": {"name": "daily"},
    ...          "inputs": [{"namespace": "file", "name": "/lake/sales"}], "outputs": []}
    >>> facet = {"inputCondition": {"type": "location", "locations": ["/lake/sales/day=1"]}}
    >>> complete = {**start, "eventType": "COMPLETE", "inputs": [
    ...     {"namespace": "file", "name": "/lake/sales", "inputFacets": {"subset": facet}}]}
    >>> print("\\n".join(summary_lines([start, complete], Path("/lake"))))
    run daily  COMPLETE
      in   sales  LOCATION IN ('/lake/sales/day=1')
    """
    runs = _merged(events)
    orders = _column_orders(runs)
    lines = []
    for run_id, run in runs.items():
        lines.extend(_run_lines(run_id, run, runs, root, orders))
    return lines


class UnreadableInput(str):
    """Why an input could not be read at all (missing, a read error, a folder with nothing to
    read), as opposed to why one of its documents is skipped."""


def read_events(
    path: str | Path, limit: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """(where, event) of each document of an input, read by ``validate``'s reader
    (:func:`~openlineage_subset.cli._validate.read_input`: JSON Lines a line at a time, a
    pretty-printed event or a JSON array read whole up to ``limit``, a folder, ``-``); (where,
    why) for one that is not a JSON object with a ``run.runId`` or that validate refuses (a line
    over the limit, ``NaN``, a repeated key, nesting past the limit, a lone surrogate), in
    validate's words; (where, :class:`UnreadableInput`) for an input that cannot be read. ``where``
    is ``file:line``, ``file[index]`` or the file, as validate names it."""
    for result in read_input(str(path), limit):
        if result.error is not None:
            yield result.where, UnreadableInput(result.error) if result.unreadable else result.error
            continue
        document = result.document
        run = document.get("run") if isinstance(document, dict) else None
        if not isinstance(run, dict) or not isinstance(run.get("runId"), str):
            yield result.where, "not a RunEvent (no run.runId)"
            continue
        yield result.where, document


def _merged(events: Iterable[Mapping[str, Any]]) -> dict[str, _Run]:
    runs: dict[str, _Run] = {}
    for event in events:
        run_id = str(event["run"]["runId"])
        event_type = str(event.get("eventType") or "OTHER")
        job = event.get("job") or {}
        run = runs.get(run_id)
        if run is None:
            run = runs[run_id] = _Run(str(job.get("name")), event_type, False, None)
        if not run.terminal or event_type in TERMINAL_EVENT_TYPES:
            run.state, run.terminal = event_type, event_type in TERMINAL_EVENT_TYPES
            run.error = _error_line(event) or run.error
        run.parent = _parent_run_id(event) or run.parent
        for side, facets_key, direction in _SIDES:
            for dataset in event.get(side) or ():
                if not isinstance(dataset, Mapping):
                    continue
                key = (direction, str(dataset.get("namespace")), str(dataset.get("name")))
                seen = run.datasets.setdefault(key, {"subset": None, "lifecycle": None})
                subset = (dataset.get(facets_key) or {}).get("subset")
                lifecycle = (dataset.get("facets") or {}).get("lifecycleStateChange")
                seen["subset"] = subset or seen["subset"]
                seen["lifecycle"] = lifecycle or seen["lifecycle"]
    return runs


def _column_orders(runs: Mapping[str, _Run]) -> dict[tuple[str, str], dict[str, int]]:
    """Each dataset's partition columns, ranked by the rule of the lineage answers
    (:func:`~openlineage_subset.lineage.model._conditions.column_order`) over the conditions shown:
    the order of its partitions' identifiers, then of its locations' directories, then names."""
    conditions: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in runs.values():
        for (_, namespace, name), seen in run.datasets.items():
            condition = _condition_of(seen["subset"])
            if condition is not None:
                conditions.setdefault((namespace, name), []).append(condition)
    orders = {}
    for dataset, found in conditions.items():
        partitions = [item for condition in found for item in listed_partitions(condition)[0]]
        order, _ = column_order(
            {tuple(sorted(dimensions)) for dimensions, _ in partitions},
            (identifier for _, identifier in partitions if identifier is not None),
            functools.partial(_locations, found),
        )
        orders[dataset] = {column: rank for rank, column in enumerate(order)}
    return orders


def _locations(conditions: list[dict[str, Any]]) -> Iterator[str]:
    for condition in conditions:
        yield from location_paths(condition)


def _condition_of(facet: Any) -> dict[str, Any] | None:
    """The condition of a subset facet, if it has one that is a JSON object."""
    if not isinstance(facet, Mapping):
        return None
    condition = facet.get("inputCondition") or facet.get("outputCondition")
    return condition if isinstance(condition, dict) else None


def _run_lines(
    run_id: str,
    run: _Run,
    runs: Mapping[str, _Run],
    root: Path | None,
    orders: Mapping[tuple[str, str], Mapping[str, int]],
) -> list[str]:
    header = f"run {run.job}  {run.state}"
    said = [] if run.error is None else [f"  error  {run.error}"]
    if not run.datasets:
        children = sum(1 for other in runs.values() if other.parent == run_id)
        if children:
            return [f"{header}  (the application: parent of {children} runs)", *said]
        return [f"{header}  (no datasets)", *said]
    lines = [header, *said]
    labels = {key: _label(key[1], key[2], root) for key in run.datasets}
    width = max(len(label) for label in labels.values())
    for key, seen in run.datasets.items():
        head = f"  {key[0]:<4} {labels[key]:<{width}}  "
        first, *more = _condition_lines(seen["subset"], orders.get(key[1:], {}), key[1:])
        lifecycle = seen["lifecycle"]
        if isinstance(lifecycle, Mapping) and lifecycle.get("lifecycleStateChange"):
            first = f"{lifecycle['lifecycleStateChange']} {first}"  # CREATE, OVERWRITE, ...
        lines.append(head + first)
        lines.extend(f"{'OR':>{len(head) - 1}} {item}" for item in more)
    return lines


SHOWN_ERROR = 200
"""The most characters of a failed run's error shown (its first line)."""


def _left_by_whole(condition: Any, dataset: tuple[str, str]) -> dict[str, Any] | None:
    """The partition list of ``condition`` when it is ``dataset``'s own location OR that list
    (in either order); else None."""
    if not isinstance(condition, Mapping) or condition.get("type") != "binary":
        return None
    left, right = condition.get("left"), condition.get("right")
    if condition.get("operator") != "OR" or not (
        isinstance(left, Mapping) and isinstance(right, Mapping)
    ):
        return None
    wanted = {dataset_label(*dataset), dataset[1]}
    for whole, listed in ((left, right), (right, left)):
        if (
            whole.get("type") == "location"
            and whole.get("locations")
            and all(place in wanted for place in whole["locations"])
            and listed.get("type") == "partition"
        ):
            return dict(listed)
    return None


def _error_line(event: Mapping[str, Any]) -> str | None:
    """The first line of the message of an event's ``errorMessage`` run facet (cut to
    :data:`SHOWN_ERROR` characters), if it has one.

    >>> _error_line({"run": {"facets": {"errorMessage": {"message": "Boom\\n  at x"}}}})
    'Boom'
    """
    facet = ((event.get("run") or {}).get("facets") or {}).get("errorMessage")
    message = facet.get("message") if isinstance(facet, Mapping) else None
    if not isinstance(message, str) or not message.strip():
        return None
    first = message.strip().splitlines()[0]
    return first if len(first) <= SHOWN_ERROR else first[: SHOWN_ERROR - 1] + "…"


def _parent_run_id(event: Mapping[str, Any]) -> str | None:
    """The run id in an event's parent run facet, if it has one."""
    parent = ((event.get("run") or {}).get("facets") or {}).get("parent") or {}
    run_id = (parent.get("run") or {}).get("runId")
    return run_id if isinstance(run_id, str) else None


def _label(namespace: str, name: str, root: Path | None) -> str:
    """A dataset's name, relative to ``root`` when it lies inside it; else as the lineage
    answers name it."""
    if root is not None and namespace == "file" and Path(name).is_relative_to(root):
        return Path(name).relative_to(root).as_posix()
    return dataset_label(namespace, name)


def _condition_lines(
    facet: Any, order: Mapping[str, int], dataset: tuple[str, str] = ("", "")
) -> list[str]:
    """The rendered condition, one partition a line, its columns in ``order`` (then by name);
    a long partition list is cut short. The whole ``dataset`` (namespace, name) OR the
    partitions it holds (an overwrite of all of it, as capture says it) is said so."""
    if facet is None:
        return ["(whole dataset)"]
    condition = _condition_of(facet)
    left = _left_by_whole(condition, dataset)
    if left is not None:
        key = "inputCondition" if facet.get("inputCondition") else "outputCondition"
        first, *more = _condition_lines({**facet, key: left}, order)
        return [f"(whole dataset), leaving {first}", *more]
    if condition is not None:
        key = "inputCondition" if facet.get("inputCondition") else "outputCondition"
        facet = {**facet, key: in_column_order(condition, order)}
    try:
        condition = facet.get("inputCondition") or facet.get("outputCondition") or {}
        if condition.get("type") != "partition" or not condition.get("partitions"):
            return [render(facet)]
        items = [render({"type": "partition", "partitions": [p]}) for p in condition["partitions"]]
    except (ValueError, TypeError, AttributeError) as error:  # another producer's bad facet
        return [f"(a subset facet that cannot be read: {error})"]
    if len(items) > SHOWN_PARTITIONS:
        hidden = len(items) - SHOWN_PARTITIONS + 1
        items = [*items[: SHOWN_PARTITIONS - 1], f"... {hidden} more ({len(items)} in all)"]
    return items
