package parascout;

import org.apache.spark.sql.api.java.UDF2;

/**
 * Spark SQL UDF {@code (url, spec) -> handle}: udfs/rank/handles.py's {@code HandleStripper.handle} on the JVM.
 *
 * <p>The spec (the stripper's word lists, see {@code jvm_spec}) comes as a binary literal column, parsed into
 * tries once per JVM ({@link SpecCache}).
 */
public final class StrandHandle implements UDF2<String, byte[], String> {
    private static final long serialVersionUID = 1L;
    private static final SpecCache<HandleStripper> STRIPPERS = new SpecCache<>(HandleStripper::parse);

    @Override
    public String call(String url, byte[] spec) {
        return url == null ? null : STRIPPERS.get(spec).handle(url);
    }
}
