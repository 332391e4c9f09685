"""``ol-subset run``: an unmodified PySpark script, with capture on for every session it makes."""

from __future__ import annotations

import argparse
import runpy
import sys
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from openlineage_subset.cli._output import EXIT_INTERRUPTED

if TYPE_CHECKING:  # capture is imported when a script runs
    from openlineage_subset.spark import CaptureHandle


def add_capture_arguments(parser: argparse.ArgumentParser) -> None:
    """``--output`` and ``--namespace``: where the events of a capture started by a command go,
    and the namespace of its jobs (``run``, ``connect-server``)."""
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="JSON Lines file for the events (default: $OL_SUBSET_OUTPUT, else "
        "openlineage-events.jsonl in the current folder), used when openlineage-python has no "
        "transport configured",
    )
    parser.add_argument(
        "--namespace",
        metavar="NS",
        help="namespace of the jobs (default: spark.openlineage.namespace, else "
        "$OPENLINEAGE_NAMESPACE, else 'default')",
    )


CONNECT_NOT_CAPTURED = (
    "the script made a Spark Connect session (.remote()): its actions run in the Connect "
    "server, whose plans cannot be read from here, so they are NOT captured; the script runs "
    "on. Capture needs a classic session: build it without .remote() (and without SPARK_REMOTE "
    "or SPARK_CONNECT_MODE_ENABLED set)"
)


def run_script(
    script: str, arguments: Sequence[str], *, output: str | None, namespace: str | None
) -> int:
    """Run ``script`` as ``__main__`` with ``arguments``; capture every SparkSession it creates.

    ``SparkSession.builder.getOrCreate`` is wrapped for the script's duration: each new
    session gets :func:`enable`; every handle is closed (events flushed) when the script ends,
    however it ends. A Spark Connect session cannot be captured: one line on standard error
    says so, and the script runs on uncaptured. Returns the script's exit status, as
    ``python script.py`` would end:

    - the script returns, or calls ``sys.exit(0)``: 0, the application runs end COMPLETE;
    - it calls ``sys.exit(n)`` with n not 0 (or a message): n (or 1), and the application
      runs end FAIL, since an orchestrator takes that status for a failed task;
    - an exception escapes it: its traceback is printed (through ``sys.excepthook``, as Python
      prints it, starting at the script's own frame), the application runs end FAIL with the
      error message and that traceback, and the status is 1 (130 for ``KeyboardInterrupt``).

    Example::

        status = run_script("job.py", ["2024-10-15"], output="events.jsonl", namespace=None)
    """
    from openlineage_subset.spark import (  # noqa: PLC0415
        NewSessionCapture,
        close_at_exit,
    )

    saved_argv = sys.argv
    sys.argv = [script, *arguments]
    status = 0
    failure: BaseException | None = None
    uncaught: BaseException | None = None
    sessions = NewSessionCapture(output=output, namespace=namespace, on_connect=_say_connect)
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_request:
        status = _exit_status(exit_request.code)
        if status != 0:
            failure = exit_request.with_traceback(_from_script(exit_request.__traceback__, script))
    except BaseException as error:  # the script's own failure, KeyboardInterrupt included
        failure = uncaught = error.with_traceback(_from_script(error.__traceback__, script))
        status = EXIT_INTERRUPTED if isinstance(error, KeyboardInterrupt) else 1
    finally:
        sys.argv = saved_argv
        for handle in sessions.stop():
            close_at_exit(handle, error=failure)  # one close budget for all of them
            print(f"ol-subset run: {summary(handle)}", file=sys.stderr)
    if uncaught is not None:  # last, as Python prints it: a reader of the output's end finds it
        sys.excepthook(type(uncaught), uncaught, uncaught.__traceback__)
    return status


def _say_connect() -> None:
    print(f"ol-subset run: {CONNECT_NOT_CAPTURED}", file=sys.stderr)


def summary(handle: CaptureHandle) -> str:
    """One line on what a closed capture did, from its counts (their text is made in
    ``delivery``: ``Counts.summary``): the actions, where the events went, what is left in the
    outbox or quarantine, the datasets degraded and the errors.

    Example: ``2 action(s) captured; 6 event(s) sent to the JSON Lines file /x/events.jsonl``.
    """
    return handle.counts.summary(handle.emitter.places)


def _from_script(trace: TracebackType | None, script: str) -> TracebackType | None:
    """``trace`` from the script's first frame on: what ``python script.py`` would print, without
    the frames of ``ol-subset`` and ``runpy``. None when the script has no frame (a syntax
    error), as Python then prints the error alone."""
    while trace is not None and trace.tb_frame.f_code.co_filename != script:
        trace = trace.tb_next
    return trace


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
