"""Facets validated per second: ``validate()`` against a prebuilt jsonschema validator.

Both check the same corpus of typical subset facet maps (partitions, locations, a row filter
of a few comparisons) in the same process; the script prints both rates and their ratio.
Target: ``validate()`` at least 5x the prebuilt ``jsonschema.Draft202012Validator``.

    python benchmarks/validate.py [--seconds 0.5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from openlineage_subset import (
    dump,
    field,
    input_facet,
    location,
    output_facet,
    partition,
    partitions,
    reference_validator,
    validate,
)

PRODUCER = "https://github.com/openlineage-subset/openlineage-subset/tree/0.1.0/benchmarks"


def corpus() -> list[dict[str, Any]]:
    """Facet maps of the kinds a Spark job emits."""
    days = ["2024-10-14", "2024-10-15"]
    conditions = [
        partitions(
            [partition({"business_date": d, "country": c}) for d in days for c in ("PL", "DE")]
        ),
        location([f"s3://landing/clickstream/2024/10/{day}" for day in (14, 15, 16)]),
        (field("region") == "EU") & (field("active") == True),  # noqa: E712
        (field("amount") > 100) & field("country").isin(["PL", "DE", "FR", "IT"]),
        field("event_time").between("2024-10-15T00:00:00Z", "2024-10-15T23:59:59Z"),
    ]
    facets = [input_facet(c, producer=PRODUCER) for c in conditions]
    facets.append(
        output_facet(partitions([partition({"business_date": days[1]})]), producer=PRODUCER)
    )
    return [{"subset": dump(facet)} for facet in facets]


def rate(check: Callable[[Any], object], documents: list[dict[str, Any]], seconds: float) -> float:
    """Documents per second: the median of five timed rounds of about ``seconds`` each."""
    rounds = []
    for _ in range(5):
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            for document in documents:
                check(document)
            count += len(documents)
        rounds.append(count / elapsed)
    return statistics.median(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="length of one timed round")
    args = parser.parse_args()
    documents = corpus()
    prebuilt = reference_validator(version=None)
    for document in documents:
        assert validate(document, strict=True) == [] and prebuilt.is_valid(document)
    ours = rate(validate, documents, args.seconds)
    theirs_all = rate(lambda d: list(prebuilt.iter_errors(d)), documents, args.seconds)
    theirs_valid = rate(prebuilt.is_valid, documents, args.seconds)
    ours_strict = rate(lambda d: validate(d, strict=True), documents, args.seconds)
    baseline = max(theirs_all, theirs_valid)
    print(f"corpus: {len(documents)} typical facet maps")
    print(f"validate()                       {ours:12,.0f} facets/s")
    print(f"validate(strict=True)            {ours_strict:12,.0f} facets/s")
    print(f"jsonschema is_valid (prebuilt)   {theirs_valid:12,.0f} facets/s")
    print(f"jsonschema iter_errors (prebuilt){theirs_all:12,.0f} facets/s")
    print(f"ratio validate() / best jsonschema: {ours / baseline:.1f}x (target >= 5x)")
    print(f"ratio strict / best jsonschema:     {ours_strict / baseline:.1f}x")


if __name__ == "__main__":
    main()
