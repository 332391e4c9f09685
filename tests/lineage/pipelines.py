"""Random pipelines over a few partitioned datasets (hypothesis strategies) and their events:
each step reads one dataset under a condition and writes partitions of another, and may fail.
The oracle tests follow individual rows through them.
"""

from __future__ import annotations

import dataclasses
import itertools

from hypothesis import strategies as st

from tests.lineage.events import Json, compare, parts, run

DAYS = ["2024-10-14", "2024-10-15", "2024-10-16"]
COUNTRIES = ["DE", "FR", "PL"]
XS = ["1", "2", "3"]
PARTITIONS = list(itertools.product(DAYS, COUNTRIES))
COMPARISONS = ["EQUAL", "GREATER_THAN", "GREATER_EQUAL_THAN", "LESS_THAN", "LESS_EQUAL_THAN"]
SCHEMA = {"day": "date", "country": "string", "x": "int"}
LOAD_END = 1


@dataclasses.dataclass(frozen=True)
class Step:
    read: int
    condition: Json | None  # None: the whole dataset
    on_partitions: bool  # the condition names partition columns only
    write: int
    wrote: tuple[tuple[str, str], ...]
    xs: tuple[str, ...]
    start: int
    end: int
    failed: bool


def partition_list(chosen: list[tuple[str, str]]) -> Json:
    return parts(*({"day": d, "country": c} for d, c in chosen))


conditions = st.one_of(
    st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=4, unique=True).map(
        lambda chosen: (partition_list(chosen), True)
    ),
    st.builds(
        lambda op, value: (compare("day", op, value), True),
        st.sampled_from(COMPARISONS),
        st.sampled_from(DAYS),
    ),
    st.builds(
        lambda op, value: (compare("country", op, value), True),
        st.sampled_from(COMPARISONS),
        st.sampled_from(COUNTRIES),
    ),
    st.builds(
        lambda op, value: (compare("x", op, value), False),
        st.sampled_from(COMPARISONS),
        st.sampled_from(XS),
    ),
    st.just((None, True)),
)


@st.composite
def pipelines(draw: st.DrawFn) -> tuple[int, list[Step]]:
    datasets = draw(st.integers(2, 4))
    steps = []
    for index in range(draw(st.integers(1, 8))):
        condition, on_partitions = draw(conditions)
        start = 10 + 10 * index
        steps.append(
            Step(
                read=draw(st.integers(0, datasets - 1)),
                condition=condition,
                on_partitions=on_partitions,
                write=draw(st.integers(0, datasets - 1)),
                wrote=tuple(
                    draw(st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=3, unique=True))
                ),
                xs=tuple(draw(st.lists(st.sampled_from(XS), min_size=1, max_size=2, unique=True))),
                start=start,
                end=start + draw(st.integers(1, 25)),
                failed=draw(st.integers(0, 3)) == 0,  # one run in four fails
            )
        )
    return datasets, steps


def pipeline_events(datasets: int, steps: list[Step]) -> list[Json]:
    everything = partition_list(PARTITIONS)
    events = []
    for dataset in range(datasets):  # every partition of every dataset exists from the start
        events += run(1000 + dataset, 0, LOAD_END, writes=[(f"d{dataset}", everything)])
    for number, step in enumerate(steps):
        events += run(
            number,
            step.start,
            step.end,
            reads=[(f"d{step.read}", step.condition)],
            writes=[(f"d{step.write}", partition_list(list(step.wrote)))],
            status="FAIL" if step.failed else "COMPLETE",
        )
    return events
