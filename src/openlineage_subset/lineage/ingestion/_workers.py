"""Worker processes that check chunks of ingest's input (``ingest(..., jobs=N)``: N - 1 of them).

A worker is ``python -c`` reading chunks from its standard input and writing their outcomes to
its standard output, both pickled; it imports this package from the caller's ``sys.path`` and
nothing else of the caller. Unlike :mod:`multiprocessing`'s spawn, it never runs the caller's
main module again, so that a script calling ``ingest()`` needs no ``if __name__ ==
"__main__"`` guard, and a script's top-level code never runs twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import pickle
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import IO, Any, BinaryIO

from openlineage_subset import OpenLineageSubsetError
from openlineage_subset.lineage.ingestion._checker import check_chunk
from openlineage_subset.lineage.ingestion._shapes import Checked, Condition, Item

_CODE = (
    "import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); "
    "from openlineage_subset.lineage.ingestion._workers import serve; serve()"
)


PIPE_BYTES = 1 << 20
"""What each pipe to and from a worker is asked to hold (see :func:`_widened`)."""


class WorkerError(RuntimeError, OpenLineageSubsetError):
    """A worker process failed or stopped before it had checked what it was given."""


class Worker:
    """One worker process; chunks sent to it come back checked in the order they were sent."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.waiting = 0
        """Chunks sent whose outcomes have not been taken yet."""
        # Sending and receiving run in threads of their own, so that neither end ever waits
        # for the other with a full pipe, and this process goes on storing meanwhile.
        self._outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._results: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._outbox.put(sys.path)
        assert self.process.stdin is not None and self.process.stdout is not None
        _widened(self.process.stdin, self.process.stdout)
        self._threads = [
            threading.Thread(target=self._send_all, args=(self.process.stdin,), daemon=True),
            threading.Thread(target=self._receive_all, args=(self.process.stdout,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def configure(self, group: bool) -> None:
        """Say check_chunk's ``group`` (the store's partition_directories), before any chunk."""
        self._outbox.put(group)

    def send(self, items: list[Item]) -> None:
        self.waiting += 1
        self._outbox.put(items)

    @property
    def unchecked(self) -> int:
        """Chunks sent that it has not finished checking: it has work while this is not 0."""
        return self.waiting - self._results.qsize()

    def ready(self) -> bool:
        """Whether the oldest chunk sent is checked."""
        return not self._results.empty()

    def receive(self) -> tuple[list[Checked], list[Condition]]:
        """The outcomes of the oldest chunk sent (see :func:`~._checker.check_chunk`)."""
        done, value = self._results.get()
        self.waiting -= 1
        if not done:
            raise WorkerError(value)
        checks: tuple[list[Checked], list[Condition]] = value
        return checks

    def close(self, *, wait: bool) -> None:
        """Let the process end when it has nothing left to check (``wait``), or end it now."""
        self._outbox.put(None)
        if not wait:
            with contextlib.suppress(OSError):
                self.process.kill()
        self.process.wait()
        for thread in self._threads:
            thread.join()

    def _send_all(self, stream: BinaryIO) -> None:
        with contextlib.suppress(OSError), stream:  # the process ended: receiving says how
            while (items := self._outbox.get()) is not None:
                pickle.dump(items, stream, protocol=pickle.HIGHEST_PROTOCOL)
                stream.flush()

    def _receive_all(self, stream: BinaryIO) -> None:
        with stream:
            while True:
                try:
                    done, value = pickle.load(stream)
                except EOFError:
                    code = self.process.wait()
                    self._results.put((False, f"a worker process ended (exit status {code})"))
                    return
                except Exception as error:
                    self._results.put((False, f"a worker process's answer is unreadable: {error}"))
                    return
                self._results.put((done, value))


def _widened(*pipes: IO[bytes]) -> None:
    """Each pipe's buffer made to hold a whole chunk's lines or outcomes (Linux; elsewhere, or
    when the system refuses, each is left as it was made).

    A 64 KB pipe took a chunk (1 MB of lines, a third of that of outcomes) in pieces, and each
    piece waited for the thread at this end to get Python's lock back from the one storing:
    the worker spent a quarter of its time waiting for its next lines or for room for its
    outcomes, and this process checked a third of the chunks itself (7,000 events/s with one
    worker; 8,300 with the chunk in the pipe at once).
    """
    widen = getattr(fcntl, "F_SETPIPE_SZ", None)
    if widen is None:  # pragma: no cover - Linux only
        return
    size = min(PIPE_BYTES, _largest_pipe())
    for pipe in pipes:
        with contextlib.suppress(OSError):  # refused: kept as made
            fcntl.fcntl(pipe.fileno(), widen, size)


def _largest_pipe() -> int:
    """The largest pipe an unprivileged process may ask for (1 MB unless set otherwise)."""
    try:
        return int(Path("/proc/sys/fs/pipe-max-size").read_text())
    except (OSError, ValueError):
        return PIPE_BYTES


class Workers:
    """``count`` worker processes, ended when the ``with`` block ends."""

    def __init__(self, count: int, group: bool = True) -> None:
        self.all: list[Worker] = []
        try:
            self.all.extend(Worker() for _ in range(count))
            for worker in self.all:
                worker.configure(group)
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __enter__(self) -> Workers:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for worker in self.all:
            worker.close(wait=kind is None)


def serve() -> None:
    """A worker process's loop: check each chunk read from standard input, until its end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed must not mix with the outcomes
    try:
        group = bool(pickle.load(source))  # Workers configure each worker first
    except EOFError:
        return
    while True:
        try:
            items = pickle.load(source)
        except EOFError:
            return
        try:
            answer: tuple[bool, Any] = (True, check_chunk(items, group=group))
        except Exception as error:
            answer = (False, f"checking events failed in a worker process: {error!r}")
        pickle.dump(answer, sink, protocol=pickle.HIGHEST_PROTOCOL)
        sink.flush()
