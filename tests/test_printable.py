"""The one escaping rule, in JSON's spelling: the same JSON value, nothing that does not print."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset._printable import json_escapes, printable_json

HOSTILE = "\u202e\u2066\x9b\x85\u2028\x1b[2J\U000e0001\udc80 ok \u58f2\u4e0a"

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(values, st.sampled_from([None, 2]))
def test_the_json_means_the_same_and_only_prints(value: Any, indent: int | None) -> None:
    encoded = json.dumps(value, ensure_ascii=False, indent=indent)
    shown = printable_json(encoded)
    assert json.loads(shown) == value
    assert all(line.isprintable() for line in shown.split("\n"))
    assert "".join(piece for piece, _ in json_escapes(encoded)) == shown


def test_escapes_are_json_escapes_and_printable_text_is_kept() -> None:
    encoded = json.dumps({"name": HOSTILE}, ensure_ascii=False, indent=2)
    shown = printable_json(encoded)
    assert shown == (
        '{\n  "name": "\\u202e\\u2066\\u009b\\u0085\\u2028\\u001b[2J\\udb40\\udc01\\udc80 ok '
        '\u58f2\u4e0a"\n}'
    )
    marked = [piece for piece, escaped in json_escapes(encoded) if escaped]
    assert marked == [
        "\\u202e",
        "\\u2066",
        "\\u009b",
        "\\u0085",
        "\\u2028",
        "\\udb40\\udc01",
        "\\udc80",
    ]
