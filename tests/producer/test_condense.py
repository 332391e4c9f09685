"""Sound condensation: within the budget, holding for everything selected, precise where the
selection has a short exact form. Soundness is checked by the SDK's own evaluator, both typed
and as text (the promise that ranges only join values whose text order is their typed order).
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from openlineage_subset import dump, field, matches, render, spec, validate
from openlineage_subset.producer._condense import (
    condense,
    condense_locations,
    condense_partitions,
    fair_shares,
    json_size,
)
from tests.helpers import PRODUCER

TYPES = {"day": "date", "hour": "int", "country": "string"}
TEXT = dict.fromkeys(TYPES, "string")
DAYS = [(dt.date(2024, 1, 25) + dt.timedelta(days=n)).isoformat() for n in range(24)]
HOURS = [str(h) for h in range(0, 40, 3)]  # one and two digits
COUNTRIES = ["AT", "DE", "FR", "PL", "US"]
VALUES = {"day": DAYS, "hour": HOURS, "country": COUNTRIES}


def _strictly_valid(condition: dict[str, Any]) -> bool:
    url = spec().models.InputSubsetInputDatasetFacet.SCHEMA_URL
    facet = {"_producer": PRODUCER, "_schemaURL": url, "inputCondition": condition}
    return validate({"subset": facet}, strict=True) == []


def _holds(condition: dict[str, Any] | None, partition: dict[str, Any]) -> bool:
    """Typed and as text: either way the condition holds for the partition."""
    if condition is None:
        return True
    return matches(condition, partition, TYPES) and matches(condition, partition, TEXT)


@st.composite
def selections(draw: st.DrawFn) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """(columns, universe, selected): partitions over one to three columns, shaped like reads."""
    columns = draw(st.lists(st.sampled_from(list(VALUES)), min_size=1, max_size=3, unique=True))
    universe = [{}]
    for column in columns:
        values: list[str | None] = list(VALUES[column])
        if draw(st.booleans()):
            values.append(None)  # the null partition
        universe = [{**p, column: v} for p in universe for v in values]
    shape = draw(st.sampled_from(["box", "two boxes", "random"]))
    event(f"shape: {shape}")
    rng = random.Random(draw(st.integers(0, 2**16)))

    def box() -> dict[str, set[Any]]:
        chosen = {}
        for column in columns:
            options = [p[column] for p in universe]
            ordered = list(dict.fromkeys(options))
            low = rng.randrange(len(ordered))
            high = rng.randrange(low, len(ordered))
            chosen[column] = set(ordered[low : high + 1])
        return chosen

    if shape == "random":
        picked = [p for p in universe if rng.random() < 0.3] or universe[:1]
    else:
        boxes = [box() for _ in range(1 if shape == "box" else 2)]
        picked = [p for p in universe if any(all(p[c] in b[c] for c in columns) for b in boxes)]
    return columns, universe, picked


@given(selections(), st.integers(300, 40_000))
@settings(max_examples=80)
def test_condensed_partitions_are_sound_and_within_budget(
    chosen: tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]], budget: int
) -> None:
    _, universe, selected = chosen
    result = condense_partitions(selected, budget, max_listed=10)
    event("none" if result.condition is None else ("exact" if result.exact else "condensed"))
    if result.condition is None:
        return
    assert result.size == json_size(result.condition) <= budget
    assert _strictly_valid(result.condition)
    for partition in selected:
        assert _holds(result.condition, partition), partition
    if result.exact:  # nothing else of the universe, typed
        admitted = [p for p in universe if matches(result.condition, p, TYPES)]
        assert len(admitted) == len(selected)


def _precision(condition: dict[str, Any], universe: list[dict[str, Any]], selected: int) -> float:
    return selected / sum(1 for p in universe if matches(condition, p, TYPES))


def test_a_box_reads_like_a_hand_written_condition() -> None:
    selected = [{"day": d, "country": c} for d in DAYS[7:20] for c in ("DE", "PL")]
    result = condense_partitions(selected, 100_000, max_listed=0)
    assert result.exact
    assert render(result.condition) == (
        "day >= '2024-02-01' AND day <= '2024-02-13' AND (country = 'DE' OR country = 'PL')"
    )


def test_two_date_blocks_stay_two_blocks() -> None:
    universe = [{"day": d, "country": c} for d in DAYS for c in COUNTRIES]
    selected = [p for p in universe if p["day"] in DAYS[0:6] + DAYS[12:20]]
    result = condense_partitions(selected, 2_000, max_listed=0)
    assert result.condition is not None
    assert _precision(result.condition, universe, len(selected)) == 1.0
    assert render(result.condition).count("day >=") == 2


def test_integer_ranges_split_by_number_of_digits() -> None:
    selected = [{"hour": str(h)} for h in range(1, 25)]
    condition = condense_partitions(selected, 1_000, max_listed=0).condition
    assert render(condition) == "(hour >= 1 AND hour <= 9) OR (hour >= 10 AND hour <= 24)"
    # As text, '3' > '24': one range 1..24 would miss it; the two ranges do not.
    for partition in selected:
        assert _holds(condition, partition)


def test_signed_and_decimal_values_are_only_listed() -> None:
    selected = [{"delta": v} for v in ("-3", "-2", "-1", "0.5", "1.5")]
    condition = condense_partitions(selected, 10_000, max_listed=0).condition
    assert "<" not in render(condition) and ">" not in render(condition)
    tight = condense_partitions(selected, 200, max_listed=0)
    assert tight.condition is None  # no sound range over them, and the list does not fit


def test_the_exact_list_is_kept_when_it_fits_and_nothing_shorter_is_exact() -> None:
    selected = [{"day": "2024-01-01", "country": "DE"}, {"day": "2024-03-05", "country": "PL"}]
    result = condense_partitions(selected, 10_000)
    assert result.exact and result.condition["type"] == "partition"


def test_nothing_fits_in_a_tiny_budget() -> None:
    selected = [{"day": d} for d in DAYS[::2]]
    assert condense_partitions(selected, 50).condition is None


def test_a_null_partition_leaves_its_column_unconstrained() -> None:
    selected = [{"day": d, "country": c} for d in DAYS[:20] for c in ("DE", None)]
    result = condense_partitions(selected, 1_000, max_listed=0)
    assert "country" not in render(result.condition)
    for partition in selected:
        assert _holds(result.condition, partition)


def test_a_long_in_list_becomes_ranges() -> None:
    ids = sorted(random.Random(3).sample(range(10_000, 99_999), 3_000))
    wide = dump(field("id").isin(ids) & (field("country") == "PL"))
    result = condense(wide, 3_000)
    assert result.size <= 3_000 and not result.exact
    assert "country = 'PL'" in render(result.condition), "the small conjunct is kept"
    for value in ids:
        row = {"id": value, "country": "PL"}
        assert matches(result.condition, row, {"id": "bigint"})
        assert matches(result.condition, {"id": str(value), "country": "PL"}, {"id": "string"})


def test_an_or_with_a_branch_that_cannot_shrink_is_everything() -> None:
    huge = dump((field("a") == "x" * 10_000) | (field("b") == "y"))
    assert condense(huge, 2_000).condition is None


def test_a_condition_that_fits_is_returned_unchanged() -> None:
    small = dump(field("a") > 3)
    result = condense(small, 1_000)
    assert result.condition == small and result.exact


def test_locations_condense_to_parent_directories() -> None:
    files = [
        f"s3://bucket/sales/day={d}/part-{n:05}.parquet" for d in range(1, 6) for n in range(300)
    ]
    result = condense_locations(files, 2_000)
    assert result.condition["locations"] == [f"s3://bucket/sales/day={d}" for d in range(1, 6)]
    for path in files:
        assert matches(result.condition, {}, path=path)


def test_locations_never_go_above_their_common_directory_or_into_a_scheme() -> None:
    files = [f"s3://bucket/sales/day=1/part-{n:05}.parquet" for n in range(500)]
    common = condense_locations(files, 300).condition
    assert common is not None and common["locations"] == ["s3://bucket/sales/day=1"]
    spread = [f"s3://bucket-{n}/k" for n in range(100)]
    assert condense_locations(spread, 300).condition is None


@given(st.lists(st.integers(0, 5_000), max_size=12), st.integers(0, 20_000))
def test_fair_shares(sizes: list[int], budget: int) -> None:
    shares = fair_shares(sizes, budget)
    assert sum(shares) <= budget
    short = [size for size, share in zip(sizes, shares, strict=True) if share < size]
    if short:
        assert max(shares) - min(s for s, z in zip(shares, sizes, strict=True) if s < z) <= 1
    for size, share in zip(sizes, shares, strict=True):
        assert share <= size
        if share < size:  # squeezed: no one keeps more than a squeezed one's share
            assert all(other <= share + 1 for other in shares)


@pytest.mark.parametrize("budget", [0, 10])
def test_no_condition_is_everything(budget: int) -> None:
    assert condense(None, budget).condition is None


@pytest.mark.parametrize("scheme", ["file", "hdfs"])
def test_locations_without_an_authority_keep_a_directory(scheme: str) -> None:
    files = [f"{scheme}:///tmp/a.parquet", f"{scheme}:///var/b.parquet"]
    assert condense_locations(files, 50).condition is None
    condition = condense_locations(files, 70).condition
    assert condition is not None
    assert condition["locations"] == [f"{scheme}:///tmp", f"{scheme}:///var"]
    for path in files:
        assert matches(condition, {}, path=path)


# Times whose text order is not their time order: a fraction, an offset, ' ' against 'T'.
TIMESTAMPS = [
    "2024-01-01T10:00:00Z",
    "2024-01-01T10:00:00.5Z",
    "2024-01-01T10:00:01Z",
    "2024-01-01T11:30:00+02:00",
    "2024-01-01 09:15:00",
    "2024-01-01T09:45:00Z",
    "2024-01-02T00:00:00-05:00",
]


@given(
    st.lists(st.sampled_from(TIMESTAMPS), min_size=1, unique=True),
    st.sampled_from(["date", "text"]),
    st.integers(100, 2_000),
)
def test_timestamps_are_only_listed_never_ranged(
    picked: list[str], other: str, budget: int
) -> None:
    others = DAYS[:3] if other == "date" else COUNTRIES[:3]
    rows = [{"ts": ts, "o": o} for ts in picked for o in others]
    result = condense_partitions(rows, budget, max_listed=0)
    if result.condition is None:
        return
    types = {"ts": "timestamp", "o": "date" if other == "date" else "string"}
    for row in rows:
        assert matches(result.condition, row, types), row
    unpicked = [ts for ts in TIMESTAMPS if ts not in picked]
    rendered = render(result.condition)
    assert "ts >" not in rendered and "ts <" not in rendered, rendered
    for ts in unpicked:  # a listed value never admits another instant
        row = {"ts": ts, "o": others[0]}
        if matches(result.condition, row, types):
            assert "ts" not in rendered, rendered


@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["day", "naïve", 'q"uote', "x\\y"]),
            st.none() | st.text(max_size=6),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=8,
    )
)
def test_an_exact_list_that_fits_to_the_byte_is_kept(rows: list[dict[str, str | None]]) -> None:
    listed = {"type": "partition", "partitions": [{"dimensions": row} for row in rows]}
    size = json_size(listed)
    result = condense_partitions(rows, size)
    assert result.exact and result.condition is not None
    assert result.size == json_size(result.condition) <= size
    assert condense_partitions(rows, size - 1).condition != listed
