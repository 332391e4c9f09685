"""One strict reader of JSON input: ``validate``, ``lineage ingest`` and ``POST /api/v1/lineage``
read the same bytes by the same rules, and say the same words of what they refuse.

Input is bytes no one vouches for. It is decoded strictly as UTF-8 (a byte order mark is
skipped only where an input starts: :func:`input_start`); then read by Python's ``json``, with
what Python reads but JSON does not allow, or JSON readers disagree on, refused: ``NaN`` and
``Infinity``, an integer of more than 4,300 digits (Python's own limit, fixed here so that
every Python reads alike), a key repeated in one object, nesting deeper than 512 levels, a lone
surrogate (``"\\ud800"``, which no UTF-8 text holds). A text that is not JSON at all raises
:class:`UnusableJson` from :func:`parse_json`; a refused value is left in place, so that the
refusal names its JSON path (:meth:`ParsedJson.problem`), and a reader can still tell a line
that is a JSON value by itself from a document spread over lines. :func:`read_json` does both
and raises for either.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from openlineage_subset._errors import OpenLineageSubsetError
from openlineage_subset._issues import SubsetDocumentError, json_error_text, json_path
from openlineage_subset._lines import RAISE_IT, lone_surrogate, may_hold_surrogate
from openlineage_subset._nesting import MAX_DEPTH, TOO_DEEP, check_nesting, stack_room

__all__ = [
    "BOM",
    "MAX_INTEGER_DIGITS",
    "ParsedJson",
    "UnusableJson",
    "input_start",
    "is_blank",
    "parse_json",
    "read_json",
    "too_big",
]

BOM = b"\xef\xbb\xbf"
"""UTF-8's byte order mark: skipped where an input starts, refused anywhere else."""
MAX_INTEGER_DIGITS = 4300
"""The most digits an integer may have: Python's own limit (``sys.set_int_max_str_digits``)."""


class UnusableJson(ValueError, OpenLineageSubsetError):
    """Input that is not a JSON document this package reads; the message says why, in the
    words every reader reports."""


def input_start(data: bytes, offset: int = 0) -> tuple[bytes, int]:
    """``data`` read at byte ``offset`` of an input, without the byte order mark that may
    start the input (there only), and the offset of what is left.

    >>> input_start(b"\\xef\\xbb\\xbf{}")
    (b'{}', 3)
    >>> input_start(b"\\xef\\xbb\\xbf{}", 10)  # not at the start: left for the reader to refuse
    (b'\\xef\\xbb\\xbf{}', 10)
    """
    if offset == 0 and data.startswith(BOM):
        return data[len(BOM) :], len(BOM)
    return data, offset


def is_blank(data: bytes) -> bool:
    """Whether ``data`` is JSON's whitespace only (space, tab, line feed, carriage return): a
    blank line, which holds no document. Other spaces (a form feed) are no JSON.

    >>> is_blank(b" \\r\\n"), is_blank(b"\\x0c")
    (True, False)
    """
    return _BLANK(data) is not None


_BLANK = re.compile(rb"[ \t\r\n]*").fullmatch


def too_big(limit: int) -> str:
    """Why an input whose first line is no JSON value, over ``limit`` bytes, is not read."""
    return (
        f"not valid JSON on its first line, and more than {limit} bytes, the limit of a "
        f"document read whole: write it as JSON Lines (one document a line), or {RAISE_IT}"
    )


class _Disallowed:
    """Stands in a parsed document for a value JSON does not allow, or readers disagree on."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class ParsedJson:
    """A JSON text as Python's ``json`` reads it, with each refused value in its place.

    :attr:`value` is the document; :meth:`problem` says why it is not usable, or None, and
    :meth:`problem_in` the same of a value within it (one document of an array).
    """

    __slots__ = ("levels", "refused", "surrogates", "value")

    def __init__(self, value: Any, refused: int, surrogates: bool) -> None:
        self.value = value
        self.levels: int | None = None
        """How many levels the document nests, once :meth:`problem` found it usable."""
        self.refused = refused
        """How many values were refused: none, most of the time, and nothing to look for."""
        self.surrogates = surrogates
        """Whether the text spells a surrogate escape (only then can it hold a lone one)."""

    def problem(self) -> str | None:
        """Why the document is not usable (see :meth:`problem_in`), or None."""
        return self.problem_in(self.value)

    def problem_in(self, value: Any) -> str | None:
        """Why ``value``, the document or a value in it (one document of an array), is not
        usable, with JSON paths from it: its first refused value, else its first lone
        surrogate, else nesting past the limit; None when it is usable."""
        found = self._refusal_in(value)
        if found is None and self.surrogates:
            found = lone_surrogate(value)
        if found is None:
            try:
                levels = check_nesting(value, "document")
            except SubsetDocumentError as error:
                found = f"not usable JSON at {error.issues[0]}"
            else:
                if value is self.value:
                    self.levels = levels
        return found

    def _refusal_in(self, document: Any) -> str | None:
        if not self.refused:
            return None
        stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
        while stack:
            node, path = stack.pop()
            if isinstance(node, _Disallowed):
                return f"not usable JSON at {json_path(path)}: {node.reason}"
            if isinstance(node, dict):
                stack.extend((value, (*path, key)) for key, value in reversed(node.items()))
            elif isinstance(node, list):
                stack.extend((node[i], (*path, i)) for i in reversed(range(len(node))))
        return None


class _Reading:
    """One text's parse: the decoder's hooks, counting what they refuse."""

    def __init__(self) -> None:
        self.refused = 0
        self.decoder = json.JSONDecoder(
            parse_int=self.integer, parse_constant=self.constant, object_pairs_hook=self.object
        )

    def refuse(self, reason: str) -> _Disallowed:
        self.refused += 1
        return _Disallowed(reason)

    def integer(self, text: str) -> int | _Disallowed:
        digits = len(text) - text.startswith("-")
        if digits > MAX_INTEGER_DIGITS:
            return self.refuse(
                f"an integer of {digits} digits; this version reads at most "
                f"{MAX_INTEGER_DIGITS} (Python's limit)"
            )
        return int(text)

    def constant(self, name: str) -> _Disallowed:
        return self.refuse(f"{name} is not JSON (JSON has no NaN or Infinity)")

    def object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Disallowed:
        result = dict(pairs)
        if len(result) == len(pairs):
            return result
        repeated = next(key for key, count in Counter(k for k, _ in pairs).items() if count > 1)
        return self.refuse(
            f"the key {repeated!r} appears more than once in one object, and JSON readers "
            "disagree on which value counts"
        )


def parse_json(
    data: bytes | str, *, offset: int = 0, one_line: bool = True, limit: int | None = None
) -> ParsedJson:
    """JSON text (bytes, or text already decoded) read with the refused values in place;
    raises :class:`UnusableJson` when it is not JSON text at all.

    ``offset``: where ``data`` starts in its input, for the byte a UTF-8 error names (give
    what :func:`input_start` gives); ``one_line``: ``data`` is one line of JSON Lines (errors
    name a column) rather than a document over lines (a line and a column); ``limit``: the
    most bytes read as one document.

    >>> parse_json(b'{"a": NaN}').problem()
    'not usable JSON at $.a: NaN is not JSON (JSON has no NaN or Infinity)'
    >>> parse_json(b'{"a": 1}').value
    {'a': 1}
    """
    if limit is not None and len(data) > limit:
        raise UnusableJson(too_big(limit))
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise UnusableJson(
                f"not UTF-8 text ({error.reason} at byte {offset + error.start})"
            ) from None
    else:
        text = data
    if text.startswith("\ufeff"):  # as json.loads says; JSONDecoder.decode does not look
        raise UnusableJson("not valid JSON: a byte order mark (U+FEFF) only starts an input")
    reading = _Reading()
    try:
        with stack_room(MAX_DEPTH):  # so that RecursionError means deeper than the limit
            value = reading.decoder.decode(text)
    except json.JSONDecodeError as error:
        raise UnusableJson(f"not valid JSON: {json_error_text(error, one_line=one_line)}") from None
    except RecursionError:
        raise UnusableJson(f"not usable JSON: {TOO_DEEP}") from None
    except ValueError as error:  # an integer past a limit set lower than ours
        raise UnusableJson(f"not usable JSON: {error}") from None
    return ParsedJson(value, reading.refused, may_hold_surrogate(text))


def read_json(
    data: bytes | str, *, offset: int = 0, one_line: bool = True, limit: int | None = None
) -> Any:
    """The document of a JSON text, strictly read (see :func:`parse_json`); raises
    :class:`UnusableJson` saying why not.

    >>> read_json(b'{"run": {}, "run": {"runId": "r"}}')
    Traceback (most recent call last):
    ...
    openlineage_subset._json.UnusableJson: not usable JSON at $: the key 'run' appears more \
than once in one object, and JSON readers disagree on which value counts
    """
    parsed = parse_json(data, offset=offset, one_line=one_line, limit=limit)
    problem = parsed.problem()
    if problem is not None:
        raise UnusableJson(problem)
    return parsed.value
