"""Text from events put into HTML and SVG: escaped where it is put, escapes marked, names cut.

Every name, value and note comes from events that anyone may have written. :func:`text` is for
the content of an element that may hold markup: escaped, and each control or bidirectional
character written as its escape (``\\u202e``) in a ``<span class="escape">`` (``<tspan>`` in
SVG) so that it stands out. :func:`plain` (an SVG ``<title>``) and :func:`attribute` hold no
markup: there the escape is bare. :func:`shortened` cuts a long name in its middle, where names
of one pipeline are alike, and keeps its start and its distinguishing end.

The report's templates use these as filters (:mod:`._templates`); the service's pages, which
draw the same picture, call them too.
"""

from __future__ import annotations

import html
import unicodedata

from openlineage_subset import escapes, printable

ELLIPSIS = "\u2026"
_HEAD_SHARE = 0.4
"""Of the columns kept when a name is cut, the share at its start (the rest is its end)."""

Pieces = list[tuple[str, bool]]


def columns(value: str) -> int:
    """Columns ``value`` takes in a monospace font: a wide (East Asian) character takes two.

    >>> columns("sales"), columns("\u58f2\u4e0a")
    (5, 4)
    """
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in value)


def shortened(value: object, limit: int) -> Pieces:
    """``value`` as :func:`~openlineage_subset._printable.escapes` cuts it, at most ``limit``
    columns wide as shown: a longer one keeps its start and its end around an ellipsis, never
    cutting an escape in two.

    >>> "".join(piece for piece, _ in shortened("daily_sales_demo.write.tmp_output_sales", 24))
    'daily_sal\u2026p_output_sales'
    """
    pieces = escapes(str(value))
    if sum(columns(piece) for piece, _ in pieces) <= limit:
        return pieces
    room = max(limit - 1, 0)
    head_room = int(room * _HEAD_SHARE)
    head = _taken(pieces, head_room)
    tail = [
        (piece[::-1], escaped)
        for piece, escaped in reversed(
            _taken(
                [(piece[::-1], escaped) for piece, escaped in reversed(pieces)],
                room - sum(columns(piece) for piece, _ in head),
            )
        )
    ]
    return [*head, (ELLIPSIS, False), *tail]


def _taken(pieces: Pieces, room: int) -> Pieces:
    """The first pieces (the start of the first one that does not fit) within ``room``
    columns; an escape that does not fit whole is left out, and what follows it."""
    kept: Pieces = []
    for piece, escaped in pieces:
        if escaped:
            if len(piece) > room:
                break
            kept.append((piece, True))
            room -= len(piece)
            continue
        taken = ""
        for char in piece:
            width = columns(char)
            if width > room:
                break
            taken += char
            room -= width
        if taken:
            kept.append((taken, False))
        if taken != piece:
            break
    return kept


def marked(pieces: Pieces, *, tag: str = "span") -> str:
    """Pieces as the content of an element: text escaped, each escape in ``<tag
    class="escape">``."""
    return "".join(
        f'<{tag} class="escape">{html.escape(piece, quote=False)}</{tag}>'
        if escaped
        else html.escape(piece, quote=False)
        for piece, escaped in pieces
    )


def text(value: object, *, tag: str = "span", limit: int | None = None) -> str:
    """``value`` as the text of an element, escapes marked; cut in its middle to ``limit``
    columns when given (see :func:`shortened`).

    >>> text("<b>\u202e")
    '&lt;b&gt;<span class="escape">\\\\u202e</span>'
    """
    pieces = escapes(str(value)) if limit is None else shortened(value, limit)
    return marked(pieces, tag=tag)


def plain(value: object) -> str:
    """``value`` as the text of an element that holds no markup (``<title>``): escaped, each
    control or bidirectional character as its bare escape."""
    return html.escape(printable(str(value)), quote=False)


def attribute(value: object) -> str:
    """``value`` as an attribute's value (in double quotes), escapes bare."""
    return html.escape(printable(str(value)), quote=True)


_ACTION_NOISE = ("execute_", "_command", "_hadoop_fs_relation", "_data_source")
"""Words of a Spark job name's action (``execute_insert_into_hadoop_fs_relation_command``)
that every such action has: left out of a box, whose room goes to what tells runs apart."""
_TARGET_KEPT = 8
"""Columns of a job name's target (its last part) kept at least, from its end, at a word."""
_PREFIX_KEPT = 4


def job_label(name: str, limit: int) -> Pieces:
    """A job name (``app.action.target``, as Spark's integration names jobs) in at most
    ``limit`` columns: what tells its runs apart, the action and the end of its target, kept;
    the start of the name (the application, a namespace-ish prefix) cut first, then the
    target's start. A name without that shape, or with an escape, is cut in its middle
    (:func:`shortened`).

    >>> name = "nc_events_pipeline.execute_insert_into_hadoop_fs_relation_command.lake_daily_agg"
    >>> "".join(piece for piece, _ in job_label(name, 32))
    'nc_events\u2026insert_into.\u2026daily_agg'
    >>> name = "nc_events_pipeline.collect_limit.lake_daily_agg"
    >>> "".join(piece for piece, _ in job_label(name, 32))
    'nc_even\u2026collect_limit.\u2026daily_agg'
    """
    pieces = escapes(name)
    segments = name.split(".")
    if columns(name) <= limit or len(segments) < 3 or any(escaped for _, escaped in pieces):
        return shortened(name, limit)
    action, target = segments[-2], segments[-1]
    for noise in _ACTION_NOISE:
        action = action.replace(noise, "_").strip("_") or action
    middle = action if columns(action) <= limit // 2 else _flat(shortened(action, limit // 2))
    middle += "."
    prefix = ".".join(segments[:-2]) + "."
    wanted = _word_end(target, _TARGET_KEPT)
    cut = "" if wanted == target else ELLIPSIS
    head = min(columns(prefix), limit - 1 - columns(middle + target))  # the whole target
    if head < min(columns(prefix), max(_PREFIX_KEPT, limit // 4)):  # else its end, a word's
        head = min(columns(prefix), max(_PREFIX_KEPT, limit - 1 - columns(middle + cut + wanted)))
    room = limit - head - 1 - columns(middle)
    if columns(target) > room:
        target = ELLIPSIS + _at_word(target[len(target) - max(room - 1, 0) :], len(wanted))
    if columns(target) > room:
        return shortened(name, limit)
    start = "".join(piece for piece, _ in _taken([(prefix, False)], head))
    whole = start == prefix and action == segments[-2]
    return [(start, False), ("" if whole else ELLIPSIS, False), (middle + target, False)]


def _flat(pieces: Pieces) -> str:
    return "".join(piece for piece, _ in pieces)


def _at_word(end: str, least: int) -> str:
    """``end`` (the end of a name) from its first word's start when that leaves ``least``
    characters or more: a cut between words reads better than one inside a word."""
    start = end.find("_") + 1
    return end[start:] if start > 0 and len(end) - start >= least else end


def _word_end(value: str, least: int) -> str:
    """The end of ``value`` from a word's start (after a ``_``): the shortest of at least
    ``least`` columns; the whole value when none is."""
    starts = [at + 1 for at, char in enumerate(value) if char == "_"]
    for start in reversed(starts):
        if columns(value[start:]) >= least:
            return value[start:]
    return value
