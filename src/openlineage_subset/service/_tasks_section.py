"""The UI's "what to re-run" block of an impact answer: the backfill plan by orchestrator task.

What an on-call engineer runs to recompute what a bad partition affected: one block to copy,
a shell script whose commands clear each Airflow task run (DAG, task, logical date), in the
order the affected runs ran, each with a comment line saying what it recomputes; what has no
command (a run with no orchestrator parent, a task run whose logical date was never posted) is
a comment saying so. The lines come from :class:`~openlineage_subset.lineage.TaskRerun`.
"""

from __future__ import annotations

from collections.abc import Sequence

from openlineage_subset import printable
from openlineage_subset.lineage import AIRFLOW_VERSION_NOTE, TaskRerun, task_heading

TASKS_LABEL = "Re-run, in dependency order (commands)"


def tasks_copy(tasks: Sequence[TaskRerun], heading: str) -> tuple[str, str]:
    """The label and the text of the block to copy for ``tasks`` of the impact of
    ``heading``."""
    lines = [f"# re-run, in dependency order, for the {heading}"]
    if any(rerun.command is not None for rerun in tasks):
        lines.append(f"# {AIRFLOW_VERSION_NOTE}")
    if not tasks:
        lines.append("# nothing: no run read the affected data")
    for rerun in tasks:
        lines.append(f"# {rerun.label}: {task_heading(rerun)}")
        for part in rerun.backfill:
            shown = [str(item) for item in part.definite + part.possible]
            whole = ["whole dataset"] if part.whole is not None else []
            lines.append(f"#   recomputes {part.dataset}: {', '.join(whole + shown)}")
        if rerun.command is not None:
            lines.append(rerun.command)
        elif rerun.overlapping:
            also = ", ".join(rerun.overlapping)
            lines.append(f"#   clear by hand: 'airflow tasks clear -t' would also clear {also}")
        elif rerun.task is not None:
            lines.append("#   no logical date recorded: clear this task in its DAG run by hand")
        else:
            lines.append("#   no orchestrator task recorded: re-run this job by hand")
    return TASKS_LABEL, "\n".join(printable(line) for line in lines) + "\n"
