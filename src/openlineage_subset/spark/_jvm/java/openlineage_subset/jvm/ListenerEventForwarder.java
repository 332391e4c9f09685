/*
 * openlineage-subset: the one piece of Java in the package (Apache-2.0).
 *
 * Spark's listener bus delivers every event of the application (jobs, stages, every task) to
 * each listener. Capture needs only a few of them: the end of each SQL execution, from any
 * session of the application (SparkListenerSQLExecutionEnd carries the QueryExecution), and a
 * Spark Connect session's start and end. This handler, behind a java.lang.reflect.Proxy of
 * SparkListenerInterface, hands those to a consumer (capture's Python side, through py4j) and
 * drops every other event here, in the JVM: one call into Python per action, never one per
 * task. It translates nothing: what a plan read and wrote is worked out in Python.
 *
 * Nothing thrown while handing an event over reaches the listener bus: Spark stops the whole
 * application when a listener throws an Error (a class py4j cannot load, a stack overflow), and
 * lineage must never break the job. What is caught is said on standard error.
 *
 * It names no Spark class, so it compiles against the JDK alone (javac --release 8) and works
 * with every Spark version whose listener interface has onOtherEvent.
 */
package openlineage_subset.jvm;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Consumer;

public final class ListenerEventForwarder implements InvocationHandler {
    private final Consumer<Object> consumer;
    private final Set<String> forwarded;

    /**
     * @param consumer what receives the forwarded events
     * @param eventClassNames the full class names of the events to forward
     */
    public ListenerEventForwarder(Consumer<Object> consumer, String[] eventClassNames) {
        this.consumer = consumer;
        this.forwarded = new HashSet<>(Arrays.asList(eventClassNames));
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
        if ("onOtherEvent".equals(name) && args != null && args.length == 1 && args[0] != null
                && forwarded.contains(args[0].getClass().getName())) {
            try {
                consumer.accept(args[0]);
            } catch (VirtualMachineError fatal) {
                throw fatal;  // out of memory: the JVM cannot go on either way
            } catch (Throwable error) {
                System.err.println("openlineage-subset: lineage capture of a Spark event failed"
                        + " (the job goes on): " + error);
            }
        }
        return null;  // every method of a Spark listener returns nothing
    }
}
