"""The application's jobs run outside SQL executions (RDD actions), as facts.

Spark's listener bus tells of every job; those a SQL execution runs (their properties carry
``spark.sql.execution.id``; adaptive execution runs many per action) are part of that
execution's action, captured at its end, and are dropped in the JVM. The others are RDD
actions: the package's Java class (``java/.../ListenerEventForwarder.java``, a second instance
on a listener-bus queue of its own) takes each one's final stage from Spark's scheduler as the
job's start is dispatched, before a short job can end and the scheduler forget it, and hands
the job to :class:`JobListener` once it ended, on a thread of its own: one call into Python per
job. The listener walks the stage's RDD graph (``_rdds``) and passes typed facts on.

The bus is asynchronous: a job can still end before its start reaches the queue (a queue
held up by a slow listener call, a machine short of cores). Such a job is handed over with
``lost`` set and no RDDs read; ``benchmarks/rdd_jobs.py`` measures how often that happens.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from openlineage_subset.spark._facts import RddJobFacts
from openlineage_subset.spark._jvm._application import OnError, forwarder_proxy
from openlineage_subset.spark._jvm._bridge import JavaObject, JvmCallback
from openlineage_subset.spark._jvm._rdds import job_facts

JOBS_QUEUE = "openlineage-subset-jobs"
"""The listener bus queue of the jobs' forwarder: a slow SQL action's capture on the other
queue never delays taking a job's stage."""
OnJob = Callable[[RddJobFacts], None]
"""``on_job(facts)``: one job run outside SQL executions, after it ended."""


class JobListener(JvmCallback):
    """Hands each job run outside SQL executions to ``on_job`` (see :data:`OnJob`), once, after
    it ended; what cannot be read of a job goes to ``on_error``, and the job is left out.

    Example (``handle_job`` and ``count_error`` as the aliases say)::

        jobs = JobListener(handle_job, count_error)
        jobs.register(spark)
        sc.textFile("/lake/logs").saveAsTextFile("/lake/copy")   # one call of handle_job
        jobs.unregister(spark, timeout=5)
    """

    def __init__(self, on_job: OnJob, on_error: OnError) -> None:
        self.on_job = on_job
        self.on_error = on_error
        self._proxy: JavaObject = None
        self._forwarder: JavaObject = None

    def accept(self, job: JavaObject) -> None:
        """Called by the Java forwarder's delivery thread, once per job, after it ended."""
        try:
            problem = job[3]
            if problem is not None:
                raise RuntimeError(f"Spark's scheduler could not be read: {problem}")
            facts = job_facts(job)
        except Exception as error:
            self.on_error("reading the RDDs of a Spark job", error)
            return
        self.on_job(facts)

    def register(self, spark: Any) -> None:
        """Hear of the jobs of ``spark``'s application (a classic session) from now on."""
        context = spark.sparkContext._jsc.sc()
        proxy, forwarder = forwarder_proxy(spark, self, (), scheduler=context.dagScheduler())
        context.listenerBus().addToQueue(proxy, JOBS_QUEUE)
        self._proxy, self._forwarder = proxy, forwarder

    def wait_delivered(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until every job that ended before this call and
        reached the forwarder has been handed over; whether they all were."""
        if self._forwarder is None:
            return True
        return bool(self._forwarder.awaitDelivered(int(timeout * 1000)))

    def unregister(self, spark: Any, timeout: float) -> bool:
        """Stop hearing of jobs; the jobs that ended before are handed over first (waiting at
        most ``timeout`` seconds). Whether they all were."""
        if self._proxy is None:
            return True
        try:
            spark.sparkContext._jsc.sc().listenerBus().removeListener(self._proxy)
        finally:  # a stopped Spark has no bus, and its last jobs are still to be handed over
            delivered = self.wait_delivered(timeout)
            self._forwarder.stop()
        return delivered

    class Java:
        implements: ClassVar[list[str]] = ["java.util.function.Consumer"]
