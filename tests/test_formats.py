"""The format checks strict mode asserts accept what their definitions say."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openlineage_subset_generated._support import matches_format

ABSOLUTE_URI = re.compile(
    r"^[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$"
)
"""An absolute RFC 3986 URI read a character or a percent escape at a time: the plain form of
what the faster check in the support module must accept."""

URI_LIKE = st.text(alphabet="aZ09:/%fFgG-._~?#[]@!$&'()*+,;= \n\x00é", max_size=12)


@given(st.sampled_from(["", "h", "http:", "urn:x:"]), URI_LIKE)
def test_uri_is_an_absolute_uri_with_escapes(prefix: str, rest: str) -> None:
    value = prefix + rest
    assert matches_format("uri", value) == (ABSOLUTE_URI.match(value) is not None), value


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
