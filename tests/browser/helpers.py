"""What the browser tests share: the script that measures a drawn graph in the page, and the
events of an on-call night (a failed write among long names) that the UI tests and
tests/service/test_ui_* and tests/report/ serve or draw."""

from __future__ import annotations

from typing import Any

from tests.lineage.events import day, pipeline_history, run

GEOMETRY = """svg => {
    const inside = (b, p, slack) => p.x > b.x - slack && p.x < b.x + b.width + slack
        && p.y > b.y - slack && p.y < b.y + b.height + slack;
    const onScreen = (element, p) => new DOMPoint(p.x, p.y).matrixTransform(
        element.getScreenCTM());
    const boxes = [...svg.querySelectorAll("g.node")].map(g => [
        g.dataset.key, g.querySelector("rect").getBoundingClientRect()]);
    const crossings = [];
    let points = 0;
    for (const path of svg.querySelectorAll("path.edge")) {
        const length = path.getTotalLength();
        const scale = path.getScreenCTM().a;
        const first = onScreen(path, path.getPointAtLength(0));
        const last = onScreen(path, path.getPointAtLength(length));
        const ends = boxes.filter(([, b]) => inside(b, first, 1) || inside(b, last, 1))
            .map(([key]) => key);
        for (let at = 0; at <= length; at += 2 / Math.max(scale, 1)) {
            const point = onScreen(path, path.getPointAtLength(at));
            points += 1;
            for (const [key, b] of boxes) {
                if (!ends.includes(key) && inside(b, point, -1)) {
                    crossings.push([path.dataset.source, path.dataset.target, key]);
                }
            }
        }
    }
    const misfits = [];
    for (const g of svg.querySelectorAll("g.node")) {
        const box = g.querySelector("rect").getBBox();
        for (const line of g.querySelectorAll("text")) {
            const right = line.getBBox().x + line.getComputedTextLength();
            if (right > box.x + box.width - 2) misfits.push(line.textContent);
        }
    }
    return {edges: svg.querySelectorAll("path.edge").length, points,
            crossings: crossings.slice(0, 20), crossed: crossings.length, misfits};
}"""
"""Every edge sampled every 2 px along its length as Chromium draws it on the screen (after any
zoom and pan), each point checked against every box on the screen but the two its ends lie
on; every label's drawn width against its box."""

APP = "nc_events_pipeline_for_the_regional_collectors"
"""The start of every job name of :func:`oncall_events`: longer than a graph box."""
INSERT = f"{APP}.execute_insert_into_hadoop_fs_relation_command.pipe_lake_daily_agg"
COUNT = f"{APP}.collect_limit.pipe_lake_daily_agg"
LOAD = f"{APP}.execute_insert_into_hadoop_fs_relation_command.pipe_lake_raw_events"
RAW_LONG = "pipe_lake_raw_events_from_the_regional_collectors_partitioned_by_day_and_country"
DAILY_LONG = "pipe_lake_quarterly_regional_events_rolled_up_by_country_daily_agg"
ONCALL_DATES = ("2024-10-01", "2024-10-02", "2024-10-03")
FAILED_DAY = ONCALL_DATES[-1]
ERROR_MESSAGE = (
    "Job aborted due to stage failure: Task 0 in stage 7.0 failed 4 times, most recent failure: "
    + "Lost task 0.3 in stage 7.0 (TID 31) (executor 1): org.apache.spark.SparkException: "
    + "[TASK_WRITE_FAILED] Task failed while writing rows to file:/lake/"
    + DAILY_LONG * 3
    + "\nCaused by: java.io.IOException: No space left on device"
)
"""The failed insert's error, as Spark's runs give it: one very long line, then another."""
STACK_TRACE = "".join(
    f"\tat org.apache.spark.scheduler.Frame{n}.run(Frame.scala:{n})\n" for n in range(60)
)
"""The day whose ``daily_agg`` write failed last (after the pipeline's failed ``rolling``)."""


def oncall_events() -> list[dict[str, Any]]:
    """:func:`~tests.lineage.events.pipeline_history` (its ``rolling`` write of 2024-10-08
    fails), then a pipeline of long names, as Spark's integration names jobs: each day a load
    of ``raw`` (day, country), an insert into ``daily_agg`` (its last one fails) and a count
    of ``daily_agg``; the insert and the count differ only in their action."""
    events = list(pipeline_history())
    for index, date in enumerate(ONCALL_DATES):
        minute = 200 + 10 * index
        number = 700 + 3 * index
        raw = day(date, "US")
        events += run(number, minute, minute + 1, writes=[(RAW_LONG, raw)], job=LOAD)
        status = "FAIL" if date == FAILED_DAY else "COMPLETE"
        reads = [(RAW_LONG, raw)]
        writes = [(DAILY_LONG, day(date))]
        inserted = run(
            number + 1,
            minute + 2,
            minute + 3,
            reads=reads,
            writes=writes,
            job=INSERT,
            status=status,
        )
        if status == "FAIL":
            error = {
                "_producer": "tests",
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json",
                "message": ERROR_MESSAGE,
                "programmingLanguage": "JAVA",
                "stackTrace": STACK_TRACE,
            }
            inserted[-1]["run"] = {**inserted[-1]["run"], "facets": {"errorMessage": error}}
        events += inserted
        events += run(
            number + 2, minute + 4, minute + 5, reads=[(DAILY_LONG, day(date))], job=COUNT
        )
    return events
