"""Impact and provenance answers too large to send whole, a page at a time.

The impact of a whole dataset is every run downstream of it, and the provenance of one every
run behind it: at three years of a daily pipeline, tens of MB of JSON. The JSON API answers
such a question a page at a time (docs/serve.md#pages-of-an-answer): the command's JSON with
its runs (impact's ``runs``; provenance's runs behind the target, each once, in place of the
tree of its ``writers``, whose first branch may be the whole history) cut to ``limit`` after
the ``cursor`` (none: the first page), what belongs to those runs alone, and the totals of the
whole answer.

A cursor is opaque to the client (base64url of a small JSON array): the query, a fingerprint
of the question, and the sort key of the last item sent. Items are in the answer's own order,
which depends on the runs' times and ids alone, never on the order their events arrived, so
that following ``next`` gives every item exactly once, whatever was ingested first; an item
stored meanwhile shows up in its place. A cursor this server did not make, or made for another
question, is refused (:class:`LineageQueryError`, a 400) with what to do.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from openlineage_subset.lineage import (
    AffectedRun,
    ImpactReport,
    LineageQueryError,
    PartitionSet,
    ProvenanceReport,
    ProvenanceStep,
    shown_time,
)
from openlineage_subset.service._answer_runs import runs_behind
from openlineage_subset.service._pages import merged

Query = Literal["impact", "provenance"]

DEFAULT_LIMITS: Mapping[Query, int] = {"impact": 50, "provenance": 50}
"""Runs of a page when the request gives no ``limit``: an impact's run comes with the affected
partitions it read, its tasks and their plan (about 100 KB at 300 partitions a run), a
provenance's with its inputs and the partitions each may cover: a few MB a page at that
size."""
MAX_LIMIT = 1000
"""The largest ``limit``: a page of the largest answers stays within a few hundred MB of the
server's memory, whatever the question."""
_VERSION = 1


def checked_limit(text: str | None, query: Query) -> int:
    """The ``limit`` parameter (None: the default of ``query``), a whole number from 1 to
    :data:`MAX_LIMIT`.

    >>> checked_limit(None, "impact"), checked_limit("7", "provenance")
    (50, 7)
    >>> checked_limit("0", "impact")
    Traceback (most recent call last):
    ...
    openlineage_subset.lineage.model._errors.LineageQueryError: limit must be a whole number \
from 1 to 1000 (the runs of a page; the default is 50), got '0'
    """
    if text is None:
        return DEFAULT_LIMITS[query]
    if text.isascii() and text.isdigit() and len(text) <= 4 and 1 <= int(text) <= MAX_LIMIT:
        return int(text)
    raise LineageQueryError(
        f"limit must be a whole number from 1 to {MAX_LIMIT} (the runs of a page; the "
        f"default is {DEFAULT_LIMITS[query]}), got {text!r}"
    )


def fingerprint(question: Sequence[tuple[str, str]]) -> str:
    """What tells one question from another in a cursor: a digest of its parameters but the
    page's own (``limit``, ``cursor``), in any order.

    >>> fingerprint([("dataset", "a"), ("depth", "2")]) == fingerprint(
    ...     [("depth", "2"), ("dataset", "a")])
    True
    """
    asked = sorted((name, value) for name, value in question if name not in ("limit", "cursor"))
    return hashlib.sha256(json.dumps(asked).encode("utf-8")).hexdigest()[:16]


def cursor_text(query: Query, question: str, key: tuple[str, str]) -> str:
    """The cursor after the item of sort ``key`` of ``query``'s answer to ``question`` (its
    :func:`fingerprint`)."""
    packed = json.dumps([_VERSION, query, question, *key], separators=(",", ":"))
    return base64.urlsafe_b64encode(packed.encode("utf-8")).decode("ascii").rstrip("=")


def cursor_key(text: str | None, query: Query, question: str) -> tuple[str, str] | None:
    """The sort key a ``cursor`` parameter holds (None: no cursor, the first page); raises
    :class:`LineageQueryError` for one this server did not make for this question."""
    if text is None:
        return None
    how = "pass the 'next' of the page before unchanged, or no cursor for the first page"
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        found = json.loads(packed.decode("utf-8")) if text.isascii() and len(text) < 2048 else None
    except (binascii.Error, ValueError):
        found = None
    if (
        not isinstance(found, list)
        or len(found) != 5
        or found[0] != _VERSION
        or found[1] not in ("impact", "provenance")
        or not all(isinstance(item, str) for item in found[1:])
    ):
        raise LineageQueryError(f"cursor {text[:80]!r} is not a cursor of this server: {how}")
    if found[1] != query or found[2] != question:
        raise LineageQueryError(
            f"cursor {text[:80]!r} is a cursor of another question ({found[1]} with other "
            f"parameters): {how}, with the same parameters as the page before"
        )
    return found[3], found[4]


def _impact_key(item: AffectedRun) -> tuple[str, str]:
    return item.run.started_at, item.run.run_id


def _writer_key(step: ProvenanceStep) -> tuple[str, str]:
    return step.run.ended_at or "", step.run.run_id


def impact_page(
    report: ImpactReport, limit: int, after: tuple[str, str] | None, question: str
) -> dict[str, Any]:
    """The page of ``report`` after the run of sort key ``after`` (None: the first): its
    JSON, with ``runs`` cut to ``limit`` runs (the answer's order: started first first),
    ``tasks`` those whose first affected run is on the page (each task on one page), and
    ``backfill`` what those tasks recompute (a partition several pages' tasks wrote is on each,
    as they wrote it: the plan's label is the strongest); ``total`` counts the whole answer."""
    runs = report.runs
    start = 0 if after is None else bisect.bisect_right(runs, after, key=_impact_key)
    page = runs[start : start + limit]
    on_page = {item.run.run_id for item in page}
    tasks = [task for task in report.tasks if task.run_ids and task.run_ids[0] in on_page]
    backfill = sorted(
        merged(part for task in tasks for part in task.backfill),
        key=lambda part: (part.dataset.namespace, part.dataset.name),
    )
    answer: dict[str, Any] = {
        "query": "impact",
        "start": report.start.as_json(),
        "since": None if report.since is None else shown_time(report.since),
        "depth": report.depth,
        "runs": [item.as_json() for item in page],
        "backfill": [part.as_json() for part in backfill],
        "seen": report.seen,
        **({"notes": list(report.notes)} if report.notes else {}),
        "tasks": [task.as_json() for task in tasks],
    }
    definite = sum(item.label == "definite" for item in runs)
    answer["limit"] = limit
    more = start + limit < len(runs)
    answer["next"] = cursor_text("impact", question, _impact_key(page[-1])) if more else None
    answer["total"] = {
        "runs": len(runs),
        "definite": definite,
        "possible": len(runs) - definite,
        "tasks": len(report.tasks),
        "backfill": [_counted(part) for part in report.backfill],
    }
    return answer


def provenance_page(
    report: ProvenanceReport,
    limit: int,
    after: tuple[str, str] | None,
    question: str,
    *,
    whole: bool,
) -> dict[str, Any]:
    """The page of ``report`` after the run of sort key ``after`` (None: the first): its JSON
    with, instead of the tree of ``writers``, ``runs``: each run behind the target once
    (:func:`~._answer_runs.runs_behind`: the latest ended first), ``limit`` of them, each with
    its inputs and their writers by run id, and ``latestWriter``, the label it has as a writer
    of the target (None: it is behind one); with ``whole`` (no partition asked) the target is
    the whole dataset rather than each of its partitions; ``total`` counts the whole answer."""
    behind = runs_behind(report)
    keys = [_writer_key(step) for step in behind]  # descending: found in the reversed list
    start = 0 if after is None else len(keys) - bisect.bisect_left(keys[::-1], after)
    page = behind[start : start + limit]
    latest = {step.run.run_id: step.label for step in report.writers}
    target = report.target
    if whole:
        target = PartitionSet(target.dataset, "definite", (), ())
    answer: dict[str, Any] = {
        "query": "provenance",
        "target": target.as_json(),
        "depth": report.depth,
        "runs": [_behind_json(step, latest.get(step.run.run_id)) for step in page],
        "seen": report.seen,
        **({"notes": list(report.notes)} if report.notes else {}),
    }
    answer["limit"] = limit
    more = start + limit < len(behind)
    answer["next"] = cursor_text("provenance", question, _writer_key(page[-1])) if more else None
    answer["total"] = {
        "runs": len(behind),
        "writers": len(report.writers),
        "target": _counted(report.target),
    }
    return answer


def _behind_json(step: ProvenanceStep, latest: str | None) -> dict[str, Any]:
    """A run behind a provenance answer's target: its step's JSON, each input's writers by
    run id (each is a run of the answer, on its page) rather than followed."""
    inputs = []
    for read in step.inputs:
        covered = read.partitions.as_json()
        del covered["dataset"]
        inputs.append(
            {
                "dataset": read.dataset.as_json(),
                "condition": read.condition,
                "partitions": covered,
                "writers": [
                    {"runId": writer.run.run_id, "label": writer.label} for writer in read.writers
                ],
            }
        )
    return {
        **step.run.as_json(),
        "label": step.label,
        "dataset": step.dataset.as_json(),
        "condition": step.condition,
        "latestWriter": latest,
        "truncated": step.truncated,
        "inputs": inputs,
    }


def _counted(part: PartitionSet) -> dict[str, Any]:
    """A part of a dataset by how many partitions it holds."""
    return {
        "dataset": part.dataset.as_json(),
        "whole": part.whole,
        "definite": len(part.definite),
        "possible": len(part.possible),
    }
