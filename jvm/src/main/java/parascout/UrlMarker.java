package parascout;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF2;

/**
 * Spark SQL UDF {@code (url, code spec) -> (url_marker_slot, url_marker_lang, sibling_key)}: the language code a URL
 * declares and the URL with every code-like token blanked, udfs/index/url_language.py's {@code url_marker} and
 * {@code sibling_key_column} on the JVM.
 *
 * <p>The Spark expressions of the same rules (eight regular expressions per URL) were three quarters of the index
 * scan's CPU; this class reads the URL once per slot with hand-written matchers that accept exactly what those
 * patterns accept, so scan-cdx needs no regular expression per line. The spec is url_language.py's code table as
 * {@code |code:iso639-3|...}, a binary literal parsed once per JVM ({@link SpecCache}).
 */
public final class UrlMarker implements UDF2<String, byte[], Row> {
    private static final long serialVersionUID = 1L;
    /** The struct's fields, in order (udfs/index/url_language.py JVM_MARKER_DDL names the same). */
    public static final String[] FIELDS = {"url_marker_slot", "url_marker_lang", "sibling_key"};
    private static final SpecCache<Map<String, String>> TABLES = new SpecCache<>(UrlMarker::parseTable);
    private static final String[] QUERY_KEYS = {"lang", "language", "locale", "hl", "lng", "lc"};

    @Override
    public Row call(String url, byte[] spec) {
        return RowFactory.create((Object[]) fields(url, TABLES.get(spec)));
    }

    /** The values of {@link #FIELDS} for a URL: its marker's slot and language (null, null where it has none) and
     * its sibling key; all null for a null URL. */
    static String[] fields(String url, Map<String, String> table) {
        if (url == null) {
            return new String[FIELDS.length];
        }
        String lowered = url.toLowerCase(Locale.ROOT);
        String[] marker = marker(lowered, table);
        return new String[] {marker == null ? null : marker[0], marker == null ? null : marker[1],
            siblingKey(lowered)};
    }

    static Map<String, String> parseTable(String spec) {
        Map<String, String> table = new HashMap<>();
        for (String entry : spec.split("\\|")) {
            int colon = entry.indexOf(':');
            if (colon > 0) {
                table.put(entry.substring(0, colon), entry.substring(colon + 1));
            }
        }
        return table;
    }

    /** {slot, language} of the first slot (query, suffix, dirN, tail, host) holding a known code; null if none. */
    static String[] marker(String url, Map<String, String> table) {
        int schemeEnd = schemeEnd(url);
        if (schemeEnd < 0) {
            return null;
        }
        int hostStart = schemeEnd + 3;
        int hostEnd = indexOfAny(url, hostStart, "/?#");
        int pathEnd = indexOfAny(url, hostEnd, "?#");
        String language = language(queryCode(url, pathEnd), table);
        if (language != null) {
            return new String[] {"query", language};
        }
        int fileStart = url.lastIndexOf('/', pathEnd - 1) + 1;
        if (fileStart <= hostEnd) {  // no '/' in the path: the path is its file name
            fileStart = hostEnd;
        }
        String fileName = url.substring(fileStart, pathEnd);
        language = language(suffixCode(fileName), table);
        if (language != null) {
            return new String[] {"suffix", language};
        }
        String[] directory = directoryCode(url, hostEnd, fileStart, table);
        if (directory != null) {
            return directory;
        }
        language = language(tailCode(fileName), table);
        if (language != null) {
            return new String[] {"tail", language};
        }
        language = language(hostCode(url.substring(hostStart, hostEnd)), table);
        return language == null ? null : new String[] {"host", language};
    }

    /** Index of "://" after a scheme ({@code [A-Za-z][A-Za-z0-9+.-]*}), -1 when the URL has none. */
    static int schemeEnd(String url) {
        if (url.isEmpty() || !isLetter(url.charAt(0))) {
            return -1;
        }
        for (int i = 1; i < url.length(); i++) {
            char c = url.charAt(i);
            if (c == ':') {
                return url.startsWith("://", i) ? i : -1;
            }
            if (!(isLetter(c) || isDigit(c) || c == '+' || c == '.' || c == '-')) {
                return -1;
            }
        }
        return -1;
    }

    private static int indexOfAny(String text, int from, String characters) {
        for (int i = from; i < text.length(); i++) {
            if (characters.indexOf(text.charAt(i)) >= 0) {
                return i;
            }
        }
        return text.length();
    }

    /** The language of a code as a URL writes it (fr, fr-ca, fr_fr, fra): its base's entry in the table. */
    static String language(String code, Map<String, String> table) {
        if (code == null || code.isEmpty()) {
            return null;
        }
        int end = 0;
        while (end < code.length() && code.charAt(end) != '-' && code.charAt(end) != '_') {
            end++;
        }
        return end == 0 ? null : table.get(code.substring(0, end));
    }

    /** Is text[start, end) a whole code: 2-3 letters, optionally [-_] and 2-4 letters or digits? */
    static boolean isCode(String text, int start, int end) {
        int letters = 0;
        while (start + letters < end && letters < 3 && isLetter(text.charAt(start + letters))) {
            letters++;
        }
        if (letters < 2) {
            return false;
        }
        int rest = start + letters;
        if (rest == end) {
            return true;
        }
        char separator = text.charAt(rest);
        int region = end - rest - 1;
        if ((separator != '-' && separator != '_') || region < 2 || region > 4) {
            return false;
        }
        for (int i = rest + 1; i < end; i++) {
            if (!isLetter(text.charAt(i)) && !isDigit(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /** QUERY_PATTERN's first match after the path: {@code [?&](lang|...)=(CODE)} followed by [&#] or the end. */
    static String queryCode(String url, int from) {
        for (int i = from; i < url.length(); i++) {
            char c = url.charAt(i);
            if (c != '?' && c != '&') {
                continue;
            }
            for (String key : QUERY_KEYS) {
                int valueStart = i + 1 + key.length() + 1;
                if (url.startsWith(key, i + 1) && valueStart <= url.length() && url.charAt(valueStart - 1) == '=') {
                    int valueEnd = indexOfAny(url, valueStart, "&#");  // the code must reach [&#] or the end
                    if (isCode(url, valueStart, valueEnd)) {
                        return url.substring(valueStart, valueEnd);
                    }
                }
            }
        }
        return null;
    }

    /** SUFFIX_PATTERN: page.fr.html (code between the last two dots, extension 2-5 [a-z0-9]) or page.html.fr. */
    static String suffixCode(String name) {
        int last = name.lastIndexOf('.');
        if (last < 0 || name.isEmpty() || name.charAt(0) == '.') {
            return null;
        }
        int second = name.lastIndexOf('.', last - 1);
        if (second > 0 && isExtension(name, last + 1, name.length()) && isCode(name, second + 1, last)) {
            return name.substring(second + 1, last);
        }
        int first = name.indexOf('.');
        if (first > 0 && first < last) {
            String rest = name.substring(first + 1, last);
            if ((rest.equals("html") || rest.equals("htm")) && isCode(name, last + 1, name.length())) {
                return name.substring(last + 1);
            }
        }
        return null;
    }

    private static boolean isExtension(String text, int start, int end) {
        if (end - start < 2 || end - start > 5) {
            return false;
        }
        for (int i = start; i < end; i++) {
            if (!isLetter(text.charAt(i)) && !isDigit(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /** TAIL_PATTERN's leftmost match: [-_](CODE).ext at the end of the file name (page_fr.html, page-en-us.htm). */
    static String tailCode(String name) {
        int last = name.lastIndexOf('.');
        if (last < 0 || !isExtension(name, last + 1, name.length())) {
            return null;
        }
        int previousDot = name.lastIndexOf('.', last - 1);
        for (int i = previousDot + 1; i < last; i++) {
            char c = name.charAt(i);
            if ((c == '-' || c == '_') && isCode(name, i + 1, last)) {
                return name.substring(i + 1, last);
            }
        }
        return null;
    }

    /** HOST_PATTERN: a code as the first of at least three labels (fr.example.com). */
    static String hostCode(String host) {
        int dot = host.indexOf('.');
        if (dot < 0 || !isCode(host, 0, dot)) {
            return null;
        }
        int next = host.indexOf('.', dot + 1);
        boolean labelsFollow = next > dot + 1 && next + 1 < host.length() && host.charAt(next + 1) != '.';
        return labelsFollow ? host.substring(0, dot) : null;
    }

    /** {dirN, language} of the first directory that is a whole known code, null when none is. */
    static String[] directoryCode(String url, int pathStart, int fileStart, Map<String, String> table) {
        int number = 0;
        int start = pathStart + 1;  // after the path's leading '/'
        while (start < fileStart) {
            int end = url.indexOf('/', start);
            number++;
            if (isCode(url, start, end)) {
                String language = language(url.substring(start, end), table);
                if (language != null) {
                    return new String[] {"dir" + number, language};
                }
            }
            start = end + 1;
        }
        return null;
    }

    /** CODE_TOKEN replaced by "$1*": every code-like token after a delimiter (or at the start) and before one. */
    static String siblingKey(String url) {
        StringBuilder out = null;
        int copied = 0;
        int i = 0;
        while (i < url.length()) {
            int tokenStart = -1;
            if (i == 0 && codeTokenEnd(url, 0) > 0) {
                tokenStart = 0;
            } else if (isDelimiter(url.charAt(i))) {
                tokenStart = i + 1;
            }
            int end = tokenStart < 0 ? -1 : codeTokenEnd(url, tokenStart);
            if (end < 0) {
                i++;
                continue;
            }
            if (out == null) {
                out = new StringBuilder(url.length());
            }
            out.append(url, copied, tokenStart).append('*');
            copied = end;
            i = end;
        }
        return out == null ? url : out.append(url, copied, url.length()).toString();
    }

    /** End of a code token starting at `start` (regex priority: 3 letters before 2, a region before none, the
     * longest region first) followed by one of /._&#- or the end; -1 when there is none. */
    private static int codeTokenEnd(String text, int start) {
        for (int letters = 3; letters >= 2; letters--) {
            int rest = start + letters;
            if (rest > text.length() || !allLetters(text, start, rest)) {
                continue;
            }
            if (rest < text.length() && (text.charAt(rest) == '-' || text.charAt(rest) == '_')) {
                for (int region = 4; region >= 2; region--) {
                    int end = rest + 1 + region;
                    if (end <= text.length() && allAlphanumeric(text, rest + 1, end) && followedByDelimiter(text, end)) {
                        return end;
                    }
                }
            }
            if (followedByDelimiter(text, rest)) {
                return rest;
            }
        }
        return -1;
    }

    private static boolean followedByDelimiter(String text, int position) {
        return position == text.length() || "/._&#-".indexOf(text.charAt(position)) >= 0;
    }

    private static boolean isDelimiter(char c) {
        return c == '/' || c == '.' || c == '_' || c == '=' || c == '-';
    }

    private static boolean allLetters(String text, int start, int end) {
        for (int i = start; i < end; i++) {
            if (!isLetter(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean allAlphanumeric(String text, int start, int end) {
        for (int i = start; i < end; i++) {
            if (!isLetter(text.charAt(i)) && !isDigit(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean isLetter(char c) {
        return c >= 'a' && c <= 'z';
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}
