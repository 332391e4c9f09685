"""``printable()``: text from events made safe to show, every character that acts as escapes.

Names, values and messages from events (datasets, jobs, namespaces, partitions, run ids) reach
terminals, logs and pages. What a terminal or a log acts on (escape codes that retitle a window or
clear the screen, a bell, a carriage return that overwrites a line, line breaks that forge one)
and what reorders text on screen (U+202E and the other bidirectional overrides, embeddings,
isolates and marks) is written as an escape instead, the way Python's ``repr`` writes it, so
that it is seen, never obeyed. Every text output of the package goes through this one function:
the command line (``cli/``), the lineage answers as text, the lineage report and the service's
pages. JSON shown or sent (the service's answers, the JSON on its pages) follows the same rule
in JSON's own spelling, :func:`printable_json`: ``\\u202e`` is the same JSON value as the
character itself, so the document means what it meant, and shows safely wherever it lands.
"""

from __future__ import annotations


def _escape(char: str) -> str:
    """One character as ``repr`` writes it, without the quotes: ``\\x1b``, ``\\u202e``."""
    return repr(char)[1:-1]


def printable(text: str) -> str:
    """``text`` with each character that Python does not print as itself written as ``repr``
    writes it: control characters (C0, C1, DEL), line and paragraph separators, format
    characters (bidirectional controls, zero-width ones), lone surrogates, unassigned and
    private-use code points, and every space but the plain one. Nothing else changes (a
    backslash neither), and text already printable is returned as is.

    >>> print(printable("a\\nb: valid\\x1b[2J\\u2028"))
    a\\nb: valid\\x1b[2J\\u2028
    >>> print(printable("sales\\u202eevil\\r run FAKE COMPLETE"))
    sales\\u202eevil\\r run FAKE COMPLETE
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def escapes(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into runs of printable characters and single escapes, as
    :func:`printable` writes them: (piece, whether it is an escape). For outputs that show an
    escape differently from the text around it (the lineage report marks it).

    >>> escapes("ab\\u202ecd")
    [('ab', False), ('\\\\u202e', True), ('cd', False)]
    """
    if text.isprintable():  # the usual case, at C speed (a long condition on a page)
        return [(text, False)] if text else []
    pieces: list[tuple[str, bool]] = []
    start = 0
    for index, char in enumerate(text):
        if not char.isprintable():
            if index > start:
                pieces.append((text[start:index], False))
            pieces.append((_escape(char), True))
            start = index + 1
    if start < len(text):
        pieces.append((text[start:], False))
    return pieces


def printable_json(encoded: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with each character
    that does not print as itself written as JSON's ``\\uXXXX`` escape (a pair of them past
    U+FFFF), but the line breaks of indentation: the same JSON value, safe to show.

    >>> print(printable_json('{"a": "x\u202ey\x85"}'))
    {"a": "x\\u202ey\\u0085"}
    """
    if encoded.isprintable():
        return encoded
    return "".join(piece for piece, _ in json_escapes(encoded))


def json_escapes(encoded: str) -> list[tuple[str, bool]]:
    """JSON text cut as :func:`escapes` cuts text, the escapes spelled as JSON's; a line break
    (which JSON text holds only between values) is kept as it is.

    >>> json_escapes('"a\u2066"')
    [('"a', False), ('\\\\u2066', True), ('"', False)]
    """
    pieces: list[tuple[str, bool]] = []
    start = 0
    for line in encoded.split("\n"):
        if line.isprintable():
            pieces.append((line + "\n", False))
            continue
        for index, char in enumerate(line):
            if not char.isprintable():
                if index > start:
                    pieces.append((line[start:index], False))
                pieces.append((_json_escape(char), True))
                start = index + 1
        pieces.append((line[start:] + "\n", False))
        start = 0
    last, escaped = pieces[-1]  # the line break added after the last line
    pieces[-1] = (last[:-1], escaped)
    return [piece for piece in pieces if piece[0]]


def _json_escape(char: str) -> str:
    code = ord(char)
    if code > 0xFFFF:  # as UTF-16 writes it: JSON's escapes name 16-bit units
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"
