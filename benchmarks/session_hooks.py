"""What each way of seeing every session's actions costs: the choice behind ``_jvm/_application``.

Runs the same job (``--actions`` small queries, each of ``--tasks`` tasks, spread over the first
session and a ``newSession()``) in one local SparkSession, with each way of hearing about
actions registered in turn, its Python side doing nothing but counting the calls it gets:

- ``none``: nothing registered (the baseline);
- ``query-listener``: a ``QueryExecutionListener`` in Python on the first session only (what
  capture used before): one call per action, and blind to every other session;
- ``python-listener``: a ``SparkListenerInterface`` implemented in Python on the application's
  listener bus: sees everything, and is called for every event of the application, one per task
  and more;
- ``event-handler``: ``java.beans.EventHandler`` (JDK only, no compiled code) filtering the bus's
  events by method name: only ``onOtherEvent`` reaches Python, but every kind of "other" event
  does (SQL execution start and end, adaptive plan updates, accumulator updates...);
- ``forwarder``: the package's compiled ``ListenerEventForwarder``: only the end of each SQL
  execution reaches Python, from every session: one call per action.

Prints, for each, the job's median wall time over ``--rounds`` rounds (variants interleaved),
its ratio to ``none``, the calls into Python per action and the actions of the other session it
saw. The listeners run on the listener bus's threads, after each action returns: the wall time
shows what they take from the job itself; the calls say what they cost the driver.

    python benchmarks/session_hooks.py [--actions 40] [--tasks 8] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable

from pyspark.sql import SparkSession

from openlineage_subset.spark import (
    EXECUTION_END,
    ApplicationListener,
    application_listener_available,
    drain_listener_bus,
    listen_to_every_event,
    listen_to_other_events,
    listen_to_session,
    start_callback_server,
)

VARIANTS = ("none", "query-listener", "python-listener", "event-handler", "forwarder")


class Counter:
    """What every Python side of a variant shares: calls, and actions of the other session."""

    def __init__(self) -> None:
        self.calls = 0
        self.other_session = 0
        self.lock = threading.Lock()

    def hit(self, *, other: bool = False) -> None:
        with self.lock:
            self.calls += 1
            self.other_session += other


def register(spark: SparkSession, variant: str, counter: Counter) -> Callable[[], None]:
    """Register ``variant``; returns what undoes it."""
    if variant == "query-listener":
        return listen_to_session(spark, counter.hit)
    if variant == "python-listener":
        return listen_to_every_event(spark, counter.hit, "benchmark")
    if variant == "event-handler":
        return listen_to_other_events(spark, counter.hit, "benchmark")
    if variant == "forwarder":
        application = ApplicationListener(lambda *_: counter.hit(), lambda *_: None)
        application.register(spark)
        return lambda: application.unregister(spark)
    return lambda: None


def job(spark: SparkSession, other: SparkSession, actions: int, tasks: int) -> None:
    for number in range(actions):
        session = other if number % 2 else spark
        session.range(0, tasks * 100, 1, tasks).selectExpr("sum(id)").collect()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--actions", type=int, default=40)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not application_listener_available():
        raise SystemExit("this installation has no compiled forwarder (built without javac)")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    start_callback_server(spark)
    other = spark.newSession()
    times: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    calls: dict[str, Counter] = {}
    job(spark, other, 4, args.tasks)  # warm-up
    for round_number in range(args.rounds):
        order = VARIANTS if round_number % 2 == 0 else tuple(reversed(VARIANTS))
        for variant in order:
            counter = Counter()
            undo = register(spark, variant, counter)
            started = time.perf_counter()
            job(spark, other, args.actions, args.tasks)
            times[variant].append(time.perf_counter() - started)
            drain_listener_bus(spark)
            undo()
            calls[variant] = counter
    baseline = statistics.median(times["none"])
    rounds = f"{args.rounds} rounds"
    print(f"{args.actions} actions of {args.tasks} tasks, half on a newSession(), {rounds}")
    print(f"{'variant':16} {'median s':>9} {'ratio':>7} {'calls/action':>13}")
    for variant in VARIANTS:
        median = statistics.median(times[variant])
        per_action = calls[variant].calls / args.actions
        print(f"{variant:16} {median:9.3f} {median / baseline:7.3f} {per_action:13.1f}")
    print(f"(forwarder forwards {EXECUTION_END.rsplit('.', 1)[-1]} only)")
    spark.stop()


if __name__ == "__main__":
    main()
