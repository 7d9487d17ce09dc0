package dev.sluice.api.exchange;

import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Headers a stage adds to the response the client gets: a small, immutable, ordered list of name/value pairs, carried
 * by every {@link Reply} and by {@link dev.sluice.api.GatewayException}. Names are kept lower-case (HTTP/2 requires
 * it, HTTP/1.1 ignores case); lookup is case-insensitive; a name may repeat, and its values go out in order.
 *
 * <p><b>Refused names.</b> The runtime owns the framing and the identity of a response, so {@link #with} and
 * {@link #of} throw {@link IllegalArgumentException} for: hop-by-hop headers ({@code connection},
 * {@code keep-alive}, {@code proxy-connection}, {@code transfer-encoding}, {@code te}, {@code trailer},
 * {@code upgrade}, {@code proxy-authenticate}), the body's framing and type ({@code content-length},
 * {@code content-type}, {@code content-encoding}: the reply's body and encoder decide them), the gateway's own
 * {@code x-request-id}, {@code host}, {@code date}, {@code server}, HTTP/2 pseudo-headers ({@code :status}…), names
 * that are not an HTTP token, and values with a CR, LF or NUL (header injection). {@link #isReserved(String)} says
 * whether a name is refused. Refusing at construction means a mistake fails the plugin's own test, not a request.
 *
 * <p><b>When they are written.</b> With the status line, before the first byte of the body: for {@link Reply.Bytes}
 * and {@link Reply.Message} with the body, for {@link Reply.Stream} when the stream starts (so they cannot depend on
 * what the stream later carries), for a {@link dev.sluice.api.GatewayException} with the error response. They are
 * written after the reply's own headers have been chosen, in every dialect and on HTTP/1.1 and h2c alike; the one
 * header the runtime then overrides is {@code cache-control} of a stream ({@code no-cache}, which SSE needs). A
 * stream that fails after it started has no way to send headers any more: its error's headers are dropped.
 *
 * <p><b>Cost.</b> {@link #EMPTY} is shared and allocates nothing; a reply without headers pays nothing. Each
 * {@code with} copies the list (these lists hold a handful of entries): build once, e.g. in a binding's constructor
 * for fixed headers. Thread-safe (immutable).
 *
 * <pre>{@code
 * private static final ResponseHeaders HIT = ResponseHeaders.of("x-cache", "HIT");
 * return CompletableFuture.completedFuture(cached.withHeaders(HIT));
 * throw new GatewayException(ErrorKind.RATE_LIMITED, "team-a is over its limit")
 *     .withHeaders(ResponseHeaders.of("retry-after", "2"));
 * }</pre>
 */
public final class ResponseHeaders
{
    /** No headers. */
    public static final ResponseHeaders EMPTY = new ResponseHeaders(new String[0]);

    private static final Set<String> RESERVED = Set.of("connection", "keep-alive", "proxy-connection",
        "transfer-encoding", "te", "trailer", "upgrade", "proxy-authenticate", "content-length", "content-type",
        "content-encoding", "x-request-id", "host", "date", "server");

    /** {@code name0, value0, name1, value1, …}; names lower-case. Never modified. */
    private final String[] pairs;

    private ResponseHeaders(String[] pairs)
    {
        this.pairs = pairs;
    }

    /** @return one header; see the class comment for the names refused */
    public static ResponseHeaders of(String name, String value)
    {
        return EMPTY.with(name, value);
    }

    /**
     * @param namesAndValues names and values, alternating: {@code of("x-cache", "HIT", "age", "12")}
     * @return those headers, in that order
     * @throws IllegalArgumentException for an odd count, a refused name or a bad value
     */
    public static ResponseHeaders of(String... namesAndValues)
    {
        if (namesAndValues.length % 2 != 0)
            throw new IllegalArgumentException("namesAndValues: " + namesAndValues.length + " strings (expected: pairs)");
        if (namesAndValues.length == 0)
            return EMPTY;
        String[] pairs = new String[namesAndValues.length];
        for (int i = 0; i < pairs.length; i += 2)
        {
            pairs[i] = checkName(namesAndValues[i]);
            pairs[i + 1] = checkValue(pairs[i], namesAndValues[i + 1]);
        }
        return new ResponseHeaders(pairs);
    }

    /**
     * @return these headers and {@code name: value} after them (an existing header of that name is kept: both go out)
     * @throws IllegalArgumentException for a refused name or a value with CR, LF or NUL
     */
    public ResponseHeaders with(String name, String value)
    {
        String n = checkName(name);
        String v = checkValue(n, value);
        String[] more = Arrays.copyOf(pairs, pairs.length + 2);
        more[pairs.length] = n;
        more[pairs.length + 1] = v;
        return new ResponseHeaders(more);
    }

    /** @return these headers followed by {@code other}'s; {@code this} or {@code other} itself when one is empty */
    public ResponseHeaders withAll(ResponseHeaders other)
    {
        if (other.pairs.length == 0)
            return this;
        if (pairs.length == 0)
            return other;
        String[] both = Arrays.copyOf(pairs, pairs.length + other.pairs.length);
        System.arraycopy(other.pairs, 0, both, pairs.length, other.pairs.length);
        return new ResponseHeaders(both);
    }

    /** @return these headers without any named {@code name} (case-insensitive); {@code this} if there is none */
    public ResponseHeaders without(String name)
    {
        int kept = 0;
        for (int i = 0; i < pairs.length; i += 2)
        {
            if (!pairs[i].equalsIgnoreCase(name))
                kept += 2;
        }
        if (kept == pairs.length)
            return this;
        String[] rest = new String[kept];
        int j = 0;
        for (int i = 0; i < pairs.length; i += 2)
        {
            if (!pairs[i].equalsIgnoreCase(name))
            {
                rest[j++] = pairs[i];
                rest[j++] = pairs[i + 1];
            }
        }
        return rest.length == 0 ? EMPTY : new ResponseHeaders(rest);
    }

    /** @return the first value of {@code name} (case-insensitive), or {@code null} if absent */
    public String get(String name)
    {
        for (int i = 0; i < pairs.length; i += 2)
        {
            if (pairs[i].equalsIgnoreCase(name))
                return pairs[i + 1];
        }
        return null;
    }

    /** @return how many headers there are */
    public int size()
    {
        return pairs.length / 2;
    }

    /** @return whether there are none */
    public boolean isEmpty()
    {
        return pairs.length == 0;
    }

    /** @return the lower-case name of header {@code index} ({@code 0 <= index < size()}) */
    public String name(int index)
    {
        return pairs[2 * index];
    }

    /** @return the value of header {@code index} ({@code 0 <= index < size()}) */
    public String value(int index)
    {
        return pairs[2 * index + 1];
    }

    /** Calls {@code action} with each name and value, in order. */
    public void forEach(BiConsumer<String, String> action)
    {
        for (int i = 0; i < pairs.length; i += 2)
            action.accept(pairs[i], pairs[i + 1]);
    }

    /**
     * @return whether {@code name} is one the runtime owns and this type refuses (case-insensitive): hop-by-hop,
     *         framing, {@code content-type}, {@code x-request-id}, {@code host}, {@code date}, {@code server},
     *         pseudo-headers
     */
    public static boolean isReserved(String name)
    {
        return name.startsWith(":") || RESERVED.contains(name.toLowerCase(Locale.ROOT));
    }

    private static String checkName(String name)
    {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty())
            throw new IllegalArgumentException("header name: must not be empty");
        for (int i = 0; i < name.length(); i++)
        {
            if (!isTokenChar(name.charAt(i)))
                throw new IllegalArgumentException("header name: \"" + name + "\" (expected: an HTTP token)");
        }
        String lower = name.toLowerCase(Locale.ROOT);
        if (RESERVED.contains(lower))
            throw new IllegalArgumentException("header name: " + lower + " (expected: a header the runtime does not set"
                + " itself; hop-by-hop, framing, content-type and x-request-id are the runtime's)");
        return lower;
    }

    private static String checkValue(String name, String value)
    {
        Objects.requireNonNull(value, "value");
        for (int i = 0; i < value.length(); i++)
        {
            char c = value.charAt(i);
            if (c == '\r' || c == '\n' || c == 0)
                throw new IllegalArgumentException("header " + name + ": value has a CR, LF or NUL (expected: one line)");
        }
        return value;
    }

    /** RFC 9110 {@code tchar}; {@code :} is not one, so pseudo-headers are refused here. */
    private static boolean isTokenChar(char c)
    {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
    }

    @Override
    public boolean equals(Object o)
    {
        return o instanceof ResponseHeaders other && Arrays.equals(pairs, other.pairs);
    }

    @Override
    public int hashCode()
    {
        return Arrays.hashCode(pairs);
    }

    /** Names only: values may be tokens or ids that do not belong in logs. */
    @Override
    public String toString()
    {
        StringBuilder b = new StringBuilder("ResponseHeaders[");
        for (int i = 0; i < pairs.length; i += 2)
            b.append(i == 0 ? "" : ", ").append(pairs[i]);
        return b.append(']').toString();
    }
}
