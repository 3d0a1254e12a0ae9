package parascout;

import java.util.Arrays;
import java.util.Locale;

/**
 * The STRAND handle of a URL, exactly as udfs/rank/handles.py's {@code HandleStripper.handle} computes it, by a
 * char scan over three tries instead of the regex {@code lss_pattern}: at each delimiter the alternatives are
 * tried in the regex's order (a '#' and the rest; a language key with its value; {@code key=<LSS>}; an LSS),
 * each trie walked longest word first, as the regex's backtracking would; a removal resumes the scan right
 * after it, and lookaheads read the unmodified body, as {@code re.sub} does. Lower-casing is Java's (ROOT
 * locale): it differs from Python's only for letters whose case the two Unicode versions disagree on.
 */
final class HandleStripper {
    /** Separates the three word lists of a spec: substrings, query keys, language keys. */
    static final char LIST_SEPARATOR = '\u001e';
    /** Separates the words inside a list. */
    static final char WORD_SEPARATOR = '\u001f';

    private static final boolean[] DELIMITER = asciiSet("/._-?&=#;,:+~");
    private static final boolean[] VALUE_END = asciiSet("/&;#");

    private final Node substrings = new Node();
    private final Node queryKeys = new Node();
    private final Node languageKeys = new Node();

    /** A stripper from a spec: udfs/rank/handles.py's {@code jvm_spec}, three lists of words. */
    static HandleStripper parse(String spec) {
        String[] lists = spec.split(String.valueOf(LIST_SEPARATOR), -1);
        if (lists.length != 3) {
            throw new IllegalArgumentException("a handle spec has 3 word lists, this one " + lists.length);
        }
        HandleStripper stripper = new HandleStripper();
        stripper.substrings.addAll(lists[0]);
        stripper.queryKeys.addAll(lists[1]);
        stripper.languageKeys.addAll(lists[2]);
        return stripper;
    }

    /** Lower-cased, from the '/' before the host, '?' as '&', LSS tokens removed, first char dropped. */
    String handle(String url) {
        String lowered = url.toLowerCase(Locale.ROOT);
        int scheme = lowered.indexOf("://");
        int start = scheme >= 0 ? scheme + 2 : lowered.isEmpty() ? 0 : lowered.offsetByCodePoints(0, 1);
        int n = lowered.length() - start;
        char[] body = new char[n];
        lowered.getChars(start, lowered.length(), body, 0);
        for (int i = 0; i < n; i++) {
            if (body[i] == '?') {
                body[i] = '&';
            }
        }
        int length = strip(body, n);
        int first = length == 0 ? 0 : Character.offsetByCodePoints(body, 0, length, 0, 1);  // Python's [1:]
        return new String(body, first, length - first);
    }

    /** Removes every match in place (kept text moves left, reads stay ahead of writes); the new length. */
    private int strip(char[] body, int n) {
        int written = 0;
        int kept = 0;
        int at = 0;
        while (at < n) {
            int end = isDelimiter(body[at]) ? matchEnd(body, at, n) : -1;
            if (end < 0) {
                at++;
                continue;
            }
            System.arraycopy(body, kept, body, written, at - kept);
            written += at - kept;
            kept = end;
            at = end;
        }
        System.arraycopy(body, kept, body, written, n - kept);
        return written + n - kept;
    }

    /** Where the match starting at the delimiter body[at] ends, -1 when none starts there. */
    private int matchEnd(char[] body, int at, int n) {
        if (body[at] == '#') {
            return n;
        }
        int end = languageKeyEnd(body, at + 1, n);
        if (end < 0) {
            end = queryKeyEnd(body, at + 1, n);
        }
        return end >= 0 ? end : substringEnd(body, at + 1, n);
    }

    /** {@code <language key>=[^/&;#]*}: the longest key followed by '=' wins, its value runs to /&;# or the end. */
    private int languageKeyEnd(char[] body, int at, int n) {
        int keyEnd = -1;
        Node node = languageKeys;
        for (int i = at; i < n && (node = node.child(body[i])) != null; i++) {
            if (node.terminal && i + 1 < n && body[i + 1] == '=') {
                keyEnd = i + 1;
            }
        }
        if (keyEnd < 0) {
            return -1;
        }
        int end = keyEnd + 1;
        while (end < n && !(body[end] < 128 && VALUE_END[body[end]])) {
            end++;
        }
        return end;
    }

    /** {@code <query key>=<LSS>} followed by a delimiter or the end: the longest key with such a value wins. */
    private int queryKeyEnd(char[] body, int at, int n) {
        int end = -1;
        Node node = queryKeys;
        for (int i = at; i < n && (node = node.child(body[i])) != null; i++) {
            if (node.terminal && i + 1 < n && body[i + 1] == '=') {
                int valueEnd = substringEnd(body, i + 2, n);
                end = valueEnd >= 0 ? valueEnd : end;
            }
        }
        return end;
    }

    /** The end of the longest LSS at body[at] that a delimiter or the end follows, -1 when none. */
    private int substringEnd(char[] body, int at, int n) {
        int end = -1;
        Node node = substrings;
        for (int i = at; i < n && (node = node.child(body[i])) != null; i++) {
            if (node.terminal && (i + 1 == n || isDelimiter(body[i + 1]))) {
                end = i + 1;
            }
        }
        return end;
    }

    private static boolean isDelimiter(char c) {
        return c < 128 && DELIMITER[c];
    }

    private static boolean[] asciiSet(String chars) {
        boolean[] set = new boolean[128];
        for (char c : chars.toCharArray()) {
            set[c] = true;
        }
        return set;
    }

    /** A trie node: children by char (sorted, binary-searched; a root's ASCII ones also in a table, as most
     * lookups are a root's), terminal when a word ends here. */
    private static final class Node {
        private char[] labels = new char[0];
        private Node[] children = new Node[0];
        private boolean terminal;
        private Node[] ascii;

        Node child(char c) {
            if (ascii != null && c < 128) {
                return ascii[c];
            }
            int index = Arrays.binarySearch(labels, c);
            return index >= 0 ? children[index] : null;
        }

        void addAll(String words) {
            for (String word : words.split(String.valueOf(WORD_SEPARATOR), -1)) {
                if (!word.isEmpty()) {
                    add(word);
                }
            }
            ascii = new Node[128];
            for (int i = 0; i < labels.length && labels[i] < 128; i++) {
                ascii[labels[i]] = children[i];
            }
        }

        private void add(String word) {
            Node node = this;
            for (char c : word.toCharArray()) {
                Node next = node.child(c);
                if (next == null) {
                    next = node.insert(c);
                }
                node = next;
            }
            node.terminal = true;
        }

        private Node insert(char c) {
            int index = -Arrays.binarySearch(labels, c) - 1;
            char[] newLabels = new char[labels.length + 1];
            Node[] newChildren = new Node[children.length + 1];
            System.arraycopy(labels, 0, newLabels, 0, index);
            System.arraycopy(children, 0, newChildren, 0, index);
            System.arraycopy(labels, index, newLabels, index + 1, labels.length - index);
            System.arraycopy(children, index, newChildren, index + 1, children.length - index);
            newLabels[index] = c;
            newChildren[index] = new Node();
            labels = newLabels;
            children = newChildren;
            return newChildren[index];
        }
    }
}
