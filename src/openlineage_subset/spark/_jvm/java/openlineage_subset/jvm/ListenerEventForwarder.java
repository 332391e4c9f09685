/*
 * openlineage-subset: the one piece of Java in the package (Apache-2.0).
 *
 * Spark's listener bus delivers every event of the application (jobs, stages, every task) to
 * each listener. Capture needs only a few of them: the end of each SQL execution, from any
 * session of the application (SparkListenerSQLExecutionEnd carries the QueryExecution), and a
 * Spark Connect session's start and end. This handler, behind a java.lang.reflect.Proxy of
 * SparkListenerInterface, hands those to a consumer (capture's Python side, through py4j) and
 * drops every other event here, in the JVM: one call into Python per action, never one per
 * task. It translates nothing: what a plan read and wrote is worked out in Python. The few facts
 * of an execution's end that Python needs (its name, duration and failure) are read here and
 * handed over with the call, not asked for by Python one round trip at a time.
 *
 * Given Spark's DAGScheduler, it also hands over the jobs that run outside any SQL execution
 * (RDD actions), once each, after the job ended: the job's start and end events and its final
 * stage, whose RDD graph Python walks. Jobs of a SQL execution (their properties name it) are
 * dropped here, however many adaptive execution runs. The final stage is taken from the
 * scheduler as the job's start is dispatched, before the job can end and the scheduler forget
 * it: on this queue's thread, which therefore never waits for Python; the hand-over to Python
 * runs on a thread of its own, in the order the jobs ended.
 *
 * Structured Streaming runs each micro-batch as a SQL execution with no name (so no action by
 * Spark's rule) whose query execution is an IncrementalExecution: those are handed over too, as
 * the action "streamingBatch". Spark describes a batch's executions, and those a foreachBatch
 * function runs inside it, with the batch's identity (the query's name, id, run id and batch id,
 * in the job description it sets); that description, read from the execution's start, is handed
 * over with each such execution's end, so that Python can make the batch the parent of the
 * actions run inside it. Executions named by Spark whose query execution is the batch's own (a
 * DataSource V2 sink's collect) are the batch itself: dropped.
 *
 * Nothing thrown while handing an event over reaches the listener bus: Spark stops the whole
 * application when a listener throws an Error (a class py4j cannot load, a stack overflow), and
 * lineage must never break the job. What is caught is said on standard error.
 *
 * It names no Spark class (Spark is reached by reflection), so it compiles against the JDK
 * alone (javac --release 8) and works with every Spark version whose listener interface has
 * onOtherEvent, onJobStart and onJobEnd.
 */
package openlineage_subset.jvm;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

public final class ListenerEventForwarder implements InvocationHandler {
    /** The event that ends a SQL execution, whose facts are read here (see executionEnded). */
    private static final String EXECUTION_END =
            "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd";
    /** The event that starts a SQL execution: its description is kept for stream batches. */
    private static final String EXECUTION_START =
            "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart";
    /** The simple class name of a micro-batch's query execution (its package moved in Spark 4.1). */
    private static final String BATCH_EXECUTION = "IncrementalExecution";
    /** What a stream batch's job description holds (its query's run id), and Spark writes. */
    private static final String BATCH_MARK = "\nrunId = ";
    /** The action name a micro-batch is handed over with. */
    public static final String STREAMING_BATCH = "streamingBatch";
    /** The most descriptions kept of executions not ended yet (a bound, never reached). */
    private static final int MAX_DESCRIPTIONS = 10_000;
    /** The job property Spark sets on every job a SQL execution runs. */
    private static final String EXECUTION_ID = "spark.sql.execution.id";

    private final Consumer<Object> consumer;
    private final Set<String> forwarded;
    private final Object scheduler;
    /** The jobs started outside SQL executions and not ended yet: {start, stage, end, problem}. */
    private final Map<Object, Object[]> jobs = new ConcurrentHashMap<>();
    private final ExecutorService delivery;
    /** Executions running in a stream batch and not ended yet: their descriptions, by id. */
    private final Map<Object, String> batchDescriptions = new ConcurrentHashMap<>();

    /**
     * @param consumer what receives the forwarded events
     * @param eventClassNames the full class names of the events to forward
     */
    public ListenerEventForwarder(Consumer<Object> consumer, String[] eventClassNames) {
        this(consumer, eventClassNames, null);
    }

    /**
     * @param consumer what receives the forwarded events, and each job as an Object[] of its
     *     start event, its final stage (null when it could not be read), its end event and why
     *     the stage could not be read (a String, or null)
     * @param eventClassNames the full class names of the events to forward
     * @param scheduler Spark's DAGScheduler, to forward the jobs run outside SQL executions;
     *     null forwards no job
     */
    public ListenerEventForwarder(
            Consumer<Object> consumer, String[] eventClassNames, Object scheduler) {
        this.consumer = consumer;
        this.forwarded = new HashSet<>(Arrays.asList(eventClassNames));
        this.scheduler = scheduler;
        this.delivery = scheduler == null ? null : Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "openlineage-subset-jobs");
            thread.setDaemon(true);
            return thread;
        });
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) {
        String name = method.getName();
        if (method.getDeclaringClass() == Object.class) {
            // The listener bus removes a listener by comparing it with those it holds.
            if ("equals".equals(name)) {
                return proxy == args[0];
            }
            if ("hashCode".equals(name)) {
                return System.identityHashCode(proxy);
            }
            return "openlineage-subset listener";
        }
        if (args == null || args.length != 1 || args[0] == null) {
            return null;
        }
        try {
            if ("onOtherEvent".equals(name)) {
                String kind = args[0].getClass().getName();
                if (!forwarded.contains(kind)) {
                    return null;
                }
                if (kind.equals(EXECUTION_START)) {
                    executionStarted(args[0]);
                } else if (kind.equals(EXECUTION_END) && consumer instanceof BiConsumer) {
                    executionEnded(args[0]);
                } else {
                    consumer.accept(args[0]);
                }
            } else if (scheduler != null && "onJobStart".equals(name)) {
                jobStarted(args[0]);
            } else if (scheduler != null && "onJobEnd".equals(name)) {
                jobEnded(args[0]);
            }
        } catch (VirtualMachineError fatal) {
            throw fatal;  // out of memory: the JVM cannot go on either way
        } catch (Throwable error) {
            say(error);
        }
        return null;  // every method of a Spark listener returns nothing
    }

    /**
     * Waits until every job ended so far has been handed over (or the time is up).
     *
     * @return whether they all were
     */
    public boolean awaitDelivered(long timeoutMillis) {
        if (delivery == null) {
            return true;
        }
        try {
            Future<?> marker = delivery.submit(() -> { });
            marker.get(timeoutMillis, TimeUnit.MILLISECONDS);
            return true;
        } catch (RejectedExecutionException stopped) {
            return true;
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return false;
        } catch (TimeoutException | java.util.concurrent.ExecutionException notYet) {
            return false;
        }
    }

    /** Hands over no more jobs (those already ended still are); the thread then ends. */
    public void stop() {
        jobs.clear();
        if (delivery != null) {
            delivery.shutdown();
        }
    }

    /** Keeps the description of an execution that runs in a stream batch, until it ends. */
    private void executionStarted(Object start) throws ReflectiveOperationException {
        Object description = call(start, "description");
        if (description instanceof String && ((String) description).contains(BATCH_MARK)) {
            if (batchDescriptions.size() >= MAX_DESCRIPTIONS) {
                batchDescriptions.clear();  // ends lost: Python then names no batch for them
            }
            batchDescriptions.put(call(start, "executionId"), (String) description);
        }
    }

    /**
     * Hands the end of a SQL execution that is an action (it has a name and a query execution,
     * Spark's own rule for query execution listeners), or a stream's micro-batch, to the
     * consumer in one call, its facts read here: {@code accept("name NUL duration in ns NUL
     * batch", qe)} for one that succeeded, {@code accept("name NUL 0 NUL batch", new Object[]
     * {qe, failure})} for one that failed; "batch" is the description of the stream batch it
     * ran in (empty when none). Asked of the event in Python, they took ten round trips through
     * py4j per action.
     */
    @SuppressWarnings("unchecked")
    private void executionEnded(Object end) throws ReflectiveOperationException {
        String batch = batchDescriptions.remove(call(end, "executionId"));
        Object executionName = call(end, "executionName");
        Object queryExecution = call(end, "qe");
        if (queryExecution == null) {
            return;
        }
        boolean named = Boolean.TRUE.equals(call(executionName, "isDefined"));
        boolean batchItself = BATCH_EXECUTION.equals(queryExecution.getClass().getSimpleName());
        if (named == batchItself) {
            // Unnamed and no batch: not an action, Spark's listeners are not told of it either.
            // Named, of a batch's own query execution: that batch, handed over at its own end.
            return;
        }
        String action = named ? String.valueOf(call(executionName, "get")) : STREAMING_BATCH;
        String facts = "\u0000" + (batch == null ? "" : batch);
        Object failure = call(end, "executionFailure");
        BiConsumer<String, Object> handler = (BiConsumer<String, Object>) consumer;
        if (Boolean.TRUE.equals(call(failure, "isDefined"))) {
            Object[] failed = {queryExecution, call(failure, "get")};
            handler.accept(action + "\u0000" + 0 + facts, failed);
        } else {
            handler.accept(action + "\u0000" + call(end, "duration") + facts, queryExecution);
        }
    }

    private void jobStarted(Object start) throws ReflectiveOperationException {
        Object properties = call(start, "properties");
        if (properties instanceof Properties
                && ((Properties) properties).getProperty(EXECUTION_ID) != null) {
            return;  // part of a SQL execution: its action is captured at the execution's end
        }
        Object stage = null;
        String problem = null;
        try {
            Object active = call(call(scheduler, "jobIdToActiveJob"), "get", call(start, "jobId"));
            if (Boolean.TRUE.equals(call(active, "isDefined"))) {
                stage = call(call(active, "get"), "finalStage");
            }
        } catch (ReflectiveOperationException | RuntimeException error) {
            problem = String.valueOf(error);
        }
        jobs.put(call(start, "jobId"), new Object[] {start, stage, null, problem});
    }

    private void jobEnded(Object end) throws ReflectiveOperationException {
        Object[] job = jobs.remove(call(end, "jobId"));
        if (job == null) {
            return;  // a job of a SQL execution, or one that started before this listener
        }
        job[2] = end;
        delivery.execute(() -> {
            try {
                consumer.accept(job);
            } catch (VirtualMachineError fatal) {
                throw fatal;
            } catch (Throwable error) {
                say(error);
            }
        });
    }

    /** A public method of {@code target} by name, called with {@code arguments}. */
    private static Object call(Object target, String name, Object... arguments)
            throws ReflectiveOperationException {
        for (Method method : target.getClass().getMethods()) {
            if (method.getName().equals(name) && method.getParameterCount() == arguments.length) {
                return method.invoke(target, arguments);
            }
        }
        throw new NoSuchMethodException(target.getClass().getName() + "." + name);
    }

    private static void say(Throwable error) {
        System.err.println("openlineage-subset: lineage capture of a Spark event failed"
                + " (the job goes on): " + error);
    }
}
