package parascout;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Whole local CDX files (plain or gzip) as {@code (value binary, read_status string)} rows, one Spark task per
 * file: the JVM twin of udfs/index/cdx.py's {@code cdx_line_batches}, in place of Spark's text reader, whose Hadoop
 * line-length cap drops an over-long line without a trace and whose gzip reader fails the job on a broken file.
 *
 * <p>A line longer than {@code maxLineBytes} is one {@code line_too_long} row, skipped without being held; a
 * gzip stream that breaks ends its file with one {@code truncated_gzip} or {@code bad_gzip} row (the partial last
 * line belongs to the broken member); a file that cannot be read is one {@code unreadable} row.
 */
public final class CdxFileReader implements FlatMapFunction<String, Row> {
    private static final long serialVersionUID = 1L;
    /** The rows' schema: udfs/index/cdx.py's LINE_SCHEMA. */
    public static final StructType SCHEMA = new StructType()
        .add("value", DataTypes.BinaryType).add("read_status", DataTypes.StringType);
    private static final int CHUNK_BYTES = 1 << 16;

    private final int maxLineBytes;

    public CdxFileReader(int maxLineBytes) {
        this.maxLineBytes = maxLineBytes;
    }

    /** The schema of {@link #records}' rows: udfs/index/cdx_records.py's RECORD_COLUMNS and {@code reason}. */
    public static final StructType RECORD_SCHEMA = recordSchema();

    /**
     * The capture records of {@code paths} (local file paths, one partition per file), each line parsed by
     * {@link CdxLine#parse} as it is read, straight into Spark's internal rows: the lines never become a DataFrame
     * of their own, so neither they nor the parsed struct go through Spark's conversion of external rows.
     * {@code crawls} holds each path's crawl as its folder names it (cdx_records.py's cdx_path_crawl), null where
     * none; a read problem is the record's reason.
     */
    public static Dataset<Row> records(SparkSession spark, List<String> paths, List<String> crawls, int maxLineBytes,
                                       int maxUrlChars, int firstYear, int lastYear) {
        List<String[]> files = new ArrayList<>();
        for (int i = 0; i < paths.size(); i++) {
            files.add(new String[] {paths.get(i), crawls.get(i)});
        }
        JavaSparkContext context = JavaSparkContext.fromSparkContext(spark.sparkContext());
        JavaRDD<InternalRow> rows = context.parallelize(files, Math.max(files.size(), 1))
            .flatMap(new Records(maxLineBytes, maxUrlChars, firstYear, lastYear));
        return ((org.apache.spark.sql.classic.SparkSession) spark).internalCreateDataFrame(rows.rdd(), RECORD_SCHEMA,
            false);
    }

    private static StructType recordSchema() {
        StructType schema = new StructType();
        for (String field : CdxLine.FIELDS) {
            schema = switch (field) {
                case "status" -> schema.add(field, DataTypes.IntegerType);
                case "fetch_micros" -> schema.add("fetch_time", DataTypes.TimestampType);
                case "warc_offset", "warc_length" -> schema.add(field, DataTypes.LongType);
                default -> schema.add(field, DataTypes.StringType);
            };
        }
        return schema;
    }

    /** One file's records ({@code {path, crawl}}): its lines as {@link #call} reads them, each parsed. */
    static final class Records implements FlatMapFunction<String[], InternalRow> {
        private static final long serialVersionUID = 1L;
        private final int maxLineBytes;
        private final int maxUrlChars;
        private final int firstYear;
        private final int lastYear;

        Records(int maxLineBytes, int maxUrlChars, int firstYear, int lastYear) {
            this.maxLineBytes = maxLineBytes;
            this.maxUrlChars = maxUrlChars;
            this.firstYear = firstYear;
            this.lastYear = lastYear;
        }

        @Override
        public Iterator<InternalRow> call(String[] file) {
            Iterator<Row> lines = new CdxFileReader(maxLineBytes).call(file[0]);
            String crawl = file[1];
            return new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return lines.hasNext();
                }

                @Override
                public InternalRow next() {
                    Row line = lines.next();
                    return internal(CdxLine.parse((byte[]) line.get(0), line.getString(1), maxUrlChars, firstYear,
                        lastYear, crawl));
                }
            };
        }

        /** CdxLine's values as Spark holds them: strings as UTF8String, the rest as they are. */
        private static InternalRow internal(Object[] values) {
            Object[] row = new Object[values.length];
            for (int i = 0; i < values.length; i++) {
                Object value = values[i];
                row[i] = value instanceof String text ? UTF8String.fromString(text) : value;
            }
            return new GenericInternalRow(row);
        }
    }

    /** The lines of {@code paths} (local file paths), one partition per file. */
    public static Dataset<Row> read(SparkSession spark, List<String> paths, int maxLineBytes) {
        JavaSparkContext context = JavaSparkContext.fromSparkContext(spark.sparkContext());
        JavaRDD<Row> rows = context.parallelize(paths, Math.max(paths.size(), 1))
            .flatMap(new CdxFileReader(maxLineBytes));
        return spark.createDataFrame(rows, SCHEMA);
    }

    @Override
    public Iterator<Row> call(String path) {
        BufferedInputStream file;
        try {
            file = new BufferedInputStream(Files.newInputStream(Paths.get(path)), CHUNK_BYTES);
            file.mark(2);
            boolean gzip = file.read() == 0x1f && file.read() == 0x8b;
            file.reset();
            return new Lines(gzip ? new GzipMembers(file) : file, maxLineBytes);
        } catch (IOException | UncheckedIOException error) {
            return List.of(problem("unreadable")).iterator();
        }
    }

    static Row problem(String reason) {
        return RowFactory.create(new byte[0], reason);
    }

    /** A read problem that ends its file: its reason is the row's read_status. */
    static final class Broken extends IOException {
        private static final long serialVersionUID = 1L;

        Broken(String reason) {
            super(reason);
        }
    }

    /** Newline-separated lines of a stream, each at most maxLineBytes (longer: one line_too_long row). */
    static final class Lines implements Iterator<Row> {
        private final InputStream in;
        private final int maxLineBytes;
        private final byte[] chunk = new byte[CHUNK_BYTES];
        private int position;
        private int limit;
        private byte[] line = new byte[1024];
        private int lineLength;
        private boolean ended;
        private Row next;

        Lines(InputStream in, int maxLineBytes) {
            this.in = in;
            this.maxLineBytes = maxLineBytes;
        }

        @Override
        public boolean hasNext() {
            if (next == null && !ended) {
                next = readRow();
                if (next == null) {
                    close();
                }
            }
            return next != null;
        }

        @Override
        public Row next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Row row = next;
            next = null;
            return row;
        }

        private Row readRow() {
            lineLength = 0;
            long seen = 0;
            boolean tooLong = false;
            while (true) {
                if (position == limit) {
                    int read;
                    try {
                        read = in.read(chunk, 0, chunk.length);
                    } catch (Broken error) {
                        return end(problem(error.getMessage()));
                    } catch (IOException error) {
                        return end(problem("unreadable"));
                    }
                    if (read < 0) {
                        Row last = seen == 0 ? null : tooLong ? problem("line_too_long") : lineRow();
                        return end(last);
                    }
                    position = 0;
                    limit = read;
                }
                int newline = indexOfNewline();
                int end = newline < 0 ? limit : newline;
                seen += end - position;
                if (!tooLong && lineLength + (end - position) > maxLineBytes) {
                    tooLong = true;
                    line = new byte[1024];
                } else if (!tooLong) {
                    append(end - position);
                }
                position = newline < 0 ? limit : newline + 1;
                if (newline >= 0) {
                    return tooLong ? problem("line_too_long") : lineRow();
                }
            }
        }

        private int indexOfNewline() {
            for (int i = position; i < limit; i++) {
                if (chunk[i] == '\n') {
                    return i;
                }
            }
            return -1;
        }

        private void append(int count) {
            if (lineLength + count > line.length) {
                line = Arrays.copyOf(line, Math.max(line.length * 2, lineLength + count));
            }
            System.arraycopy(chunk, position, line, lineLength, count);
            lineLength += count;
        }

        private Row lineRow() {
            return RowFactory.create(Arrays.copyOf(line, lineLength), null);
        }

        private Row end(Row last) {
            ended = true;
            close();
            return last;
        }

        private void close() {
            ended = true;
            try {
                in.close();
            } catch (IOException ignored) {
                // the rows are out; a failing close loses nothing
            }
        }
    }
}
