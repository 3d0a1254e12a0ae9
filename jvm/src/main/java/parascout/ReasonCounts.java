package parascout;

import java.util.HashMap;
import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.expressions.Aggregator;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Spark SQL aggregate {@code reason -> struct<records bigint, <reason> bigint, ...>}: how many rows there are and
 * how many carry each of the named reasons, in one update per row: udfs/index/cdx_records.py's reason_counters.
 *
 * <p>scan-cdx counts every index record by its reason while the scan runs ({@code Dataset.observe}); as one
 * {@code sum(when(reason = name, 1))} per reason, each of the two dozen aggregates is updated for every row. Here a
 * row costs one hash lookup. A reason not named is counted in {@code records} only.
 */
public final class ReasonCounts extends Aggregator<String, long[], Row> {
    private static final long serialVersionUID = 1L;
    private final String[] reasons;
    /** reason -> its place in the counts (1, 2, ...; 0 is records). */
    private final HashMap<String, Integer> index = new HashMap<>();

    public ReasonCounts(String[] reasons) {
        this.reasons = reasons.clone();
        for (int i = 0; i < reasons.length; i++) {
            index.putIfAbsent(reasons[i], i + 1);
        }
    }

    /** The struct's fields: records, then the reasons in order. */
    public StructType schema() {
        StructType schema = new StructType().add("records", DataTypes.LongType, false);
        for (String reason : reasons) {
            schema = schema.add(reason, DataTypes.LongType, false);
        }
        return schema;
    }

    @Override
    public long[] zero() {
        return new long[reasons.length + 1];
    }

    @Override
    public long[] reduce(long[] counts, String reason) {
        counts[0]++;
        if (reason != null) {
            Integer at = index.get(reason);
            if (at != null) {
                counts[at]++;
            }
        }
        return counts;
    }

    @Override
    public long[] merge(long[] counts, long[] more) {
        for (int i = 0; i < counts.length; i++) {
            counts[i] += more[i];
        }
        return counts;
    }

    @Override
    public Row finish(long[] counts) {
        Object[] values = new Object[counts.length];
        for (int i = 0; i < counts.length; i++) {
            values[i] = counts[i];
        }
        return RowFactory.create(values);
    }

    @Override
    public Encoder<long[]> bufferEncoder() {
        return Encoders.javaSerialization(long[].class);
    }

    @Override
    public Encoder<Row> outputEncoder() {
        return Encoders.row(schema());
    }
}
