package parascout;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
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
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * scan-cdx's latest capture and URL-declared language per host in one pass over rows laid out by site and sorted by
 * {@code (site_name, host, surt, fetch_time DESC, warc_filename DESC, warc_offset DESC)}: the JVM twin of
 * udfs/index/cdx_records.py's {@code with_url_languages} windows, which sort the wide rows three more times.
 *
 * <p>Adds {@code capture_rank} (the row's place among its URL's captures, newest first), {@code lang} and
 * {@code lang_source}, and with language pairs {@code site_bilingual} (the site holds a latest capture in both
 * languages of a pair: with_site_bilingual's window), and keeps the input order. Among a host's latest captures, a
 * code in a slot is the page's language when CLD2 (the row's {@code langs}) names it on at least half the pages
 * carrying that code there, or when the page has a sibling (same {@code sibling_key}, another code in the slot) and
 * CLD2 confirms some code of the slot; else {@code lang} is {@code cdx_lang}. A host's rows (a site's, with pairs)
 * are held until its last one is read: past {@code maxHeldRows} they go to a local spill file, so a host or site of
 * any size fits.
 */
public final class UrlLanguagePass implements MapPartitionsFunction<Row, Row> {
    private static final long serialVersionUID = 1L;
    /** The columns the pass reads. */
    static final String[] INPUTS = {"site_name", "host", "surt", "url_marker_slot", "url_marker_lang", "sibling_key",
        "langs", "cdx_lang"};
    private static final String MANY = "\u0000many";

    private final int[] at;
    private final int width;
    private final int maxHeldRows;
    /** The language pairs, {source, target} each; empty: no site_bilingual column, rows held per host. */
    private final String[][] pairs;

    UrlLanguagePass(StructType schema, int maxHeldRows, String[][] pairs) {
        at = Arrays.stream(INPUTS).mapToInt(schema::fieldIndex).toArray();
        width = schema.size();
        this.maxHeldRows = maxHeldRows;
        this.pairs = pairs;
    }

    /**
     * {@code sorted} (see the class) with capture_rank, lang and lang_source added, and site_bilingual where
     * {@code pairs} names language pairs ({@code "eng fra;eng isl"}, the languages as {@code lang} writes them).
     */
    public static Dataset<Row> apply(Dataset<Row> sorted, int maxHeldRows, String pairs) {
        String[][] parsed = Arrays.stream(pairs.split(";")).filter(pair -> !pair.isBlank())
            .map(pair -> pair.trim().split(" ")).toArray(String[][]::new);
        StructType out = sorted.schema().add("capture_rank", DataTypes.IntegerType, false)
            .add("lang", DataTypes.StringType).add("lang_source", DataTypes.StringType);
        if (parsed.length > 0) {
            out = out.add("site_bilingual", DataTypes.BooleanType, false);
        }
        return sorted.mapPartitions(new UrlLanguagePass(sorted.schema(), maxHeldRows, parsed), Encoders.row(out));
    }

    @Override
    public Iterator<Row> call(Iterator<Row> rows) {
        return new Hosts(rows);
    }

    /** The rows of one host (site), held in memory up to maxHeldRows, the rest in a spill file. */
    final class Held implements AutoCloseable {
        final List<Row> rows = new ArrayList<>();
        private File spill;
        private ObjectOutputStream spilled;
        long count;

        void add(Row row) {
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
                Object[] values = new Object[width];
                for (int i = 0; i < width; i++) {
                    values[i] = row.get(i);
                }
                spilled.writeObject(values);
                if (count % 1024 == 0) {
                    spilled.reset();  // the stream's handle table would otherwise keep every row
                }
            } catch (IOException error) {
                throw new UncheckedIOException("scan-cdx: cannot spill a host's rows to " + spill, error);
            }
        }

        /** The held rows in the order they were added; each call reads the spill file again. */
        Iterator<Row> iterator() {
            Iterator<Row> inMemory = rows.iterator();
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
                    public Row next() {
                        if (inMemory.hasNext()) {
                            return inMemory.next();
                        }
                        if (read >= onDisk) {
                            throw new NoSuchElementException();
                        }
                        try {
                            Object[] values = (Object[]) in.readObject();
                            if (++read == onDisk) {
                                in.close();
                            }
                            return RowFactory.create(values);
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

    /** The rows of a partition host by host (site by site with pairs): each held, decided, handed on in order. */
    final class Hosts implements Iterator<Row> {
        private final Iterator<Row> input;
        private Row lookahead;
        private Iterator<Row> decided = List.<Row>of().iterator();
        private Held held;

        Hosts(Iterator<Row> input) {
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
        public Row next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return decided.next();
        }

        private boolean sameGroup(Object site, Object host, Row row) {
            return Objects.equals(site, row.get(at[0])) && (pairs.length > 0 || Objects.equals(host, row.get(at[1])));
        }

        /** Reads one host's rows (a site's, with pairs), gathers each host's slot evidence, returns them decided. */
        private Iterator<Row> nextGroup() {
            Object site = lookahead.get(at[0]);
            Object host = lookahead.get(at[1]);
            held = new Held();
            Map<Object, Evidence> hosts = new HashMap<>();
            Ranks ranks = new Ranks();
            while (lookahead != null && sameGroup(site, host, lookahead)) {
                held.add(lookahead);
                Evidence evidence = hosts.computeIfAbsent(lookahead.get(at[1]), key -> new Evidence());
                evidence.add(lookahead, ranks.next(lookahead));
                lookahead = input.hasNext() ? input.next() : null;
            }
            hosts.values().forEach(Evidence::close);
            Boolean bilingual = pairs.length > 0 ? bilingual(hosts) : null;
            Iterator<Row> rows = held.iterator();
            Ranks again = new Ranks();
            return new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return rows.hasNext();
                }

                @Override
                public Row next() {
                    Row row = rows.next();
                    int rank = again.next(row);
                    return hosts.get(row.get(at[1])).decide(row, rank, bilingual);
                }
            };
        }

        /** Whether the held site has a latest capture in each language of some pair. */
        private boolean bilingual(Map<Object, Evidence> hosts) {
            Set<String> languages = new HashSet<>();
            Ranks ranks = new Ranks();
            for (Iterator<Row> rows = held.iterator(); rows.hasNext(); ) {
                Row row = rows.next();
                if (ranks.next(row) == 1) {
                    String language = hosts.get(row.get(at[1])).language(row);
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
        private Object host;
        private Object surt;
        private int rank;
        private boolean started;

        int next(Row row) {
            Object currentHost = row.get(at[1]);
            Object currentSurt = row.get(at[2]);
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
        private final Map<List<Object>, long[]> codes = new HashMap<>();
        /** [slot, sibling key] -> the one code seen, or MANY. */
        private final Map<List<Object>, String> siblings = new HashMap<>();
        private final Set<Object> confirmedSlots = new HashSet<>();

        void add(Row row, int rank) {
            String code = row.getString(at[4]);
            if (rank != 1 || code == null) {
                return;
            }
            Object slot = row.get(at[3]);
            long[] counts = codes.computeIfAbsent(Arrays.asList(slot, code), key -> new long[2]);
            if (!row.isNullAt(at[6]) && row.getList(at[6]).contains(code)) {
                counts[0]++;
            }
            counts[1]++;
            siblings.merge(Arrays.asList(slot, row.get(at[5])), code, (seen, same) -> seen.equals(same) ? seen : MANY);
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
        private boolean urlValid(Row row) {
            String code = row.getString(at[4]);
            if (code == null) {
                return false;
            }
            Object slot = row.get(at[3]);
            return confirmed(codes.get(Arrays.asList(slot, code)))
                || (confirmedSlots.contains(slot) && MANY.equals(siblings.get(Arrays.asList(slot, row.get(at[5])))));
        }

        /** The row's language: its URL's code where valid, else CLD2's. */
        String language(Row row) {
            return urlValid(row) ? row.getString(at[4]) : row.getString(at[7]);
        }

        Row decide(Row row, int rank, Boolean bilingual) {
            boolean valid = urlValid(row);
            String cdxLanguage = row.getString(at[7]);
            Object[] values = new Object[width + (bilingual == null ? 3 : 4)];
            for (int i = 0; i < width; i++) {
                values[i] = row.get(i);
            }
            values[width] = rank;
            values[width + 1] = valid ? row.getString(at[4]) : cdxLanguage;
            values[width + 2] = valid ? "url" : cdxLanguage != null ? "cdx" : null;
            if (bilingual != null) {
                values[width + 3] = bilingual;
            }
            return RowFactory.create(values);
        }
    }
}
