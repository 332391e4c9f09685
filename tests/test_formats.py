"""The format checks strict mode asserts accept what their definitions say."""

from __future__ import annotations

import re

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from openlineage_subset_generated._support import matches_format

from openlineage_subset import validate
from tests.helpers import INPUT_URL

ABSOLUTE_URI = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*"
)
"""An absolute RFC 3986 URI read a character or a percent escape at a time: the plain form of
what the faster check in the support module must accept."""

URI_LIKE = st.text(alphabet="aZ09:/%fFgG-._~?#[]@!$&'()*+,;= \n\x00é", max_size=12)


@given(st.sampled_from(["", "h", "http:", "urn:x:"]), URI_LIKE)
def test_uri_is_an_absolute_uri_with_escapes(prefix: str, rest: str) -> None:
    value = prefix + rest
    assert matches_format("uri", value) == (ABSOLUTE_URI.fullmatch(value) is not None), value


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("https://example.com/a%20b?q=1#f", True),
        ("urn:producer:demo", True),
        ("https://example.com/%2", False),
        ("https://example.com/%zz", False),
        ("https://example.com/a b", False),
        ("//example.com/relative", False),
        ("1http://example.com", False),
    ],
)
def test_uri_examples(value: str, valid: bool) -> None:
    assert matches_format("uri", value) is valid


VALID = {
    "uri": "https://example.com/producer",
    "date-time": "2024-10-15T10:00:00Z",
    "uuid": "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11",
}


@pytest.mark.parametrize("fmt", sorted(VALID))
@pytest.mark.parametrize("ending", ["\n", "\r\n", "\n\n", " ", "\x00"])
def test_a_format_check_reads_to_the_end_of_the_string(fmt: str, ending: str) -> None:
    """``$`` also matches before a final newline: ``"https://x\\n"`` was taken for a uri."""
    value = VALID[fmt] + ending
    assert matches_format(fmt, VALID[fmt])
    assert not matches_format(fmt, value)
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    if fmt in checker.checkers:
        assert checker.conforms(VALID[fmt], fmt)
        assert not checker.conforms(value, fmt)


def test_strict_validation_reports_a_producer_with_a_trailing_newline() -> None:
    facet = {
        "inputCondition": {"type": "location", "locations": []},
        "_producer": "https://example.com/producer\n",
        "_schemaURL": INPUT_URL,
    }
    assert validate(facet) == []
    assert [issue.path for issue in validate(facet, strict=True)] == ["$._producer"]
