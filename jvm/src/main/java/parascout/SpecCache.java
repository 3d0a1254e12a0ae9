package parascout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The parsed form of a UDF's spec argument (a binary literal column), parsed once per JVM and spec.
 *
 * <p>Spark hands a UDF the literal's own byte[] on every row, so a reference comparison with the last spec seen
 * finds its parsed form without decoding; a string literal would be decoded into a new String per row, costing
 * more than the UDF's work.
 */
final class SpecCache<T> {
    private final ConcurrentHashMap<String, T> parsed = new ConcurrentHashMap<>();
    private final Function<String, T> parser;
    /** The last spec seen and its parsed form, one immutable pair so threads never see half of it. */
    private volatile Entry<T> last;

    SpecCache(Function<String, T> parser) {
        this.parser = parser;
    }

    T get(byte[] spec) {
        Entry<T> entry = last;
        if (entry == null || entry.spec != spec) {
            entry = new Entry<>(spec, parsed.computeIfAbsent(new String(spec, StandardCharsets.UTF_8), parser));
            last = entry;
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
