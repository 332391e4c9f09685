"""What the benchmarks (``benchmarks/``) reach in Spark's JVM to measure capture; capture itself
never uses this module.

The benchmarks compare capture with what Spark does alone and with other ways of listening:
they count round trips to the JVM, run jobs in the JVM alone, read the JVM's process id, and
register listeners that only count their calls (a session's ``QueryExecutionListener``, a
``SparkListenerInterface`` implemented in Python, ``java.beans.EventHandler``). Their JVM
access lives here, in the one layer that talks to the JVM, so that the rule that keeps it there
holds for them too (``tests/test_architecture.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

from openlineage_subset.spark._jvm._application import QUEUE, forwarder_proxy
from openlineage_subset.spark._jvm._bridge import JavaObject
from openlineage_subset.spark._jvm._jobs import JobListener

Undo = Callable[[], None]
"""What removes a listener a ``listen_*`` function registered."""
Hit = Callable[[], None]
"""What a counting listener calls once per call it gets."""

__all__ = [
    "QUEUE",
    "JobLookupListener",
    "RoundTripCounter",
    "count_in_jvm",
    "execute_plan",
    "forward_jobs_on",
    "jvm_process_id",
    "listen_on_bus",
    "listen_to_every_event",
    "listen_to_other_events",
    "listen_to_session",
    "query_listener_count",
    "start_callback_server",
]


def jvm_process_id(spark: Any) -> int:
    """The process id of ``spark``'s JVM (a local session's driver)."""
    return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def query_listener_count(spark: Any) -> int:
    """How many ``QueryExecutionListener``s ``spark``'s session has (Spark-internal)."""
    return len(spark._jsparkSession.listenerManager().listListeners())


def execute_plan(df: Any) -> None:
    """Plan ``df`` as Spark does before running it: its executed plan, made into RDDs (no job
    runs)."""
    df._jdf.queryExecution().executedPlan().execute()


def count_in_jvm(spark: Any, path: str) -> int:
    """The lines of the text file at ``path``, counted by a job run in the JVM alone (as a
    Scala job would: no Python worker)."""
    return int(spark.sparkContext._jsc.textFile(path).count())


def start_callback_server(spark: Any) -> None:
    """Start py4j's callback server, through which the JVM calls Python listeners."""
    from pyspark import java_gateway  # noqa: PLC0415  (pyspark is optional)

    # Typed loosely on purpose: pyspark types the function in some versions, not others.
    start: Any = java_gateway.ensure_callback_server_started
    start(spark.sparkContext._gateway)


class RoundTripCounter:
    """Counts the round trips to the JVM the calling thread makes, by wrapping the gateway
    client's ``send_command``, while in its ``with`` block.

    Example::

        with RoundTripCounter(spark) as calls:
            input_datasets(df)
        print(calls.count)
    """

    def __init__(self, spark: Any) -> None:
        self.client = spark.sparkContext._gateway._gateway_client
        self.original = self.client.send_command
        self.count = 0

    def __enter__(self) -> RoundTripCounter:
        caller = threading.get_ident()

        def counting(command: str, *args: Any, **kwargs: Any) -> Any:
            # Memory ("m") commands come from py4j's finalizer thread: GC, not extraction.
            if threading.get_ident() == caller and not command.startswith("m\n"):
                self.count += 1
            return self.original(command, *args, **kwargs)

        self.client.send_command = counting
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.send_command = self.original


def listen_on_bus(spark: Any, listener: object, queue: str) -> Undo:
    """Add ``listener`` (a ``SparkListenerInterface``) to a queue of the application's listener
    bus; returns what removes it."""
    bus = spark.sparkContext._jsc.sc().listenerBus()
    bus.addToQueue(listener, queue)
    return lambda: bus.removeListener(listener)


def forward_jobs_on(spark: Any, jobs: JobListener, queue: str = QUEUE) -> None:
    """Register ``jobs``'s forwarder on ``queue`` of the listener bus (capture puts it on a queue
    of its own; the SQL actions' queue, ``QUEUE``, shows what sharing one would cost)."""
    context = spark.sparkContext._jsc.sc()
    proxy, forwarder = forwarder_proxy(spark, jobs, (), scheduler=context.dagScheduler())
    context.listenerBus().addToQueue(proxy, queue)
    jobs._proxy, jobs._forwarder = proxy, forwarder


class JobLookupListener:
    """A ``SparkListenerInterface`` in Python that looks each job up in the scheduler when its
    start arrives, counting those already gone (every other event is ignored, after crossing)."""

    def __init__(self, spark: Any) -> None:
        self.scheduler = spark.sparkContext._jsc.sc().dagScheduler()
        self.handed = 0
        self.lost = 0

    def onJobStart(self, start: Any) -> None:
        properties = start.properties()
        if properties is not None and properties.getProperty("spark.sql.execution.id"):
            return
        self.handed += 1
        self.lost += not self.scheduler.jobIdToActiveJob().get(start.jobId()).isDefined()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on"):
            return lambda *arguments: None
        raise AttributeError(name)

    def equals(self, other: object) -> bool:
        return other is self

    def hashCode(self) -> int:
        return id(self) & 0x7FFFFFFF

    def toString(self) -> str:
        return "rdd-jobs benchmark listener"

    class Java:
        implements: ClassVar[list[str]] = ["org.apache.spark.scheduler.SparkListenerInterface"]


class _QueryListener:
    def __init__(self, hit: Hit) -> None:
        self.hit = hit

    def onSuccess(self, func_name: str, qe: Any, duration: int) -> None:
        self.hit()

    def onFailure(self, func_name: str, qe: Any, error: Any) -> None:
        self.hit()

    class Java:
        implements: ClassVar[list[str]] = ["org.apache.spark.sql.util.QueryExecutionListener"]


class _Consumer:
    def __init__(self, hit: Hit) -> None:
        self.hit = hit

    def accept(self, event: Any) -> None:
        self.hit()

    class Java:
        implements: ClassVar[list[str]] = ["java.util.function.Consumer"]


def _python_listener(hit: Hit) -> Any:
    """A Python object answering every method of ``SparkListenerInterface``."""

    class Everything:
        def __getattr__(self, name: str) -> Any:
            if name.startswith("on"):
                return lambda *_: hit()
            raise AttributeError(name)

        class Java:
            implements: ClassVar[list[str]] = ["org.apache.spark.scheduler.SparkListenerInterface"]

    return Everything()


def listen_to_session(spark: Any, hit: Hit) -> Undo:
    """A ``QueryExecutionListener`` in Python on ``spark``'s session alone, calling ``hit`` once
    per action; returns what unregisters it."""
    manager = spark._jsparkSession.listenerManager()
    manager.register(_QueryListener(hit))
    proxy: JavaObject = manager.listListeners()[len(manager.listListeners()) - 1]
    return lambda: manager.unregister(proxy)


def listen_to_every_event(spark: Any, hit: Hit, queue: str) -> Undo:
    """A ``SparkListenerInterface`` implemented in Python on ``queue`` of the application's
    listener bus, calling ``hit`` for every event; returns what removes it."""
    jvm: Any = spark.sparkContext._jvm
    proxy = jvm.java.util.Objects.requireNonNull(_python_listener(hit))
    return listen_on_bus(spark, proxy, queue)


def listen_to_other_events(spark: Any, hit: Hit, queue: str) -> Undo:
    """``java.beans.EventHandler`` (JDK only, no compiled code) on ``queue``, filtering the bus's
    events by method name: ``hit`` is called for every ``onOtherEvent``; returns what removes
    it."""
    jvm: Any = spark.sparkContext._jvm
    interface = jvm.java.lang.Class.forName("org.apache.spark.scheduler.SparkListenerInterface")
    proxy = jvm.java.beans.EventHandler.create(
        interface, _Consumer(hit), "accept", "", "onOtherEvent"
    )
    return listen_on_bus(spark, proxy, queue)
