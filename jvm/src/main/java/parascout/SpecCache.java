package parascout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The parsed form of a UDF's spec argument (a binary literal column), parsed once per JVM and spec.
 *
 * <p>Spark hands a UDF the same byte[] on every row of a task, so a reference comparison with the last spec
 * the thread saw finds its parsed form without decoding; a string literal would be decoded into a new String
 * per row, costing more than the UDF's work. The last spec is remembered per thread: concurrent tasks hold
 * different copies of the literal, and one shared slot made them evict each other, decoding and hashing the
 * whole spec (the Public Suffix List: ~200 kB) on ~every switch.
 */
final class SpecCache<T> {
    private final ConcurrentHashMap<String, T> parsed = new ConcurrentHashMap<>();
    private final Function<String, T> parser;
    /** The last spec this thread saw and its parsed form. */
    private final ThreadLocal<Entry<T>> last = new ThreadLocal<>();

    SpecCache(Function<String, T> parser) {
        this.parser = parser;
    }

    T get(byte[] spec) {
        Entry<T> entry = last.get();
        if (entry == null || entry.spec != spec) {
            entry = new Entry<>(spec, parsed.computeIfAbsent(new String(spec, StandardCharsets.UTF_8), parser));
            last.set(entry);
        }
        return entry.value;
    }

    private static final class Entry<T> {
        final byte[] spec;
        final T value;

        Entry(byte[] spec, T value) {
            this.spec = spec;
            this.value = value;
        }
    }
}
