"""Text answers: a long condition is broken at its top-level ORs, never inside a clause."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset.lineage.queries._answer_text import _WIDTH, _top_level_or, _wrapped


def test_only_top_level_ors_outside_quotes_split() -> None:
    text = "a = 'x OR y' OR (b = 1 OR c = 2) OR d = 'it''s OR'"
    assert _top_level_or(text) == ["a = 'x OR y'", "(b = 1 OR c = 2)", "d = 'it''s OR'"]


clauses = st.lists(
    st.sampled_from(
        [
            "PARTITION (business_date = '2024-10-15', country = 'DE')",
            "amount > 100",
            "(a = 1 OR b = 'x OR y')",
            "name = 'it''s OR not'",
        ]
    ),
    min_size=1,
    max_size=12,
)


@given(clauses)
def test_wrapping_keeps_every_clause_whole_and_in_order(items: list[str]) -> None:
    text = "            where " + " OR ".join(items)
    lines = _wrapped(text, 18)
    assert " ".join(line.strip() for line in lines) == text.strip(), "nothing lost or added"
    assert all(len(line) <= _WIDTH for line in lines[1:] if line.count(" OR ") == 1)
    assert all(line.startswith(" " * 15 + "OR ") for line in lines[1:])
    if len(text) <= _WIDTH:
        assert lines == [text]
