"""The ``Lineage`` example of docs/lineage.md runs, over a small pipeline, and prints what the
pipeline's events say: the readers of the partition, its writer, and who touched it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.lineage.conftest import Build
from tests.lineage.events import day, run

DOCS = Path(__file__).parents[2] / "docs" / "lineage.md"


def _example() -> str:
    section = DOCS.read_text(encoding="utf-8").partition("### Many questions of one database")[2]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, "docs/lineage.md shows how to use Lineage"
    return found.group(1)


def test_the_lineage_example_runs(
    lineage_db: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lineage_db(
        [
            *run(1, 0, 10, writes=[("lake/sales", day("2024-10-15"))], job="load"),
            *run(
                2,
                20,
                30,
                reads=[("lake/sales", day("2024-10-15"))],
                writes=[("lake/daily", day("2024-10-15"))],
                job="daily",
            ),
            *run(3, 40, 50, reads=[("lake/sales", day("2024-10-16"))], job="other"),
        ]
    )
    monkeypatch.chdir(tmp_path)  # the example's lineage.db is the one just built
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(_example(), str(DOCS), "exec"), {})
    assert printed.getvalue().splitlines() == [
        "affected: daily definite",
        "written by: ['daily']",
        "touched by: 3 runs",  # load wrote it, daily and other read it
    ]
