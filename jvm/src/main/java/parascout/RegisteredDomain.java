package parascout;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.spark.sql.api.java.UDF2;

/**
 * Spark SQL UDF {@code (host, spec) -> registered domain}: udfs/common/urls.py's {@code registered_domain} on the JVM.
 *
 * <p>A port of tldextract's lookup (lenient netloc, the reversed-label trie with wildcard and exception rules,
 * IPv4 and bracketed IPv6 hosts, no PSL private domains), so scan-cdx needs no Python worker for the domain.
 * The spec is the public suffix rules of tldextract's bundled snapshot, one per line, with the IDNA A-label
 * form of every non-ASCII rule added (udfs/common/urls.py {@code public_suffix_spec}): tldextract decodes a host's
 * xn-- labels to match Unicode rules, this class matches the encoded rules instead. As for
 * {@link StrandHandle}, the spec is a binary literal parsed once per JVM ({@link SpecCache}).
 */
public final class RegisteredDomain implements UDF2<String, byte[], String> {
    private static final long serialVersionUID = 1L;
    private static final SpecCache<Node> TRIES = new SpecCache<>(Node::parse);
    /** tldextract's IP_RE (ASCII digits only). */
    private static final Pattern IPV4 = Pattern.compile(
        "(?:(?:[0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])\\.){3}(?:[0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])");
    private static final Pattern HEX_GROUP = Pattern.compile("[0-9A-Fa-f]{1,4}");
    private static final String SCHEME_CHARS =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.";
    private static final String ROOT_LABEL_DOTS = ".\u3002\uff0e\uff61";

    @Override
    public String call(String host, byte[] spec) {
        if (host == null) {
            return null;
        }
        Node trie = TRIES.get(spec);
        Last memo = last;  // scan-cdx reads SURT-sorted CDX: runs of one host
        if (memo == null || memo.trie != trie || !memo.host.equals(host)) {
            memo = new Last(host, trie, registeredDomain(host, trie));
            last = memo;
        }
        return memo.domain;
    }

    /** The last host looked up and its domain, one immutable triple so threads never see half of it. */
    private transient volatile Last last;

    private static final class Last {
        final String host;
        final Node trie;
        final String domain;

        Last(String host, Node trie, String domain) {
            this.host = host;
            this.trie = trie;
            this.domain = domain;
        }
    }

    /** example.co.uk for www.example.co.uk; the host itself for an IP; null when there is no domain label. */
    static String registeredDomain(String host, Node trie) {
        if (host.isEmpty()) {
            return null;
        }
        String netloc = lenientNetloc(host).replace('\u3002', '.').replace('\uff0e', '.').replace('\uff61', '.');
        if (netloc.length() >= 4 && netloc.charAt(0) == '[' && netloc.charAt(netloc.length() - 1) == ']'
                && looksLikeIpv6(netloc.substring(1, netloc.length() - 1))) {
            return netloc;
        }
        String[] labels = netloc.split("\\.", -1);
        int suffix = suffixIndex(labels, trie);
        if (suffix < 0) {
            if (labels.length == 4 && !netloc.isEmpty() && Character.isDigit(netloc.codePointAt(0))
                    && IPV4.matcher(netloc).matches()) {
                return netloc;
            }
            String domain = labels[labels.length - 1];
            return domain.isEmpty() ? null : domain;
        }
        if (suffix == 0 || labels[suffix - 1].isEmpty()) {
            return null;
        }
        return String.join(".", java.util.Arrays.asList(labels).subList(suffix - 1, labels.length));
    }

    /** Index of the first public-suffix label, -1 when no rule matches (tldextract's suffix_index). */
    static int suffixIndex(String[] labels, Node trie) {
        Node node = trie;
        int suffix = labels.length;
        int label = labels.length;
        for (int i = labels.length - 1; i >= 0; i--) {
            String name = labels[i].toLowerCase(Locale.ROOT);
            Node next = node.children.get(name);
            if (next != null) {
                label--;
                node = next;
                if (node.end) {
                    suffix = label;
                }
                continue;
            }
            if (node.children.containsKey("*")) {
                return node.children.containsKey("!" + name) ? label : label - 1;
            }
            break;
        }
        return suffix == labels.length ? -1 : suffix;
    }

    /** tldextract's lenient_netloc: the host of a URL-like string, case and IPv6 brackets kept. */
    static String lenientNetloc(String url) {
        String authority = cutAt(cutAt(cutAt(schemeless(url), '/'), '?'), '#');
        String afterUserinfo = authority.substring(authority.lastIndexOf('@') + 1);
        if (!afterUserinfo.isEmpty() && afterUserinfo.charAt(0) == '[') {
            int close = afterUserinfo.indexOf(']');
            if (close >= 0) {
                return afterUserinfo.substring(0, close + 1);
            }
        }
        String hostname = stripPythonSpace(cutAt(afterUserinfo, ':'));
        int end = hostname.length();
        while (end > 0 && ROOT_LABEL_DOTS.indexOf(hostname.charAt(end - 1)) >= 0) {
            end--;
        }
        return hostname.substring(0, end);
    }

    private static String schemeless(String url) {
        int slashes = url.indexOf("//");
        if (slashes == 0) {
            return url.substring(2);
        }
        if (slashes < 2 || url.charAt(slashes - 1) != ':') {
            return url;
        }
        for (int i = 0; i < slashes - 1; i++) {
            if (SCHEME_CHARS.indexOf(url.charAt(i)) < 0) {
                return url;
            }
        }
        return url.substring(slashes + 2);
    }

    private static String cutAt(String text, char separator) {
        int at = text.indexOf(separator);
        return at < 0 ? text : text.substring(0, at);
    }

    /** Python's str.strip(): whitespace as str.isspace() defines it. */
    private static String stripPythonSpace(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && isPythonSpace(text.charAt(start))) {
            start++;
        }
        while (end > start && isPythonSpace(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(start, end);
    }

    private static boolean isPythonSpace(char c) {
        return (c >= '\t' && c <= '\r') || (c >= '\u001c' && c <= ' ') || c == '\u0085' || c == '\u00a0'
            || Character.getType(c) == Character.SPACE_SEPARATOR || c == '\u2028' || c == '\u2029';
    }

    /** An IPv6 address as Python's ipaddress.IPv6Address accepts it (an optional %scope, a dotted IPv4 tail). */
    static boolean looksLikeIpv6(String text) {
        int scope = text.indexOf('%');
        if (scope >= 0) {
            if (scope == text.length() - 1 || text.indexOf('/', scope) >= 0) {
                return false;
            }
            text = text.substring(0, scope);
        }
        int groups = 8;
        int lastColon = text.lastIndexOf(':');
        if (lastColon >= 0 && text.indexOf('.', lastColon) >= 0) {
            String tail = text.substring(lastColon + 1);
            if (!IPV4.matcher(tail).matches()) {
                return false;
            }
            text = text.substring(0, lastColon + 1) + "0";
            groups = 7;
        }
        if (text.length() < 2 || text.indexOf(':') < 0) {
            return false;
        }
        int gap = text.indexOf("::");
        if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
            return false;
        }
        String[] parts = text.split(":", -1);
        int explicit = 0;
        for (int i = 0; i < parts.length; i++) {
            boolean edgeOfGap = parts[i].isEmpty() && gap >= 0;
            if (edgeOfGap) {
                continue;
            }
            if (!HEX_GROUP.matcher(parts[i]).matches()) {
                return false;
            }
            explicit++;
        }
        return gap >= 0 ? explicit < groups : explicit == groups;
    }

    /** A node of the reversed-label rule trie. */
    static final class Node {
        final Map<String, Node> children = new HashMap<>();
        boolean end;

        static Node parse(String spec) {
            Node root = new Node();
            for (String rule : spec.split("\n")) {
                if (rule.isEmpty()) {
                    continue;
                }
                String[] labels = rule.split("\\.", -1);
                Node node = root;
                for (int i = labels.length - 1; i >= 0; i--) {
                    node = node.children.computeIfAbsent(labels[i], name -> new Node());
                }
                node.end = true;
            }
            return root;
        }
    }
}
