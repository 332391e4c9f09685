"""Spark daemons on this machine, from the installed PySpark alone: a standalone cluster, and
a Spark Connect server.

A master and a few workers are started with PySpark's own ``bin/spark-class`` (no Docker, no
download), every one of them bound to 127.0.0.1 with small memory, each in a process group of
its own whose leader is the process started here. ``stop()`` ends exactly those groups (the
worker JVMs and the executor JVMs they launched), also when a test failed; ``kill_worker()``
kills one worker's group with SIGKILL, as when a machine is lost.

    with StandaloneCluster(tmp_path, workers=2) as cluster:
        spark = SparkSession.builder.master(cluster.url).getOrCreate()

:class:`ConnectServer` starts a Spark Connect server the same way (``spark-submit`` of
PySpark's bundled ``SparkConnectServer``, PySpark 4), listening on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

HOST = "127.0.0.1"
WORKER_HOSTS = (HOST, "localhost")
"""The names workers go by, in turn: two names of the one loopback address. Spark never runs a
speculative copy of a task on the host of the attempt it copies, so on one machine speculation
needs workers that are different hosts to Spark. Java is told to use IPv4 only, so that
``localhost`` is 127.0.0.1 (never ``::1``)."""
IPV4_ONLY = "-Djava.net.preferIPv4Stack=true"
_MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
_MASTER_READY = "I have been elected leader"
_WORKER_READY = "Successfully registered with master"
_STARTUP_SECONDS = 120.0


class ClusterError(RuntimeError):
    """A daemon of the test cluster did not start; the message quotes its log."""


@dataclass
class _Daemon:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def text(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.process.poll() is None


@dataclass
class StandaloneCluster:
    """A master and ``workers`` workers of ``cores`` cores and ``memory`` each, on 127.0.0.1."""

    work: Path
    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    url: str = ""
    _master: _Daemon | None = None
    _workers: list[_Daemon | None] = field(default_factory=list)
    _spark_home: Path | None = None

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # -- starting --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the master, then each worker; raises :class:`ClusterError` (after stopping
        what did start) when one is not ready within two minutes."""
        from pyspark.find_spark_home import _find_spark_home

        self._spark_home = Path(_find_spark_home())
        self.work.mkdir(parents=True, exist_ok=True)
        try:
            self._master = self._launch(
                "master",
                ["org.apache.spark.deploy.master.Master", "--host", HOST, "--port", "0"],
                {"SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false"},
            )
            found = _wait_for(self._master, _MASTER_URL)
            self.url = found.group(1)
            _wait_for(self._master, re.compile(re.escape(_MASTER_READY)))
            self._workers = [None] * self.workers
            for index in range(self.workers):
                self.start_worker(index)
        except BaseException:
            self.stop()
            raise

    def start_worker(self, index: int) -> None:
        """Start worker ``index`` (again, after :meth:`kill_worker`) and wait until the master
        has registered it."""
        running = self._workers[index]
        if running is not None and running.alive():
            return
        folder = self.work / f"worker-{index}"
        folder.mkdir(parents=True, exist_ok=True)
        daemon = self._launch(
            f"worker-{index}",
            [
                "org.apache.spark.deploy.worker.Worker",
                self.url,
                "--host",
                WORKER_HOSTS[index % len(WORKER_HOSTS)],
                "--port",
                "0",
                "--cores",
                str(self.cores),
                "--memory",
                self.memory,
                "--work-dir",
                str(folder / "work"),
            ],
            # An executor's scratch space (shuffle files, spills) stays in the test's folder.
            {"SPARK_LOCAL_DIRS": str(folder / "local")},
        )
        self._workers[index] = daemon
        _wait_for(daemon, re.compile(re.escape(_WORKER_READY)))

    def _launch(self, name: str, arguments: list[str], extra_env: dict[str, str]) -> _Daemon:
        assert self._spark_home is not None
        log = self.work / f"{name}.log"
        env = {
            **os.environ,
            "SPARK_HOME": str(self._spark_home),
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOCAL_HOSTNAME": HOST,
            "SPARK_PUBLIC_DNS": HOST,
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_DAEMON_JAVA_OPTS": IPV4_ONLY,
            "SPARK_LOG_DIR": str(self.work),
            "SPARK_NO_DAEMONIZE": "1",
            **extra_env,
        }
        # The web UIs bind to 127.0.0.1 too (SPARK_LOCAL_IP), on a free port.
        command = [
            str(self._spark_home / "bin" / "spark-class"),
            *arguments,
            "--webui-port",
            "0",
        ]
        return _start(name, command, env, log)

    # -- faults and stopping -----------------------------------------------------------------

    @property
    def pids(self) -> list[int]:
        """The process ids started here (each the leader of its process group), live or not."""
        daemons = [self._master, *self._workers]
        return [daemon.process.pid for daemon in daemons if daemon is not None]

    def kill_worker(self, index: int) -> None:
        """SIGKILL worker ``index`` and the executors it launched (its process group)."""
        daemon = self._workers[index]
        if daemon is not None:
            _end_group(daemon, signal.SIGKILL, wait=30.0)

    def executor_pids(self, index: int, app_id: str) -> list[int]:
        """The executor JVMs of application ``app_id`` that worker ``index`` launched (they are
        in its process group)."""
        daemon = self._workers[index]
        if daemon is None:
            return []
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.getpgid(int(entry.name)) != daemon.process.pid:
                    continue
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except (OSError, ProcessLookupError):
                continue  # gone meanwhile
            if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in command and (
                app_id.encode() in command
            ):
                found.append(int(entry.name))
        return found

    def stop(self) -> None:
        """End every daemon started here: SIGTERM to its group, SIGKILL after ten seconds."""
        for daemon in [*reversed(self._workers), self._master]:
            if daemon is not None:
                _stop(daemon)
        self._workers = [None] * len(self._workers)
        self._master = None

    def logs(self) -> str:
        """The last lines of every daemon's log, for a failing test's report."""
        parts = []
        for daemon in [self._master, *self._workers]:
            if daemon is not None:
                tail = "\n".join(daemon.text().splitlines()[-20:])
                parts.append(f"--- {daemon.name} ---\n{tail}")
        return "\n".join(parts)


def _start(name: str, command: list[str], env: dict[str, str], log: Path) -> _Daemon:
    """Start ``command`` with its output in ``log``, in a process group of its own (led by the
    process started here: :func:`_stop` ends it and every process it started)."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=log.parent,
            start_new_session=True,
        )
    return _Daemon(name, process, log)


def _stop(daemon: _Daemon) -> None:
    """SIGTERM to the daemon's process group, SIGKILL to what is left after ten seconds."""
    _end_group(daemon, signal.SIGTERM, wait=10.0)
    _end_group(daemon, signal.SIGKILL, wait=10.0)


def _wait_for(daemon: _Daemon, pattern: re.Pattern[str]) -> re.Match[str]:
    deadline = time.monotonic() + _STARTUP_SECONDS
    while time.monotonic() < deadline:
        found = pattern.search(daemon.text())
        if found:
            return found
        if not daemon.alive():
            break
        time.sleep(0.2)
    state = "exited" if not daemon.alive() else "is not ready after two minutes"
    tail = "\n".join(daemon.text().splitlines()[-30:])
    raise ClusterError(f"the {daemon.name} of the tests {state}; its log ends:\n{tail}")


def _end_group(daemon: _Daemon, sent: signal.Signals, wait: float) -> None:
    """Send ``sent`` to the process group led by the daemon's process, and reap it.

    The group is the one ``start_new_session`` made for the process started here: its id is
    that process's id, so nothing else on the machine is signalled.
    """
    group = daemon.process.pid
    with contextlib.suppress(ProcessLookupError):  # the whole group is gone already
        os.killpg(group, sent)
    try:
        daemon.process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        return
    # The leader is gone; executors it launched may outlive it for a moment.
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        if sent == signal.SIGKILL:
            os.killpg(group, signal.SIGKILL)
        time.sleep(0.1)


_CONNECT_READY = re.compile(r"Spark Connect server started at: (\S+)")


@dataclass
class ConnectServer:
    """A Spark Connect server (``local[1]`` inside) listening on 127.0.0.1; ``url`` is its
    ``sc://`` address once started."""

    work: Path
    url: str = ""
    _daemon: _Daemon | None = None

    def __enter__(self) -> ConnectServer:
        from pyspark.find_spark_home import _find_spark_home

        spark_home = Path(_find_spark_home())
        self.work.mkdir(parents=True, exist_ok=True)
        with socket.socket() as probe:  # a free port on loopback, for the server to take
            probe.bind((HOST, 0))
            port = probe.getsockname()[1]
        command = [
            str(spark_home / "bin" / "spark-submit"),
            "--class",
            "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--master",
            "local[1]",
            "--conf",
            f"spark.connect.grpc.binding.address={HOST}",
            "--conf",
            f"spark.connect.grpc.binding.port={port}",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            f"spark.driver.host={HOST}",
            "spark-internal",
        ]
        env = {**os.environ, "SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": HOST}
        self._daemon = _start(
            "Spark Connect server", command, env, self.work / "connect-server.log"
        )
        try:
            _wait_for(self._daemon, _CONNECT_READY)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.url = f"sc://{HOST}:{port}"
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._daemon is not None:
            _stop(self._daemon)
            self._daemon = None
