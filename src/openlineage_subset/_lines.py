"""What every reader of JSON input shares: one limit on a line, lines read in bounded pieces,
one rule for lone surrogates.

``validate``, ``show``, ``lineage ingest`` and the outbox read JSON Lines from files no one
vouches for. Each reads a line at a time through :func:`read_lines`, which never holds more
than the limit of one line: a longer line is reported as such (with its size, the limit and
how to raise it) and skipped to its end, and the reader goes on with the next one. An input
that has no line end even that far past the limit (``/dev/zero``) is given up with an error,
so that no input takes unbounded time or memory. The limit is ``--max-line-bytes``, else
``$OL_SUBSET_MAX_LINE_BYTES``, else 16 MiB: an event of this package is at most
``max_event_bytes`` (1,000,000 by default).

JSON allows ``"\\ud800"``, half of a UTF-16 pair with no other half: no UTF-8 text, no SQLite
database, can hold it. Every reader refuses such a document with :func:`lone_surrogate`'s
message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from openlineage_subset._issues import json_path

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest line a reader takes by default: 16 MiB, sixteen of the largest event this
package writes by default."""
LARGEST_LINE_LIMIT = 4 << 30
"""The largest line limit taken (4G): more is no limit in practice, and a number past what a
read can be asked for would be a failure of ours, not a refusal."""
MAX_LINE_BYTES_VARIABLE = "OL_SUBSET_MAX_LINE_BYTES"
RAISE_IT = f"raise the limit with --max-line-bytes or ${MAX_LINE_BYTES_VARIABLE}"
_SKIPPED_LINES = 64
"""A line over the limit is skipped to its end for at most this many times the limit; then
the input is given up (no line end ever, as ``/dev/zero``)."""
_PIECE = 1 << 20
LONE_SURROGATE = (
    "a lone surrogate (a \\ud800-\\udfff escape without its pair): no UTF-8 text can hold it"
)
# Where a JSON text may spell a surrogate: a \\u escape of D800-DFFF (a pair is two of them).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def max_line_bytes(given: int | None = None) -> int:
    """The line limit: ``given`` (a command's option), else the environment's, else the default.

    Raises ValueError, saying what to do, when the environment's is not a positive integer.
    """
    if given is not None:
        return given
    text = os.environ.get(MAX_LINE_BYTES_VARIABLE, "").strip()
    if not text:
        return DEFAULT_MAX_LINE_BYTES
    try:
        return parse_max_line_bytes(text)
    except ValueError as error:
        raise ValueError(f"${MAX_LINE_BYTES_VARIABLE}: {error}") from None


def parse_max_line_bytes(text: str) -> int:
    """A line limit as given on a command line or in the environment: a number of bytes, with
    an optional ``K``, ``M`` or ``G`` (powers of 1024).

    >>> parse_max_line_bytes("64M"), parse_max_line_bytes("1000")
    (67108864, 1000)
    """
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    number, unit = (text[:-1], units[text[-1].upper()]) if text[-1:].upper() in units else (text, 1)
    try:
        value = int(number) * unit
    except ValueError:
        value = 0
    if not 1 <= value <= LARGEST_LINE_LIMIT:
        raise ValueError(f"a number of bytes, 1 or more and at most 4G (such as 64M), got {text!r}")
    return value


@dataclass(frozen=True)
class LongLine:
    """A line longer than the limit, in place of its bytes: skipped, or where reading ended."""

    size: int
    """Bytes read of it (without its newline): all of it, or as far as reading went."""
    limit: int
    ended: bool
    """False when no line end came: the rest of the input is not read."""

    def __str__(self) -> str:
        if self.ended:
            return (
                f"a line of {self.size} bytes, over the limit of {self.limit} bytes: skipped; "
                f"{RAISE_IT}"
            )
        return (
            f"a line of more than {self.size} bytes with no end, over the limit of "
            f"{self.limit} bytes: the rest of the input is not read; {RAISE_IT}"
        )


def read_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, int, bytes | LongLine]]:
    """(number from 1, byte offset, bytes with the newline) of each line of a byte stream; a
    :class:`LongLine` in place of the bytes of a line longer than ``limit`` (newline aside).

    Memory is bounded by the limit whatever the input; after a line with no end, it stops.

    >>> import io
    >>> for line in read_lines(io.BytesIO(b'{"a": 1}\\n' + b"x" * 20 + b"\\n[]"), limit=10):
    ...     print(line)
    (1, 0, b'{"a": 1}\\n')
    (2, 9, LongLine(size=20, limit=10, ended=True))
    (3, 30, b'[]')
    """
    number = offset = 0
    readline, most = stream.readline, limit + 1
    while line := readline(most):
        number += 1
        if line[-1:] == b"\n" or len(line) <= limit:
            yield number, offset, line
            offset += len(line)
            continue
        size, ended = _skip_line(stream, len(line), limit)
        yield number, offset, LongLine(size, limit, ended)
        if not ended:
            return
        offset += size + 1


def _skip_line(stream: BinaryIO, size: int, limit: int) -> tuple[int, bool]:
    """Read to the end of a line already ``size`` bytes long: its size without the newline,
    and whether it ended (a newline, or the end of the input) within the bounds."""
    most = _SKIPPED_LINES * max(limit, _PIECE)
    while size < most:
        piece = stream.readline(_PIECE)
        if not piece:
            return size, True
        if piece.endswith(b"\n"):
            return size + len(piece) - 1, True
        size += len(piece)
    return size, False


def read_at_most(stream: BinaryIO, limit: int) -> bytes | None:
    """The rest of a stream when it holds at most ``limit`` bytes, else None (having read
    ``limit + 1`` bytes of it)."""
    data = stream.read(limit + 1)
    return None if len(data) > limit else data


def may_hold_surrogate(text: str | bytes) -> bool:
    """Whether a JSON text spells a surrogate escape (a pair, or a lone one): only then can
    its document hold a lone surrogate, which :func:`lone_surrogate` finds."""
    if isinstance(text, bytes):
        return b"\\u" in text and _SURROGATE_ESCAPE.search(text.decode("latin-1")) is not None
    return "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None


def lone_surrogate(document: Any) -> str | None:
    """Why a parsed JSON document cannot be read, when a key or string of it holds a lone
    surrogate: ``not usable JSON at <path>: ...``; else None.

    >>> import json
    >>> print(lone_surrogate(json.loads('{"a": ["ok", "\\\\ud800"]}'))[:43])
    not usable JSON at $.a[1]: a lone surrogate
    >>> lone_surrogate(json.loads('"\\\\ud83d\\\\ude00"')) is None  # a pair: one character
    True
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return f"not usable JSON at {json_path(path)}: {LONE_SURROGATE}"
        elif isinstance(node, dict):
            if any(_SURROGATE.search(key) for key in node):  # the key itself is unprintable
                return f"not usable JSON at {json_path(path)}: a key holds {LONE_SURROGATE}"
            stack.extend((value, (*path, key)) for key, value in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((node[i], (*path, i)) for i in reversed(range(len(node))))
    return None
