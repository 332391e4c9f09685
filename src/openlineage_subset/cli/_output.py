"""What every command's output needs: exit statuses, text safe for a terminal, a closed pipe.

A command's text output may carry names from events (datasets, jobs, files): what a terminal or
a log acts on, or what reorders text on screen, is written as escapes by :func:`printable` (from
the SDK's ``_printable``, which the lineage answers and report use too), so that output never
moves the cursor, retitles a window, forges a line or reads backwards.
"""

from __future__ import annotations

import argparse
import os
import sys

from openlineage_subset import MAX_LINE_BYTES_VARIABLE, parse_max_line_bytes, printable

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_OUTPUT_CLOSED",
    "EXIT_UNUSABLE",
    "add_max_line_bytes",
    "cannot_read",
    "discard_standard_output",
    "printable",
]

EXIT_OK, EXIT_INVALID, EXIT_UNUSABLE = 0, 1, 2
EXIT_INTERRUPTED = 130
"""The shell's status for a program stopped by Ctrl-C (128 + SIGINT)."""
EXIT_OUTPUT_CLOSED = 141
"""What a shell reports for a tool stopped by a closed pipe (128 + SIGPIPE)."""


def discard_standard_output() -> None:
    """Point standard output at /dev/null, so that Python's flush at exit fails no more.

    For when the reader of the output went away (``| head``): otherwise Python prints an
    "Exception ignored" message for the output still buffered.
    """
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (captured, replaced): nothing buffered in a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, descriptor)
    os.close(devnull)


def cannot_read(error: OSError) -> str:
    return f"cannot read: {error.strerror or error}"


def add_max_line_bytes(parser: argparse.ArgumentParser) -> None:
    """``--max-line-bytes``: the longest input line a reading command takes."""
    parser.add_argument(
        "--max-line-bytes",
        metavar="N",
        type=_line_limit,
        help="the longest input line read, in bytes (64M: 64 MiB); a longer one is reported "
        f"and skipped (default: ${MAX_LINE_BYTES_VARIABLE}, else 16M)",
    )


def _line_limit(text: str) -> int:
    try:
        return parse_max_line_bytes(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
