package parascout;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Locale;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF6;

/**
 * Spark SQL UDF {@code (line bytes, read_status, max_url_chars, first_year, last_year, cdx_crawl) -> capture record}:
 * one CommonCrawl CDX line ({@code SURT TIMESTAMP {json}}) parsed in one pass, the JVM twin of
 * udfs/index/cdx_records.py's {@code parse_cdx_lines_sql}.
 *
 * <p>Splitting the line, a {@code json_tuple} and a dozen field expressions cost Spark ~6 CPU-seconds per
 * million lines; this hand-written scanner reads the flat JSON object once and fills every field and the
 * bad-input reason. The record is a struct of {@link #FIELDS} (fetch time as epoch microseconds, UTC);
 * {@code reason} is the first bad-input reason by udfs/index/cdx_records.py's order, null for a good record, and a
 * bad record carries its reason only. {@code cdx_crawl} is the crawl the line's CDX file path names (null when it
 * names none); the record's crawl is cdx_records.py's {@code record_crawl}.
 */
public final class CdxLine implements UDF6<byte[], String, Integer, Integer, Integer, String, Row> {
    private static final long serialVersionUID = 1L;
    /** The struct's fields, in order (udfs/index/cdx_records.py JVM_RECORD_DDL names the same). */
    public static final String[] FIELDS = {"url", "surt", "host", "status", "mime", "digest", "fetch_micros",
        "warc_filename", "warc_offset", "warc_length", "crawl", "record_type", "redirect", "charset", "truncated",
        "languages", "reason"};
    private static final int URL = 0, MIME = 1, MIME_DETECTED = 2, STATUS = 3, DIGEST = 4, LENGTH = 5,
        OFFSET = 6, FILENAME = 7, CHARSET = 8, ENCODING = 9, LANGUAGES = 10, REDIRECT = 11, TRUNCATED = 12,
        CRAWL = 13, KEYS = 14;
    /** The CDX JSON keys by their index above: the names JsonObject matches. */
    private static final String[] KEY_NAMES = {"url", "mime", "mime-detected", "status", "digest", "length", "offset",
        "filename", "charset", "encoding", "languages", "redirect", "truncated", "crawl"};
    private static final ThreadLocal<CharsetDecoder> UTF8 = ThreadLocal.withInitial(
        () -> StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT));

    @Override
    public Row call(byte[] line, String readStatus, Integer maxUrlChars, Integer firstYear, Integer lastYear,
                    String cdxCrawl) {
        return RowFactory.create(parse(line, readStatus, maxUrlChars, firstYear, lastYear, cdxCrawl));
    }

    /**
     * The record of one line as the values of {@link #FIELDS} (Java types: String, Integer, Long; the fetch time in
     * epoch microseconds): what {@link #call} returns as a struct and {@link CdxFileReader#records} as a row.
     */
    static Object[] parse(byte[] line, String readStatus, int maxUrlChars, int firstYear, int lastYear,
                          String cdxCrawl) {
        if (readStatus != null) {
            return bad(readStatus);
        }
        String text = line == null ? null : decode(line);
        if (line != null && text == null) {
            return bad("non_utf8");
        }
        int firstSpace = text == null ? -1 : text.indexOf(' ');
        int secondSpace = firstSpace < 0 ? -1 : text.indexOf(' ', firstSpace + 1);
        if (secondSpace < 0 || firstSpace == 0 || secondSpace + 1 >= text.length()
                || text.charAt(secondSpace + 1) != '{') {
            return bad("malformed_line");
        }
        long micros = utcMicros(text, firstSpace + 1, secondSpace, firstYear, lastYear);
        if (micros == Long.MIN_VALUE) {
            return bad("malformed_line");
        }
        String[] json = new String[KEYS];
        if (!new JsonObject(text, secondSpace + 1).fields(json) || allNull(json)) {
            return bad("bad_json");
        }
        String url = json[URL];
        if (url == null || url.isEmpty()) {
            return bad("missing_url");
        }
        if (url.length() > maxUrlChars && url.codePointCount(0, url.length()) > maxUrlChars) {
            return bad("url_too_long");
        }
        if (hasControlCharacter(url)) {
            return bad("control_characters");
        }
        String host = urlHost(url);
        if (host.isEmpty()) {
            return bad("bad_url");
        }
        Long parsedStatus = count(json[STATUS]);
        Integer status = parsedStatus != null && parsedStatus >= 100 && parsedStatus <= 599
            ? parsedStatus.intValue() : null;
        boolean revisit = isRevisit(json[MIME]) || isRevisit(json[MIME_DETECTED]);
        String recordType = revisit ? "revisit"
            : status != null && status >= 300 && status <= 399 ? "redirect" : "response";
        if (!revisit && status == null) {
            return bad("missing_status");
        }
        Long offset = count(json[OFFSET]);
        Long length = count(json[LENGTH]);
        String filename = json[FILENAME];
        if (filename == null || offset == null || length == null) {
            return bad("missing_location");
        }
        String mime = json[MIME_DETECTED] != null ? json[MIME_DETECTED] : json[MIME];
        String charset = json[CHARSET] != null ? json[CHARSET] : json[ENCODING];
        return new Object[] {url, text.substring(0, firstSpace), host, status, mime == null ? null : mimeType(mime),
            json[DIGEST], micros, filename, offset, length, crawl(filename, cdxCrawl, json[CRAWL]), recordType,
            json[REDIRECT], charset, json[TRUNCATED], json[LANGUAGES], null};
    }

    /** Does the text hold a C0 control character or DEL (udfs/common/urls.py CONTROL_CHARACTERS)? */
    static boolean hasControlCharacter(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                return true;
            }
        }
        return false;
    }

    private static Object[] bad(String reason) {
        Object[] values = new Object[FIELDS.length];
        values[FIELDS.length - 1] = reason;
        return values;
    }

    private static boolean allNull(String[] values) {
        for (String value : values) {
            if (value != null) {
                return false;
            }
        }
        return true;
    }

    /** The line as a String, null when it is not valid UTF-8 (an all-ASCII line is copied, not decoded). */
    static String decode(byte[] bytes) {
        boolean ascii = true;
        for (byte b : bytes) {
            if (b < 0) {
                ascii = false;
                break;
            }
        }
        if (ascii) {
            return new String(bytes, StandardCharsets.ISO_8859_1);
        }
        try {
            CharBuffer chars = UTF8.get().reset().decode(ByteBuffer.wrap(bytes));
            return chars.toString();
        } catch (CharacterCodingException error) {
            return null;
        }
    }

    /** 'YYYYMMDDhhmmss' at text[start, end) -> epoch microseconds UTC; Long.MIN_VALUE when it is not a date
     * of a year in [firstYear, lastYear] (Spark's make_timestamp: a second of 60 is the next minute). */
    static long utcMicros(String text, int start, int end, int firstYear, int lastYear) {
        if (end - start != 14) {
            return Long.MIN_VALUE;
        }
        int[] parts = new int[6];
        int[] widths = {4, 2, 2, 2, 2, 2};
        int position = start;
        for (int part = 0; part < 6; part++) {
            int value = 0;
            for (int i = 0; i < widths[part]; i++) {
                char c = text.charAt(position++);
                if (c < '0' || c > '9') {
                    return Long.MIN_VALUE;
                }
                value = value * 10 + (c - '0');
            }
            parts[part] = value;
        }
        if (parts[0] < firstYear || parts[0] > lastYear) {
            return Long.MIN_VALUE;
        }
        try {
            LocalDateTime time;
            if (parts[5] == 60) {
                time = LocalDateTime.of(parts[0], parts[1], parts[2], parts[3], parts[4], 0).plusMinutes(1);
            } else {
                time = LocalDateTime.of(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]);
            }
            return time.toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
        } catch (DateTimeException error) {
            return Long.MIN_VALUE;
        }
    }

    /** A non-negative integer ("1234", spaces around and a sign allowed, as Spark's cast: "-0" is 0), else null. */
    static Long count(String text) {
        if (text == null) {
            return null;
        }
        int start = 0;
        int end = text.length();
        while (start < end && text.charAt(start) <= ' ') {
            start++;
        }
        while (end > start && text.charAt(end - 1) <= ' ') {
            end--;
        }
        boolean negative = start < end && text.charAt(start) == '-';
        if (start < end && (negative || text.charAt(start) == '+')) {
            start++;
        }
        if (start == end || end - start > 18) {
            return null;
        }
        long value = 0;
        for (int i = start; i < end; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return null;
            }
            value = value * 10 + (c - '0');
        }
        return negative && value != 0 ? null : value;
    }

    /** Whether a MIME type lower-cases to 'warc/revisit' (only ASCII letters lower-case to its letters). */
    static boolean isRevisit(String mime) {
        String revisit = "warc/revisit";
        if (mime == null || mime.length() != revisit.length()) {
            return false;
        }
        for (int i = 0; i < revisit.length(); i++) {
            char c = mime.charAt(i);
            if (c != revisit.charAt(i) && !(c >= 'A' && c <= 'Z' && c + ('a' - 'A') == revisit.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /** 'Text/HTML; charset=utf-8' -> 'text/html' (spaces trimmed, as Spark's trim). */
    static String mimeType(String mime) {
        int end = mime.indexOf(';');
        end = end < 0 ? mime.length() : end;
        int start = 0;
        while (start < end && mime.charAt(start) == ' ') {
            start++;
        }
        while (end > start && mime.charAt(end - 1) == ' ') {
            end--;
        }
        return mime.substring(start, end).toLowerCase(Locale.ROOT);
    }

    /** Lower-cased host of a URL ('' when it has no '://' after a scheme), udfs/index/cdx_records.py url_host. */
    static String urlHost(String url) {
        int schemeEnd = url.indexOf("://");
        if (schemeEnd < 1) {
            return "";
        }
        int start = schemeEnd + 3;
        int end = url.length();
        for (int i = start; i < end; i++) {
            char c = url.charAt(i);
            if (c == '/' || c == '?' || c == '#') {
                end = i;
                break;
            }
        }
        int at = url.lastIndexOf('@', end - 1);
        if (at >= start) {
            start = at + 1;
        }
        int colon = url.indexOf(':', start);
        if (colon >= 0 && colon < end) {
            end = colon;
        }
        String host = url.substring(start, end).toLowerCase(Locale.ROOT);
        int trimmed = host.length();
        while (trimmed > 0 && host.charAt(trimmed - 1) == '.') {
            trimmed--;
        }
        return trimmed == host.length() ? host : host.substring(0, trimmed);
    }

    /** The first crawl name that exists: the WARC filename's, the CDX file path's, the line's `crawl` key's
     * (udfs/index/cdx_records.py record_crawl). */
    static String crawl(String filename, String cdxCrawl, String crawlKey) {
        String named = warcCrawl(filename);
        if (named != null) {
            return named;
        }
        if (cdxCrawl != null) {
            return cdxCrawl;
        }
        return crawlKey == null || crawlKey.isEmpty() ? null : crawlKey;
    }

    /** 'crawl-data/CC-MAIN-2024-33/segments/...' -> 'CC-MAIN-2024-33'; null for other names. */
    static String warcCrawl(String filename) {
        if (!filename.startsWith("crawl-data/")) {
            return null;
        }
        int start = "crawl-data/".length();
        int end = filename.indexOf('/', start);
        return filename.substring(start, end < 0 ? filename.length() : end);
    }

    /** The top-level fields of one flat JSON object that a CDX line carries; what follows the object is
     * ignored, as Spark's json_tuple does. Strings are unescaped; numbers, booleans and nested values come back
     * as their JSON text; null as null. */
    static final class JsonObject {
        private final String text;
        private int position;
        /** Where the next backslash at or after position sits (text.length() when none): a string that closes
         * before it has no escape, and its closing quote is found by one indexOf (most lines hold no backslash). */
        private int nextEscape = -1;

        JsonObject(String text, int start) {
            this.text = text;
            this.position = start;
        }

        /** The closing quote of the string from position when the string holds no escape, else -1. */
        private int plainStringEnd() {
            if (nextEscape < position) {
                nextEscape = text.indexOf('\\', position);
                if (nextEscape < 0) {
                    nextEscape = text.length();
                }
            }
            int quote = text.indexOf('"', position);
            if (quote < 0) {
                throw new IndexOutOfBoundsException("an unterminated string");
            }
            return quote < nextEscape ? quote : -1;
        }

        /** Fills values[key index] for the CDX keys; false when the text is not a JSON object. */
        boolean fields(String[] values) {
            try {
                expect('{');
                skipSpace();
                if (peek() == '}') {
                    return true;
                }
                while (true) {
                    skipSpace();
                    expect('"');
                    int key = key();
                    skipSpace();
                    expect(':');
                    skipSpace();
                    String value = value();
                    if (key >= 0) {  // a repeated key: the last value, as json_tuple and Python's json read it
                        values[key] = value;
                    }
                    skipSpace();
                    char next = next();
                    if (next == '}') {
                        return true;
                    }
                    if (next != ',') {
                        return false;
                    }
                }
            } catch (IndexOutOfBoundsException | IllegalArgumentException error) {
                clear(values);
                return false;
            }
        }

        private static void clear(String[] values) {
            java.util.Arrays.fill(values, null);
        }

        /** The key index of the string whose opening quote was read (-1: not a CDX key), compared in place: a
         * key without escapes is not copied out of the line (most lines hold a dozen keys). */
        private int key() {
            int start = position;
            int end = plainStringEnd();
            if (end < 0) {
                return keyIndex(string());
            }
            position = end + 1;
            int index = switch (end - start) {  // the one key of this length and first letter, if any
                case 3 -> URL;
                case 4 -> MIME;
                case 5 -> CRAWL;
                case 6 -> switch (text.charAt(start)) {
                    case 's' -> STATUS;
                    case 'd' -> DIGEST;
                    case 'l' -> LENGTH;
                    case 'o' -> OFFSET;
                    default -> -1;
                };
                case 7 -> CHARSET;
                case 8 -> switch (text.charAt(start)) {
                    case 'f' -> FILENAME;
                    case 'e' -> ENCODING;
                    case 'r' -> REDIRECT;
                    default -> -1;
                };
                case 9 -> text.charAt(start) == 'l' ? LANGUAGES : TRUNCATED;
                case 13 -> MIME_DETECTED;
                default -> -1;
            };
            return index >= 0 && text.startsWith(KEY_NAMES[index], start) ? index : -1;
        }

        /** The index of a key decoded from its escapes (KEY_NAMES), -1 when it is not a CDX key. */
        private static int keyIndex(String key) {
            return java.util.Arrays.asList(KEY_NAMES).indexOf(key);
        }

        private String value() {
            char c = peek();
            if (c == '"') {
                position++;
                return string();
            }
            int start = position;
            if (c == '{' || c == '[') {
                skipNested();
                return text.substring(start, position);
            }
            while (position < text.length() && ",}] \t\r\n".indexOf(text.charAt(position)) < 0) {
                position++;
            }
            String token = text.substring(start, position);
            if (token.equals("null")) {
                return null;
            }
            if (!token.equals("true") && !token.equals("false") && !isNumber(token)) {
                throw new IllegalArgumentException("not a JSON value: " + token);
            }
            return token;
        }

        /** The rest of a string whose opening quote was read; escapes decoded. */
        private String string() {
            int start = position;
            int end = plainStringEnd();
            if (end >= 0) {
                position = end + 1;
                return text.substring(start, end);
            }
            while (true) {  // up to the first escape
                char c = text.charAt(position);
                if (c == '"') {
                    return text.substring(start, position++);
                }
                if (c == '\\') {
                    break;
                }
                position++;
            }
            StringBuilder out = new StringBuilder(text.length() - start).append(text, start, position);
            while (true) {
                char c = text.charAt(position++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char escape = text.charAt(position++);
                switch (escape) {
                    case '"': case '\\': case '/': out.append(escape); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'n': out.append('\n'); break;
                    case 'r': out.append('\r'); break;
                    case 't': out.append('\t'); break;
                    case 'u':
                        out.append((char) Integer.parseInt(text.substring(position, position + 4), 16));
                        position += 4;
                        break;
                    default: throw new IllegalArgumentException("bad escape \\" + escape);
                }
            }
        }

        private void skipNested() {
            int depth = 0;
            do {
                char c = text.charAt(position++);
                if (c == '"') {
                    string();
                } else if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    depth--;
                }
            } while (depth > 0);
        }

        private static boolean isNumber(String token) {
            int i = token.startsWith("-") ? 1 : 0;
            int digits = 0;
            boolean dot = false;
            boolean exponent = false;
            for (; i < token.length(); i++) {
                char c = token.charAt(i);
                if (c >= '0' && c <= '9') {
                    digits++;
                } else if (c == '.' && !dot && !exponent && digits > 0) {
                    dot = true;
                } else if ((c == 'e' || c == 'E') && !exponent && digits > 0) {
                    exponent = true;
                    if (i + 1 < token.length() && (token.charAt(i + 1) == '+' || token.charAt(i + 1) == '-')) {
                        i++;
                    }
                } else {
                    return false;
                }
            }
            return digits > 0;
        }

        private char peek() {
            return text.charAt(position);
        }

        private char next() {
            return text.charAt(position++);
        }

        private void expect(char wanted) {
            if (text.charAt(position++) != wanted) {
                throw new IllegalArgumentException("expected " + wanted);
            }
        }

        private void skipSpace() {
            while (position < text.length()) {
                char c = text.charAt(position);
                if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
                    return;
                }
                position++;
            }
        }
    }
}
