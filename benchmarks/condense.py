"""Size, precision and time of condensing large partition selections, and of bounding an event.

Selections over a (business_date x country) universe of 250 countries, shaped like real reads
and writes, are condensed with ``condense_partitions`` at the adapter's defaults
(``SubsetConfig()``: listed up to 1,000 partitions, at most 256,000 bytes):

- box: a contiguous date range times some countries (200 days x 5, 500 x 20, 2,000 x 50);
- two blocks: two date ranges a year apart, each times its countries (the second block shares
  about three quarters of the first one's), (2 x 100 days) x 5, (2 x 250) x 20, (2 x 1,000) x 50;
- scattered: a random 1% of a universe of 100k (400 days), 1M (4,000 days, about 11 years) and
  10M partitions (40,000 days: 110 years, not a real calendar but the size a scattered 100k
  selection needs at 1%);
- write: the 20,000 partitions (200 days x 100 countries) a daily job's backfill writes.

Box and two-block selections, and the write, use the 1M universe (4,000 days from 2015-01-01).
For each it prints the partitions selected, the universe, the condition's JSON size, its
precision (the partitions selected / the universe's partitions the condition matches; 1.0 is
exact), the time ``condense_partitions`` took (one run), and the condition rendered (cut to 120
characters). Precision is counted exactly over the whole universe by a small evaluator of
conditions over the (day x country) grid (a bit mask of days per country; a partition list
counts as the cells it lists); the script checks that it agrees with ``matches()`` on a random
sample of universe and selected partitions.

Then one event, twice: a COMPLETE RunEvent whose 5 input datasets each carry a partition list
of about 244 KB (a box, two blocks, two scattered selections, a box), bounded by
``bound_event(event, 1_000_000)``; once listing each partition's dimensions and directory as
the adapter does (about 2,050 partitions a dataset), once its dimensions only (3,600). It prints
the event's size before, each resulting event's size after, how many datasets kept a subset
facet, and each dataset's condition after, with its precision.

Targets: every condition within 256,000 bytes and every event within 1,000,000 bytes; every
condition sound (it matches every selected partition); precision 1.0 for box-shaped selections
(box, write); at least 0.9 for two blocks. Scattered selections have no precision target (at
1%, what fits cannot be much more precise than the whole universe); the script prints what
they get. ``--checks`` partitions selected and as many of the universe are checked with
``matches()`` for every condition. The whole script takes about 15 seconds.

    python benchmarks/condense.py [--seed 7] [--checks 40]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import string
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openlineage_subset import dump, input_facet, matches, partition, partitions, render
from openlineage_subset.producer import bound_event, condense_partitions, json_size
from openlineage_subset.spark import SubsetConfig

CONFIG = SubsetConfig()
SCHEMA = {"business_date": "date", "country": "string"}
CODES = [a + b for a in string.ascii_uppercase for b in string.ascii_uppercase]
COUNTRIES = tuple(CODES[i * len(CODES) // 250] for i in range(250))
START = dt.date(2015, 1, 1)
PRODUCER = "https://github.com/openlineage-subset/openlineage-subset/tree/0.1.0/benchmarks"
EVENT_BYTES = 1_000_000
SHOWN = 120

Cell = tuple[int, int]
"""A partition of the universe: (day index, country index)."""


@dataclass(frozen=True)
class Universe:
    """Every partition of a dataset: ``days`` consecutive dates from START times COUNTRIES."""

    days: int

    @property
    def size(self) -> int:
        return self.days * len(COUNTRIES)

    def row(self, cell: Cell) -> dict[str, str]:
        day, country = cell
        return {
            "business_date": (START + dt.timedelta(days=day)).isoformat(),
            "country": COUNTRIES[country],
        }


# -- an evaluator of conditions over the whole universe ------------------------------------------

Mask = tuple[str, Any]
"""What a condition holds for: ("day", bits of days), ("country", bits of countries), or
("grid", one int of day bits per country)."""


class Grid:
    """Evaluates a condition over every partition of a universe at once."""

    def __init__(self, universe: Universe) -> None:
        self.universe = universe
        self.all_days = (1 << universe.days) - 1
        self.first = START.toordinal()

    def mask(self, node: Mapping[str, Any] | None) -> Mask:
        if node is None:
            return ("day", self.all_days)  # no condition: the whole dataset
        kind = node["type"]
        if kind == "binary":
            left, right = self.mask(node["left"]), self.mask(node["right"])
            return self._combine(node["operator"], left, right)
        if kind == "compare":
            return self._compare(node)
        if kind == "partition":
            return ("grid", self.cells_grid(self._listed(node["partitions"])))
        raise ValueError(f"the grid evaluator does not know {kind!r}")

    def cells_grid(self, cells: Sequence[Cell]) -> list[int]:
        grid = [0] * len(COUNTRIES)
        for day, country in cells:
            grid[country] |= 1 << day
        return grid

    def grid(self, mask: Mask) -> list[int]:
        kind, bits = mask
        if kind == "grid":
            return list(bits)
        if kind == "day":
            return [bits] * len(COUNTRIES)
        return [self.all_days if bits >> c & 1 else 0 for c in range(len(COUNTRIES))]

    def count(self, mask: Mask) -> int:
        return sum(bits.bit_count() for bits in self.grid(mask))

    def holds(self, mask: Mask, cell: Cell) -> bool:
        kind, bits = mask
        day, country = cell
        if kind == "grid":
            return bool(bits[country] >> day & 1)
        return bool(bits >> (day if kind == "day" else country) & 1)

    def _combine(self, operator: str, left: Mask, right: Mask) -> Mask:
        both: Callable[[int, int], int] = (
            (lambda a, b: a & b) if operator == "AND" else (lambda a, b: a | b)
        )
        if left[0] == right[0] != "grid":
            return (left[0], both(left[1], right[1]))
        pairs = zip(self.grid(left), self.grid(right), strict=True)
        return ("grid", [both(a, b) for a, b in pairs])

    def _compare(self, node: Mapping[str, Any]) -> Mask:
        comparison = node["comparison"]
        left, right = node["left"], node["right"]
        if left["type"] == "literal":  # 'x' < field is field > 'x'
            left, right = right, left
            comparison = {
                "GREATER_THAN": "LESS_THAN",
                "LESS_THAN": "GREATER_THAN",
                "GREATER_EQUAL_THAN": "LESS_EQUAL_THAN",
                "LESS_EQUAL_THAN": "GREATER_EQUAL_THAN",
            }.get(comparison, comparison)
        column, value = left["field"], right["value"]
        if column == "business_date":
            at = dt.date.fromisoformat(value).toordinal() - self.first
            below = {  # the first day index that does not hold, for LESS_*
                "LESS_THAN": at,
                "LESS_EQUAL_THAN": at + 1,
            }
            from_day = {"GREATER_THAN": at + 1, "GREATER_EQUAL_THAN": at}
            if comparison == "EQUAL":
                bits = 1 << at if 0 <= at < self.universe.days else 0
            elif comparison in below:
                bits = self._days_below(below[comparison])
            else:
                bits = self.all_days ^ self._days_below(from_day[comparison])
            return ("day", bits)
        tests: dict[str, Callable[[str], bool]] = {
            "EQUAL": lambda c: c == value,
            "LESS_THAN": lambda c: c < value,
            "LESS_EQUAL_THAN": lambda c: c <= value,
            "GREATER_THAN": lambda c: c > value,
            "GREATER_EQUAL_THAN": lambda c: c >= value,
        }
        test = tests[comparison]
        return ("country", sum(1 << i for i, c in enumerate(COUNTRIES) if test(c)))

    def _days_below(self, end: int) -> int:
        return (1 << min(max(end, 0), self.universe.days)) - 1

    def _listed(self, items: Sequence[Mapping[str, Any]]) -> list[Cell]:
        index = {c: i for i, c in enumerate(COUNTRIES)}
        cells = []
        for item in items:
            dims = item["dimensions"]
            day = dt.date.fromisoformat(dims["business_date"]).toordinal() - self.first
            if 0 <= day < self.universe.days and dims["country"] in index:
                cells.append((day, index[dims["country"]]))
        return cells


@dataclass
class Checked:
    """What a condition matches of its universe, and how the evaluator fared against
    ``matches()`` on a sample."""

    matched: int
    sound: bool
    sampled: int
    disagreements: int

    def precision(self, selected: int) -> float:
        return selected / self.matched if self.matched else 0.0


def check(
    condition: Mapping[str, Any] | None,
    cells: Sequence[Cell],
    universe: Universe,
    rng: random.Random,
    samples: int,
) -> Checked:
    grid = Grid(universe)
    mask = grid.mask(condition)
    chosen = grid.cells_grid(cells)
    found = sum((a & b).bit_count() for a, b in zip(grid.grid(mask), chosen, strict=True))
    sample = rng.sample(list(cells), min(samples, len(cells)))
    sample += [
        (rng.randrange(universe.days), rng.randrange(len(COUNTRIES))) for _ in range(samples)
    ]
    disagreements = 0
    for cell in sample:
        expected = True if condition is None else matches(condition, universe.row(cell), SCHEMA)
        disagreements += expected != grid.holds(mask, cell)
    return Checked(grid.count(mask), found == len(cells), len(sample), disagreements)


# -- selections ------------------------------------------------------------------------------


def box(first_day: int, days: int, countries: Sequence[int]) -> list[Cell]:
    return [(first_day + d, c) for d in range(days) for c in countries]


def shapes(rng: random.Random) -> list[tuple[str, list[Cell], Universe]]:
    """(name, selected cells, universe) of every case, in the order printed."""
    full = Universe(4_000)
    cases = []
    for days, count in ((200, 5), (500, 20), (2_000, 50)):
        countries = sorted(rng.sample(range(len(COUNTRIES)), count))
        cases.append(("box", box(1_500, days, countries), full))
    for days, count in ((100, 5), (250, 20), (1_000, 50)):
        first = sorted(rng.sample(range(len(COUNTRIES)), count))
        kept = rng.sample(first, count - count // 4)
        others = [c for c in range(len(COUNTRIES)) if c not in first]
        second = sorted(kept + rng.sample(others, count // 4))
        cells = box(1_000, days, first) + box(1_000 + days + 365, days, second)
        cases.append(("two blocks", cells, full))
    for days in (400, 4_000, 40_000):
        universe = Universe(days)
        everything = universe.size
        picked = rng.sample(range(everything), everything // 100)
        cells = [divmod(index, len(COUNTRIES)) for index in picked]
        cases.append(("scattered 1%", cells, universe))
    cases.append(("write", box(3_000, 200, range(100)), full))
    return cases


def shown(condition: Mapping[str, Any] | None) -> str:
    text = "(none: the whole dataset)" if condition is None else render(condition)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


# -- the event ----------------------------------------------------------------------------------


def event_datasets(rng: random.Random, count: int) -> list[tuple[str, list[Cell]]]:
    """Five selections of about ``count`` partitions each."""
    full = Universe(4_000)

    def pick(number: int) -> list[int]:
        return sorted(rng.sample(range(len(COUNTRIES)), number))

    def scattered(universe: int) -> list[Cell]:
        return [divmod(i, len(COUNTRIES)) for i in rng.sample(range(universe), count)]

    return [
        ("box", box(2_000, count // 20, pick(20))),
        ("two blocks", box(1_000, count // 50, pick(25)) + box(1_500, count // 50, pick(25))),
        ("scattered over 11 years", scattered(full.size)),
        ("scattered over 400 days", scattered(full.size // 10)),
        ("box", box(3_500, count // 10, pick(10))),
    ]


def listed(cells: Sequence[Cell], universe: Universe, identifiers: bool) -> Any:
    """The partition list: dimensions, and the directory as the adapter writes it."""
    items = []
    for cell in cells:
        row = universe.row(cell)
        path = f"business_date={row['business_date']}/country={row['country']}"
        items.append(partition(row, path if identifiers else None))
    return partitions(items)


def run_event(
    rng: random.Random, samples: int, count: int, identifiers: bool
) -> tuple[bool, list[Checked]]:
    """Bound one event of five inputs with listed partitions; print what came out."""
    universe = Universe(4_000)
    datasets = event_datasets(rng, count)
    inputs = []
    for index, (_, cells) in enumerate(datasets):
        condition = listed(cells, universe, identifiers)
        facet = dump(input_facet(condition, producer=PRODUCER))
        inputs.append(
            {"namespace": "s3://lake", "name": f"sales_{index}", "inputFacets": {"subset": facet}}
        )
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.UUID(int=rng.getrandbits(128), version=4))},
        "job": {"namespace": "benchmarks", "name": "condense.five_inputs"},
        "inputs": inputs,
        "outputs": [],
    }
    reports: list[str] = []
    start = time.perf_counter()
    bounded = bound_event(event, EVENT_BYTES, report=lambda name, what: reports.append(name))
    took = time.perf_counter() - start
    kind = "dimensions and identifier (as the adapter lists)" if identifiers else "dimensions only"
    print(
        f"\nOne RunEvent, 5 inputs listing partitions by {kind}, bound_event(event, "
        f"{EVENT_BYTES:,}): {json_size(event):,} bytes before, {len(bounded)} event(s) after, "
        f"in {took:.2f}s"
    )
    within = True
    kept = 0
    checks = []
    for number, part in enumerate(bounded, 1):
        size = json_size(part)
        within &= size <= EVENT_BYTES
        print(f"  event {number} ({part['eventType']}): {size:,} bytes after")
        for dataset in part["inputs"]:
            index = int(dataset["name"].rsplit("_", 1)[1])
            shape, cells = datasets[index]
            before = json_size(inputs[index]["inputFacets"]["subset"]["inputCondition"])
            facet = (dataset.get("inputFacets") or {}).get("subset")
            condition = facet["inputCondition"] if facet else None
            kept += facet is not None
            checked = check(condition, cells, universe, rng, samples)
            checks.append(checked)
            print(
                f"    {dataset['name']} ({shape}, {len(cells):,} partitions): condition "
                f"{before:,} -> {json_size(condition) if condition else 0:,} bytes, precision "
                f"{checked.precision(len(cells)):.3f}"
            )
            print(f"      {shown(condition)}")
    lost = f" (reported as lost: {', '.join(reports)})" if reports else ""
    print(f"  datasets that kept a subset facet: {kept} of {len(inputs)}{lost}")
    return within, checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--checks", type=int, default=40, help="partitions per case checked with matches()"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    budget = CONFIG.max_condition_bytes
    print(
        f"condense_partitions(partitions, {budget:,}, max_listed={CONFIG.max_partitions:,}) "
        f"over (business_date x country), {len(COUNTRIES)} countries, seed {args.seed}\n"
    )
    print(
        f"{'case':<13} {'partitions':>10} {'universe':>10} {'bytes':>8} {'precision':>9} "
        f"{'time':>9}"
    )
    results: list[tuple[str, int, float, Checked]] = []
    all_checks: list[Checked] = []
    for name, cells, universe in shapes(rng):
        rows = [universe.row(cell) for cell in cells]
        start = time.perf_counter()
        condensed = condense_partitions(rows, budget, max_listed=CONFIG.max_partitions)
        took = time.perf_counter() - start
        checked = check(condensed.condition, cells, universe, rng, args.checks)
        all_checks.append(checked)
        precision = checked.precision(len(cells))
        results.append((name, condensed.size, precision, checked))
        print(
            f"{name:<13} {len(cells):>10,} {universe.size:>10,} {condensed.size:>8,} "
            f"{precision:>9.3f} {took:>8.2f}s"
        )
        print(f"    {shown(condensed.condition)}")
    events_within = True
    for count, identifiers in ((2_050, True), (3_600, False)):
        within, event_checks = run_event(rng, args.checks, count, identifiers)
        events_within &= within
        all_checks += event_checks

    def verdict(met: bool) -> str:
        return "met" if met else "NOT MET"

    sampled = sum(c.sampled for c in all_checks)
    disagreements = sum(c.disagreements for c in all_checks)
    boxes = [p for name, _, p, _ in results if name in ("box", "write")]
    blocks = [p for name, _, p, _ in results if name == "two blocks"]
    print("\nTargets:")
    print(
        f"  every condition within {budget:,} bytes: "
        f"{verdict(all(size <= budget for _, size, _, _ in results))}"
    )
    print(f"  every event within {EVENT_BYTES:,} bytes: {verdict(events_within)}")
    print(f"  every condition sound: {verdict(all(c.sound for c in all_checks))}")
    print(
        f"  precision 1.0 for box-shaped selections (box, write): min {min(boxes):.3f}, "
        f"{verdict(min(boxes) == 1.0)}"
    )
    print(
        f"  precision >= 0.9 for two blocks: min {min(blocks):.3f}, {verdict(min(blocks) >= 0.9)}"
    )
    print(
        f"  grid evaluator agrees with matches() on {sampled - disagreements:,} of {sampled:,} "
        f"sampled partitions: {verdict(disagreements == 0)}"
    )


if __name__ == "__main__":
    main()
