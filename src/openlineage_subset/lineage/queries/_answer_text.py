"""The query answers as text a person reads: one fact per line, the most important first.

Names, partition values, run ids and conditions come from events anyone may have written: each
line is returned through :func:`~openlineage_subset._printable.printable`, so that control and
bidirectional characters in them show as escapes (``\\x1b``, ``\\u202e``) and never act on the
terminal, forge a line or reverse the text around them.
"""

from __future__ import annotations

from collections.abc import Iterable

from openlineage_subset import printable
from openlineage_subset.lineage.model import (
    HistoryReport,
    ImpactReport,
    PartitionRef,
    PartitionSet,
    PartitionsReport,
    ProvenanceReport,
    ProvenanceStep,
    RunRef,
    shown_time,
)
from openlineage_subset.lineage.queries._task_runs import tasks_lines

_SHOWN_PARTITIONS = 12
_WIDTH = 100


def _partitions(items: Iterable[PartitionRef]) -> str:
    listed = [str(item) for item in items]
    shown = ", ".join(listed[:_SHOWN_PARTITIONS])
    if len(listed) > _SHOWN_PARTITIONS:
        shown += f" and {len(listed) - _SHOWN_PARTITIONS} more"
    return shown


def part_heading(part: PartitionSet) -> str:
    """A dataset and the part of it asked about, on one line."""
    if part.whole is not None or not (part.definite or part.possible):
        return f"{part.dataset} (whole dataset)"
    return f"{part.dataset}, partition(s) {_partitions(part.definite + part.possible)}"


def unseen_note(part: PartitionSet) -> str:
    """What an answer says of a part of a dataset no recorded run read or wrote."""
    return (
        f"No recorded run read or wrote it, nor may have: nothing is known of this part of "
        f"{part.dataset}. Is the value right? `ol-subset lineage partitions` lists the known ones."
    )


def _wrapped(text: str, indent: int) -> list[str]:
    """``text`` over lines of at most ``_WIDTH`` characters where it has a top-level ``OR`` to
    break at (outside parentheses and quotes), each further line starting with ``OR`` indented
    by ``indent``: a long condition stays readable, a clause is never cut."""
    if len(text) <= _WIDTH:
        return [text]
    lines = [""]
    for number, clause in enumerate(_top_level_or(text)):
        joined = clause if number == 0 else f"{lines[-1]} OR {clause}"
        if number == 0 or len(joined) <= _WIDTH:
            lines[-1] = joined
        else:
            lines.append(f"{' ' * (indent - 3)}OR {clause}")
    return lines


def _top_level_or(text: str) -> list[str]:
    """``text`` split at each `` OR `` outside parentheses and single-quoted literals."""
    parts, start, depth, quoted, index = [], 0, 0, False, 0
    while index < len(text):
        char = text[index]
        if char == "'":
            quoted = not quoted  # a doubled quote inside a literal toggles twice: no change
        elif not quoted and char in "()":
            depth += 1 if char == "(" else -1
        elif not quoted and depth == 0 and text.startswith(" OR ", index):
            parts.append(text[start:index])
            start = index = index + 4
            continue
        index += 1
    return [*parts, text[start:]]


def _shown(lines: list[str]) -> list[str]:
    """``lines`` safe to print: each through :func:`printable`, so a name cannot add one."""
    return [printable(line) for line in lines]


def _run(run: RunRef) -> str:
    ended = f" -> {shown_time(run.ended_at)}" if run.ended_at else " (not ended)"
    return f"{run.job} run {run.run_id} {run.status}, {shown_time(run.started_at)}{ended}"


def _plan(part: PartitionSet, indent: str) -> list[str]:
    lines = [f"{indent}{part.dataset}"]
    if part.whole is not None:
        lines.append(f"{indent}  whole dataset ({part.whole})")
    if part.definite:
        lines.append(f"{indent}  definite: {_partitions(part.definite)}")
    if part.possible:
        lines.append(f"{indent}  possible: {_partitions(part.possible)}")
    return lines


def impact_text(report: ImpactReport) -> list[str]:
    """The impact answer as lines of text."""
    since = f", data present from {shown_time(report.since)}" if report.since else ""
    depth = f", at most {report.depth} run hop(s)" if report.depth else ""
    at = f", location {report.location}" if report.location else ""
    lines = [f"Impact of {part_heading(report.start)}{at}{since}{depth}", *report.notes, ""]
    if not report.seen:
        return [*lines, unseen_note(report.start)]
    if not report.runs:
        lines.append("No run read the affected data after it was there: nothing to recompute.")
        return _shown(lines)
    definite = sum(run.label == "definite" for run in report.runs)
    stopped = sum(run.run.status != "COMPLETE" for run in report.runs)
    lines.append(
        f"{len(report.runs)} run(s) affected: {definite} definite, "
        f"{len(report.runs) - definite} possible"
        + (f"; {stopped} did not complete (their outputs go no further)" if stopped else "")
    )
    for item in report.runs:
        if item.partitions is not None:
            read = _partitions(item.partitions)
        else:  # no partition it read is known: all of it, or the part its condition says
            read = "the part below" if item.condition else "all of it"
        via = "the starting region" if item.upstream_run_id is None else item.upstream_run_id
        lines.append(f"  {item.label.upper():9} {_run(item.run)}")
        lines.append(f"            read {item.dataset}: {read}")
        lines += _wrapped(f"            where {item.condition or 'whole dataset'}", 18)
        lines.append(f"            hop {item.hops}, from {via}")
        if item.mapped_by:
            lines.append(
                f"            recomputes only what it maps from it (mapped by "
                f"{', '.join(item.mapped_by)})"
            )
    lines += ["", "Backfill plan: recompute"]
    if not report.backfill:
        lines.append("  nothing: no affected run completed a write")
    for part in report.backfill:
        lines += _plan(part, "  ")
    lines += tasks_lines(report.tasks, _part_text)
    return _shown(lines)


def _part_text(part: PartitionSet) -> str:
    """A dataset's part in the plan, on one line."""
    shown = [f"whole dataset ({part.whole})"] if part.whole is not None else []
    if part.definite:
        shown.append(_partitions(part.definite))
    if part.possible:
        shown.append(f"possibly {_partitions(part.possible)}")
    return f"{part.dataset}: {'; '.join(shown) or 'nothing listed'}"


def provenance_text(report: ProvenanceReport) -> list[str]:
    """The provenance answer as lines of text, a tree indented by level."""
    lines = [f"Provenance of {part_heading(report.target)}", *report.notes, ""]
    if not report.seen:
        return [*lines, unseen_note(report.target)]
    if not report.writers:
        lines.append("No completed run wrote it: it came from outside the recorded lineage.")
    for step in report.writers:
        lines += _step(step, "")
    return _shown(lines)


def _step(step: ProvenanceStep, indent: str) -> list[str]:
    wrote = step.condition or "whole dataset"
    lines = [f"{indent}{step.label.upper():9} {_run(step.run)}"]
    lines.append(f"{indent}          wrote {step.dataset}: {wrote}")
    if step.repeated:
        lines.append(f"{indent}          (shown above)")
        return lines
    for read in step.inputs:
        lines.append(f"{indent}          read {read.dataset}: {read.condition or 'whole dataset'}")
        covered = read.partitions
        if covered.definite:
            lines.append(f"{indent}            covers {_partitions(covered.definite)}")
        if covered.possible:
            lines.append(f"{indent}            may cover {_partitions(covered.possible)}")
        if step.truncated:
            continue
        if not read.writers:
            lines.append(f"{indent}            no recorded writer before this run started")
        for writer in read.writers:
            lines += _step(writer, indent + "            ")
    if step.truncated and step.inputs:
        lines.append(f"{indent}          (depth limit: its inputs' writers are not followed)")
    return lines


def history_text(report: HistoryReport, *, header: bool = True) -> list[str]:
    """The history answer as lines of text, oldest first; without ``header``, the entries'
    lines alone (a piece of the answer after the first: see
    :meth:`~openlineage_subset.lineage.Lineage.history_in_pieces`)."""
    lines = [f"History of {part_heading(report.target)}", ""] if header else []
    if not report.seen and header:
        return [*lines, unseen_note(report.target)]
    if not report.entries and header:
        lines.append("No recorded run read or wrote it.")
    for entry in report.entries:
        what = entry.condition or "whole dataset"
        sure = "" if entry.label == "definite" else " (possibly)"
        lines.append(f"  {entry.direction.upper():5} {_run(entry.run)}{sure}")
        lines.append(f"        where {what}")
    return _shown(lines)


def no_partitions_note(report: PartitionsReport) -> str:
    """What a partitions answer without partitions says of how the dataset is written: whole
    by every run (a dbt model, a table rewritten each time), by conditions that name no
    partition, or by no recorded run."""
    writes, whole = report.writes or 0, report.whole_writes or 0
    if writes and whole == writes:
        return f"Written whole by every run ({writes} write(s)): no partitions."
    if writes:
        return (
            f"No partition known: {writes - whole} of its {writes} write(s) had a condition "
            "that names no partition (a filter, or a location read as no partition)."
        )
    return "No partition known: no recorded run wrote it, and no read listed one."


def partitions_text(report: PartitionsReport, *, header: bool = True) -> list[str]:
    """The partitions answer as lines of text, one partition per line; without ``header``,
    those lines alone (a piece of the answer after the first: see
    :meth:`~openlineage_subset.lineage.Lineage.partitions_in_pieces`)."""
    lines = [f"Partitions of {report.dataset}", ""] if header else []
    if not report.partitions and header:
        lines.append(no_partitions_note(report))
        name = report.dataset.name
        if report.writes and report.writes == report.whole_writes:
            lines.append(f"Ask about the whole dataset: ol-subset lineage impact {name}")
        elif report.writes:
            lines.append(f"Its writes and their conditions: ol-subset lineage history {name}")
    for state in report.partitions:
        if state.writer is None:
            written = "no recorded writer"
        else:
            sure = "" if state.label == "definite" else " (possibly)"
            written = (
                f"last written by {state.writer.job} run {state.writer.run_id}{sure} "
                f"at {shown_time(state.writer.ended_at)}"
            )
        lines.append(f"  {state.partition}: {written}; read by {state.reads_since} run(s) since")
    return _shown(lines)
