package parascout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.api.java.UDF2;

/**
 * Spark SQL UDF {@code (url, spec) -> handle}: udfs/handles.py's {@code HandleStripper.handle} on the JVM.
 *
 * <p>The spec (the stripper's word lists, see {@code jvm_spec}) comes as a binary literal column: Spark hands
 * the UDF the literal's own byte[] on every row, so a reference comparison finds the parsed tries; a string
 * literal would be decoded into a new String per row, costing more than the handle itself. Tries are parsed
 * once per JVM and spec.
 */
public final class StrandHandle implements UDF2<String, byte[], String> {
    private static final long serialVersionUID = 1L;
    private static final ConcurrentHashMap<String, HandleStripper> STRIPPERS = new ConcurrentHashMap<>();

    /** The last spec seen and its stripper, one immutable pair so threads never see half of it. */
    private transient volatile Parsed last;

    @Override
    public String call(String url, byte[] spec) {
        if (url == null) {
            return null;
        }
        Parsed parsed = last;
        if (parsed == null || parsed.spec != spec) {
            String text = new String(spec, StandardCharsets.UTF_8);
            parsed = new Parsed(spec, STRIPPERS.computeIfAbsent(text, HandleStripper::parse));
            last = parsed;
        }
        return parsed.stripper.handle(url);
    }

    private static final class Parsed {
        final byte[] spec;
        final HandleStripper stripper;

        Parsed(byte[] spec, HandleStripper stripper) {
            this.spec = spec;
            this.stripper = stripper;
        }
    }
}
