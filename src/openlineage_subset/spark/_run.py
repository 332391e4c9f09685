"""``ol-subset run``: an unmodified PySpark script, with capture on for every session it makes."""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence
from typing import Any

from openlineage_subset.spark._capture import CaptureHandle, enable


def run_script(
    script: str, arguments: Sequence[str], *, output: str | None, namespace: str | None
) -> int:
    """Run ``script`` as ``__main__`` with ``arguments``; capture every SparkSession it creates.

    ``SparkSession.builder.getOrCreate`` is wrapped for the script's duration: each new
    session gets :func:`enable`; every handle is closed (events flushed) when the script ends,
    however it ends. Returns the script's exit status.
    """
    from pyspark.sql import SparkSession  # noqa: PLC0415  (the spark extra)

    handles: dict[int, CaptureHandle] = {}
    builder_class: Any = SparkSession.Builder
    original = builder_class.getOrCreate

    def get_or_create(builder: Any) -> Any:
        session = original(builder)
        key = id(session._jsparkSession)
        if key not in handles:
            handles[key] = enable(session, output=output, namespace=namespace)
        return session

    builder_class.getOrCreate = get_or_create
    saved_argv = sys.argv
    sys.argv = [script, *arguments]
    status = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_request:
        status = _exit_status(exit_request.code)
    finally:
        sys.argv = saved_argv
        builder_class.getOrCreate = original
        for handle in handles.values():
            handle.close()
    return status


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
