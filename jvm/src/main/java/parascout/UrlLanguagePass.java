package parascout;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.QueryExecutionListener;
import org.apache.spark.unsafe.types.UTF8String;
import scala.jdk.javaapi.CollectionConverters;

/**
 * scan-cdx's latest capture and URL-declared language per host in one pass over rows laid out by site and sorted by
 * {@code (site_name, host, surt, fetch_time DESC, warc_filename DESC, warc_offset DESC)}: the JVM twin of
 * udfs/index/cdx_records.py's {@code with_url_languages} windows, which sort the wide rows three more times.
 *
 * <p>Adds {@code capture_rank} (the row's place among its URL's captures, newest first), {@code lang} and
 * {@code lang_source}, and with language pairs {@code site_bilingual} (the site holds a latest capture in both
 * languages of a pair: with_site_bilingual's window), and keeps the input order. A row's URL marker (the slot and
 * code its URL declares, and its sibling key) is {@link UrlMarker}'s, read as the row comes in: a UDF before the pass
 * would convert each URL out of Spark's strings and back, and copy the wide row once more to add its three columns.
 * Among a host's latest captures, a code in a slot is the page's language when CLD2 (the row's {@code langs}) names it
 * on at least half the pages carrying that code there, or when the page has a sibling (same sibling key, another code
 * in the slot) and CLD2 confirms some code of the slot; else {@code lang} is {@code cdx_lang}. A host's rows (a
 * site's, with pairs) are held until its last one is read: past {@code maxHeldRows} they go to a local spill file, so
 * a host or site of any size fits.
 *
 * <p>The pass reads and writes Spark's internal rows (the sorted plan's RDD): a typed {@code mapPartitions} would
 * convert every wide row to an external {@code Row} and back. Cutting the plan there hides the observations made
 * upstream of the pass (scan-cdx's record counts) from Spark, which completes an {@code Observation} only from the
 * plan of the action that ran; so once an action has read the pass's rows, the pass completes them from the
 * upstream plan's own metrics.
 */
public final class UrlLanguagePass implements FlatMapFunction<Iterator<InternalRow>, InternalRow> {
    private static final long serialVersionUID = 1L;
    /** The columns the pass reads. */
    static final String[] INPUTS = {"site_name", "host", "surt", "url", "langs", "cdx_lang"};
    private static final int SITE = 0, HOST = 1, SURT = 2, URL_COLUMN = 3, LANGS = 4, CDX_LANG = 5;
    private static final UTF8String MANY = UTF8String.fromString("\u0000many");
    private static final UTF8String URL = UTF8String.fromString("url");
    private static final UTF8String CDX = UTF8String.fromString("cdx");

    private final int[] at;
    private final StructType schema;
    private final int maxHeldRows;
    /** The language pairs, {source, target} each; empty: no site_bilingual column, rows held per host. */
    private final UTF8String[][] pairs;
    /** URL code -> language (udfs/index/url_language.py's code table, UrlMarker's). */
    private final HashMap<String, String> codeTable;

    UrlLanguagePass(StructType schema, int maxHeldRows, UTF8String[][] pairs, Map<String, String> codes) {
        at = Arrays.stream(INPUTS).mapToInt(schema::fieldIndex).toArray();
        this.schema = schema;
        this.maxHeldRows = maxHeldRows;
        this.pairs = pairs;
        this.codeTable = new HashMap<>(codes);
    }

    /**
     * {@code sorted} (see the class) with capture_rank, lang and lang_source added, and site_bilingual where
     * {@code pairs} names language pairs ({@code "eng fra;eng isl"}, the languages as {@code lang} writes them);
     * {@code codeSpec} is url_language.py's code_spec ({@code "|en:eng|fr:fra|...|"}).
     */
    public static Dataset<Row> apply(Dataset<Row> sorted, int maxHeldRows, String pairs, String codeSpec) {
        UTF8String[][] parsed = Arrays.stream(pairs.split(";")).filter(pair -> !pair.isBlank())
            .map(pair -> Arrays.stream(pair.trim().split(" ")).map(UTF8String::fromString).toArray(UTF8String[]::new))
            .toArray(UTF8String[][]::new);
        StructType out = sorted.schema().add("capture_rank", DataTypes.IntegerType, false)
            .add("lang", DataTypes.StringType).add("lang_source", DataTypes.StringType);
        if (parsed.length > 0) {
            out = out.add("site_bilingual", DataTypes.BooleanType, false);
        }
        org.apache.spark.sql.classic.SparkSession session = (org.apache.spark.sql.classic.SparkSession)
            sorted.sparkSession();
        QueryExecution upstream = sorted.queryExecution();
        RDD<InternalRow> passed = upstream.toRdd().toJavaRDD()
            .mapPartitions(new UrlLanguagePass(sorted.schema(), maxHeldRows, parsed, UrlMarker.parseTable(codeSpec)))
            .rdd();
        session.listenerManager().register(new UpstreamObservations(session, upstream, passed.id()));
        return session.internalCreateDataFrame(passed, out, false);
    }

    /**
     * Completes the observations of the plan upstream of the pass once an action that read the pass's rows (the RDD
     * {@code passedId}) has ended, as Spark completes those of the plan an action runs; then goes away.
     */
    static final class UpstreamObservations implements QueryExecutionListener {
        private final org.apache.spark.sql.classic.SparkSession session;
        private final QueryExecution upstream;
        private final int passedId;

        UpstreamObservations(org.apache.spark.sql.classic.SparkSession session, QueryExecution upstream,
                             int passedId) {
            this.session = session;
            this.upstream = upstream;
            this.passedId = passedId;
        }

        private boolean reads(QueryExecution action) {
            for (LogicalPlan leaf : CollectionConverters.asJava(action.logical().collectLeaves())) {
                if (leaf instanceof LogicalRDD scan && scan.rdd().id() == passedId) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void onSuccess(String funcName, QueryExecution action, long durationNs) {
            if (reads(action)) {
                session.observationManager().tryComplete(upstream);
                session.listenerManager().unregister(this);
            }
        }

        @Override
        public void onFailure(String funcName, QueryExecution action, Exception exception) {
            if (reads(action)) {
                session.listenerManager().unregister(this);
            }
        }
    }

    @Override
    public Iterator<InternalRow> call(Iterator<InternalRow> rows) {
        UnsafeProjection unsafe = UnsafeProjection.create(schema);
        return new Hosts(new Iterator<>() {
            @Override
            public boolean hasNext() {
                return rows.hasNext();
            }

            @Override
            public Marked next() {  // the sort hands out one row object, refilled: each held row is a copy
                InternalRow row = rows.next();
                UnsafeRow copy = row instanceof UnsafeRow same ? same.copy() : unsafe.apply(row).copy();
                return new Marked(copy, new Marker(text(copy, URL_COLUMN), codeTable));
            }
        });
    }

    /** A URL's marker: the slot and code it declares (null, null where none) and its sibling key. */
    static final class Marker implements Serializable {
        private static final long serialVersionUID = 1L;
        final UTF8String slot;
        final UTF8String code;
        final UTF8String siblingKey;

        Marker(UTF8String url, Map<String, String> codes) {
            String[] fields = UrlMarker.fields(url == null ? null : url.toString(), codes);
            slot = UTF8String.fromString(fields[0]);  // fromString(null) is null
            code = UTF8String.fromString(fields[1]);
            siblingKey = UTF8String.fromString(fields[2]);
        }
    }

    /** A held row and its URL's marker. */
    static final class Marked implements Serializable {
        private static final long serialVersionUID = 1L;
        final UnsafeRow row;
        final Marker marker;

        Marked(UnsafeRow row, Marker marker) {
            this.row = row;
            this.marker = marker;
        }
    }

    /** The rows of one host (site), held in memory up to maxHeldRows, the rest in a spill file. */
    final class Held implements AutoCloseable {
        final List<Marked> rows = new ArrayList<>();
        private File spill;
        private ObjectOutputStream spilled;
        long count;

        void add(Marked row) {
            count++;
            if (spilled == null && rows.size() < maxHeldRows) {
                rows.add(row);
                return;
            }
            try {
                if (spilled == null) {
                    spill = spillFile();
                    spilled = new ObjectOutputStream(new BufferedOutputStream(Files.newOutputStream(spill.toPath())));
                }
                spilled.writeObject(row);
                if (count % 1024 == 0) {
                    spilled.reset();  // the stream's handle table would otherwise keep every row
                }
            } catch (IOException error) {
                throw new UncheckedIOException("scan-cdx: cannot spill a host's rows to " + spill, error);
            }
        }

        /** The held rows in the order they were added; each call reads the spill file again. */
        Iterator<Marked> iterator() {
            Iterator<Marked> inMemory = rows.iterator();
            if (spill == null) {
                return inMemory;
            }
            try {
                spilled.flush();
                ObjectInputStream in = new ObjectInputStream(
                    new BufferedInputStream(Files.newInputStream(spill.toPath())));
                long onDisk = count - rows.size();
                return new Iterator<>() {
                    long read;

                    @Override
                    public boolean hasNext() {
                        return inMemory.hasNext() || read < onDisk;
                    }

                    @Override
                    public Marked next() {
                        if (inMemory.hasNext()) {
                            return inMemory.next();
                        }
                        if (read >= onDisk) {
                            throw new NoSuchElementException();
                        }
                        try {
                            Marked row = (Marked) in.readObject();
                            if (++read == onDisk) {
                                in.close();
                            }
                            return row;
                        } catch (IOException | ClassNotFoundException error) {
                            throw new IllegalStateException(
                                "scan-cdx: cannot read back the spill file " + spill, error);
                        }
                    }
                };
            } catch (IOException error) {
                throw new UncheckedIOException("scan-cdx: cannot read back the spill file " + spill, error);
            }
        }

        @Override
        public void close() {
            if (spill != null) {
                try {
                    spilled.close();
                } catch (IOException ignored) {
                    // the file goes anyway
                }
                spill.delete();
            }
        }
    }

    static File spillFile() throws IOException {
        SparkEnv env = SparkEnv.get();
        if (env != null) {
            return env.blockManager().diskBlockManager().createTempLocalBlock()._2();
        }
        return Files.createTempFile("parascout-hosts", ".spill").toFile();
    }

    /** A string column of the row, null where null. */
    private UTF8String text(InternalRow row, int column) {
        return row.isNullAt(at[column]) ? null : row.getUTF8String(at[column]);
    }

    /** The rows of a partition host by host (site by site with pairs): each held, decided, handed on in order. */
    final class Hosts implements Iterator<InternalRow> {
        private final Iterator<Marked> input;
        private Marked lookahead;
        private Iterator<InternalRow> decided = List.<InternalRow>of().iterator();
        private Held held;

        Hosts(Iterator<Marked> input) {
            this.input = input;
            this.lookahead = input.hasNext() ? input.next() : null;
        }

        @Override
        public boolean hasNext() {
            while (!decided.hasNext()) {
                if (held != null) {
                    held.close();
                    held = null;
                }
                if (lookahead == null) {
                    return false;
                }
                decided = nextGroup();
            }
            return true;
        }

        @Override
        public InternalRow next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return decided.next();
        }

        private boolean sameGroup(UTF8String site, UTF8String host, InternalRow row) {
            return Objects.equals(site, text(row, SITE)) && (pairs.length > 0 || Objects.equals(host, text(row, HOST)));
        }

        /** Reads one host's rows (a site's, with pairs), gathers each host's slot evidence, returns them decided. */
        private Iterator<InternalRow> nextGroup() {
            UTF8String site = text(lookahead.row, SITE);
            UTF8String host = text(lookahead.row, HOST);
            held = new Held();
            Map<UTF8String, Evidence> hosts = new HashMap<>();
            Ranks ranks = new Ranks();
            while (lookahead != null && sameGroup(site, host, lookahead.row)) {
                held.add(lookahead);
                Evidence evidence = hosts.computeIfAbsent(text(lookahead.row, HOST), key -> new Evidence());
                evidence.add(lookahead, ranks.next(lookahead.row));
                lookahead = input.hasNext() ? input.next() : null;
            }
            hosts.values().forEach(Evidence::close);
            Boolean bilingual = pairs.length > 0 ? bilingual(hosts) : null;
            Iterator<Marked> rows = held.iterator();
            Ranks again = new Ranks();
            return new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return rows.hasNext();
                }

                @Override
                public InternalRow next() {
                    Marked row = rows.next();
                    int rank = again.next(row.row);
                    return hosts.get(text(row.row, HOST)).decide(row, rank, bilingual);
                }
            };
        }

        /** Whether the held site has a latest capture in each language of some pair. */
        private boolean bilingual(Map<UTF8String, Evidence> hosts) {
            Set<UTF8String> languages = new HashSet<>();
            Ranks ranks = new Ranks();
            for (Iterator<Marked> rows = held.iterator(); rows.hasNext(); ) {
                Marked row = rows.next();
                if (ranks.next(row.row) == 1) {
                    UTF8String language = hosts.get(text(row.row, HOST)).language(row);
                    if (language != null) {
                        languages.add(language);
                    }
                }
            }
            return Arrays.stream(pairs).anyMatch(pair -> languages.contains(pair[0]) && languages.contains(pair[1]));
        }
    }

    /** capture_rank: 1 for the first row of each host's SURT (its newest capture), then 2, 3... */
    final class Ranks {
        private UTF8String host;
        private UTF8String surt;
        private int rank;
        private boolean started;

        int next(InternalRow row) {
            UTF8String currentHost = text(row, HOST);
            UTF8String currentSurt = text(row, SURT);
            if (started && Objects.equals(surt, currentSurt) && Objects.equals(host, currentHost)) {
                return ++rank;
            }
            started = true;
            host = currentHost;
            surt = currentSurt;
            rank = 1;
            return rank;
        }
    }

    /** A host's slot evidence from its latest captures with a URL language code. */
    final class Evidence {
        /** [slot, code] -> {captures whose CDX languages hold the code, captures}. */
        private final Map<List<UTF8String>, long[]> codes = new HashMap<>();
        /** [slot, sibling key] -> the one code seen, or MANY. */
        private final Map<List<UTF8String>, UTF8String> siblings = new HashMap<>();
        private final Set<UTF8String> confirmedSlots = new HashSet<>();

        void add(Marked marked, int rank) {
            UTF8String code = marked.marker.code;
            if (rank != 1 || code == null) {
                return;
            }
            UTF8String slot = marked.marker.slot;
            long[] counts = codes.computeIfAbsent(Arrays.asList(slot, code), key -> new long[2]);
            if (!marked.row.isNullAt(at[LANGS]) && contains(marked.row.getArray(at[LANGS]), code)) {
                counts[0]++;
            }
            counts[1]++;
            siblings.merge(Arrays.asList(slot, marked.marker.siblingKey), code,
                (seen, same) -> seen.equals(same) ? seen : MANY);
        }

        private static boolean contains(ArrayData languages, UTF8String code) {
            for (int i = 0; i < languages.numElements(); i++) {
                if (!languages.isNullAt(i) && code.equals(languages.getUTF8String(i))) {
                    return true;
                }
            }
            return false;
        }

        /** Once every row is added: the slots where CLD2 confirms some code. */
        void close() {
            codes.forEach((key, counts) -> {
                if (confirmed(counts)) {
                    confirmedSlots.add(key.get(0));
                }
            });
        }

        private boolean confirmed(long[] counts) {
            return counts != null && counts[1] > 0 && 2 * counts[0] >= counts[1];
        }

        /** Whether the row's URL code is its language. */
        private boolean urlValid(Marker marker) {
            if (marker.code == null) {
                return false;
            }
            return confirmed(codes.get(Arrays.asList(marker.slot, marker.code)))
                || (confirmedSlots.contains(marker.slot)
                    && MANY.equals(siblings.get(Arrays.asList(marker.slot, marker.siblingKey))));
        }

        /** The row's language: its URL's code where valid, else CLD2's. */
        UTF8String language(Marked marked) {
            return urlValid(marked.marker) ? marked.marker.code : text(marked.row, CDX_LANG);
        }

        InternalRow decide(Marked marked, int rank, Boolean bilingual) {
            boolean valid = urlValid(marked.marker);
            UTF8String cdxLanguage = text(marked.row, CDX_LANG);
            Object[] added = new Object[bilingual == null ? 3 : 4];
            added[0] = rank;
            added[1] = valid ? marked.marker.code : cdxLanguage;
            added[2] = valid ? URL : cdxLanguage != null ? CDX : null;
            if (bilingual != null) {
                added[3] = bilingual;
            }
            return new JoinedRow(marked.row, new GenericInternalRow(added));
        }
    }
}
