package dev.sluice.api.upstream;

import dev.sluice.api.Experimental;
import dev.sluice.api.exchange.ResponseHeaders;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * The provider's response headers a client may act on — when to retry, how much of its rate limit is left, which
 * request to quote to the provider's support — captured from an allow-list and rewritten for the client's dialect.
 * gateway-support's {@code UpstreamReplies.reply} applies it to every answer, success or error, so a client binding built on it
 * passes
 * them on without code of its own.
 *
 * <table>
 *   <caption>What passes</caption>
 *   <tr><th>provider sends</th><th>client of the same scheme</th><th>client of the other scheme</th>
 *       <th>any other client</th></tr>
 *   <tr><td>{@code retry-after}, {@code retry-after-ms}</td><td colspan="3">as they are</td></tr>
 *   <tr><td>OpenAI {@code x-ratelimit-*}</td><td>as they are</td><td>the six requests/tokens limit, remaining and
 *       reset headers as Anthropic's {@code anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}}, the reset
 *       duration ({@code 6m0s}) turned into an RFC 3339 time; others dropped</td><td>dropped</td></tr>
 *   <tr><td>Anthropic {@code anthropic-ratelimit-*}</td><td>as they are</td><td>requests and tokens limit, remaining
 *       and reset as {@code x-ratelimit-{limit,remaining,reset}-{requests,tokens}}, the reset time turned into a
 *       duration from now; {@code input-tokens-*} and {@code output-tokens-*} dropped (OpenAI has no separate input
 *       and output limits)</td><td>dropped</td></tr>
 *   <tr><td>the provider's request id (OpenAI {@code x-request-id}, Anthropic {@code request-id})</td>
 *       <td colspan="3">as {@value #UPSTREAM_REQUEST_ID}; Anthropic's also as {@code request-id} to an Anthropic
 *       client. {@code x-request-id} stays the gateway's own id</td></tr>
 * </table>
 *
 * <p>A value that does not parse (a count that is not a number, a reset in neither format) is dropped rather than
 * guessed at. Conversions round a reset up to the next whole second, so a client never retries early.
 *
 * <p>Cost: the upstream headers are scanned once, comparing a name's first character before anything else; a
 * response with none of these headers allocates one small scanner and returns {@link ResponseHeaders#EMPTY}.
 * Stateless and thread-safe.
 *
 * <pre>{@code
 * ResponseHeaders h = ProviderHeaders.capture(response, "openai", exchange.dialect());
 * }</pre>
 */
@Experimental
public final class ProviderHeaders
{
    /** The header that carries the provider's request id to the client, whatever the dialects. */
    public static final String UPSTREAM_REQUEST_ID = "x-upstream-request-id";

    private static final String OPENAI_PREFIX = "x-ratelimit-";
    private static final String ANTHROPIC_PREFIX = "anthropic-ratelimit-";
    /** OpenAI names and their Anthropic equivalents, index for index; resets are at indexes 2 and 5. */
    private static final String[] OPENAI = {"x-ratelimit-limit-requests", "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-requests", "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens",
        "x-ratelimit-reset-tokens"};
    private static final String[] ANTHROPIC = {"anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset",
        "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"};

    /** A dialect's family of rate-limit and request-id headers. */
    public enum Scheme
    {
        /** OpenAI's {@code x-ratelimit-*} and {@code x-request-id}. */
        OPENAI,
        /** Anthropic's {@code anthropic-ratelimit-*} and {@code request-id}. */
        ANTHROPIC,
        /** No rate-limit headers (Gemini puts its retry hint in the error body; other dialects): only retries. */
        NONE;

        /** @return the scheme of a dialect name ({@code "openai"}, {@code "anthropic"}), {@link #NONE} otherwise */
        public static Scheme ofDialect(String dialect)
        {
            if ("openai".equals(dialect))
                return OPENAI;
            if ("anthropic".equals(dialect))
                return ANTHROPIC;
            return NONE;
        }
    }

    private ProviderHeaders()
    {
    }

    /** {@link #capture(UpstreamResponse, Scheme, Scheme)} with the schemes of two dialect names. */
    public static ResponseHeaders capture(UpstreamResponse response, String providerDialect, String clientDialect)
    {
        return capture(response, Scheme.ofDialect(providerDialect), Scheme.ofDialect(clientDialect));
    }

    /**
     * @param response the provider's answer (its headers are read, its body is not touched)
     * @param provider the scheme the provider speaks
     * @param client   the scheme of the client's dialect
     * @return the headers for the client, {@link ResponseHeaders#EMPTY} if none apply
     */
    public static ResponseHeaders capture(UpstreamResponse response, Scheme provider, Scheme client)
    {
        Scanner scanner = new Scanner(provider, client, null);
        response.headers().forEach(scanner);
        return scanner.result();
    }

    /** As {@link #capture(UpstreamResponse, Scheme, Scheme)} at a given time; for tests. */
    static ResponseHeaders capture(UpstreamResponse response, Scheme provider, Scheme client, Instant now)
    {
        Scanner scanner = new Scanner(provider, client, now);
        response.headers().forEach(scanner);
        return scanner.result();
    }

    /** One pass over the headers; allocates its output only when a header applies. */
    private static final class Scanner implements BiConsumer<String, String>
    {
        private final Scheme provider;
        private final Scheme client;
        private Instant now;
        private String[] out;
        private int n;

        Scanner(Scheme provider, Scheme client, Instant now)
        {
            this.provider = provider;
            this.client = client;
            this.now = now;
        }

        @Override
        public void accept(String name, String value)
        {
            if (name.length() < 10)
                return;
            switch (name.charAt(0) | 0x20)
            {
                case 'r' ->
                {
                    if (name.equalsIgnoreCase("retry-after") || name.equalsIgnoreCase("retry-after-ms"))
                        add(name, value);
                    else if (provider == Scheme.ANTHROPIC && name.equalsIgnoreCase("request-id"))
                    {
                        add(UPSTREAM_REQUEST_ID, value);
                        if (client == Scheme.ANTHROPIC)
                            add(name, value);
                    }
                }
                case 'x' ->
                {
                    if (provider != Scheme.OPENAI)
                        return;
                    if (name.equalsIgnoreCase("x-request-id"))
                        add(UPSTREAM_REQUEST_ID, value);
                    else if (name.regionMatches(true, 0, OPENAI_PREFIX, 0, OPENAI_PREFIX.length()))
                        rateLimit(name, value, OPENAI, ANTHROPIC);
                }
                case 'a' ->
                {
                    if (provider == Scheme.ANTHROPIC && name.regionMatches(true, 0, ANTHROPIC_PREFIX, 0, ANTHROPIC_PREFIX.length()))
                        rateLimit(name, value, ANTHROPIC, OPENAI);
                }
                default ->
                {
                    // Not one of ours.
                }
            }
        }

        private void rateLimit(String name, String value, String[] from, String[] to)
        {
            if (client == provider)
            {
                add(name, value);
                return;
            }
            if (client == Scheme.NONE)
                return;
            for (int i = 0; i < from.length; i++)
            {
                if (!from[i].equalsIgnoreCase(name))
                    continue;
                String mapped;
                if (i % 3 != 2)
                    mapped = isCount(value) ? value : null;
                else if (from == OPENAI)
                    mapped = timestampIn(value);
                else
                    mapped = durationUntil(value);
                if (mapped != null)
                    add(to[i], mapped);
                return;
            }
        }

        private Instant now()
        {
            if (now == null)
                now = Instant.now();
            return now;
        }

        /** OpenAI's reset duration as the RFC 3339 time it ends, rounded up to the second; {@code null} if bad. */
        private String timestampIn(String duration)
        {
            long nanos = parseDuration(duration);
            if (nanos < 0)
                return null;
            Instant at = now().plusNanos(nanos);
            if (at.getNano() != 0)
                at = at.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
            return at.toString();
        }

        /** Anthropic's reset time as an OpenAI duration from now, rounded up to the second; {@code null} if bad. */
        private String durationUntil(String timestamp)
        {
            Instant at;
            try
            {
                at = OffsetDateTime.parse(timestamp).toInstant();
            }
            catch (DateTimeParseException e)
            {
                return null;
            }
            long millis = at.toEpochMilli() - now().toEpochMilli();
            return formatDuration(millis <= 0 ? 0 : (millis + 999) / 1000);
        }

        private void add(String name, String value)
        {
            if (out == null)
                out = new String[8];
            else if (n == out.length)
                out = Arrays.copyOf(out, n * 2);
            out[n++] = name;
            out[n++] = value;
        }

        ResponseHeaders result()
        {
            return n == 0 ? ResponseHeaders.EMPTY : ResponseHeaders.of(Arrays.copyOf(out, n));
        }
    }

    /** @return whether {@code value} is a plain non-negative decimal count */
    private static boolean isCount(String value)
    {
        if (value.isEmpty() || value.length() > 18)
            return false;
        for (int i = 0; i < value.length(); i++)
        {
            char c = value.charAt(i);
            if (c < '0' || c > '9')
                return false;
        }
        return true;
    }

    /**
     * Parses a Go-style duration as OpenAI writes its resets: {@code 1s}, {@code 6m0s}, {@code 120ms},
     * {@code 1h2m3.5s}; units {@code h m s ms us µs ns}, each a decimal number with an optional fraction.
     *
     * @return the duration in nanoseconds, or {@code -1} if {@code value} is not one
     */
    static long parseDuration(String value)
    {
        int i = 0;
        int len = value.length();
        if (len == 0 || len > 40)
            return -1;
        double total = 0;
        while (i < len)
        {
            int start = i;
            while (i < len && (Character.isDigit(value.charAt(i)) || value.charAt(i) == '.'))
                i++;
            if (i == start)
                return -1;
            double number;
            try
            {
                number = Double.parseDouble(value.substring(start, i));
            }
            catch (NumberFormatException e)
            {
                return -1;
            }
            int unitStart = i;
            while (i < len && !Character.isDigit(value.charAt(i)) && value.charAt(i) != '.')
                i++;
            double scale = switch (value.substring(unitStart, i))
            {
                case "h" -> 3.6e12;
                case "m" -> 6e10;
                case "s" -> 1e9;
                case "ms" -> 1e6;
                case "us", "µs" -> 1e3;
                case "ns" -> 1;
                default -> -1;
            };
            if (scale < 0)
                return -1;
            total += number * scale;
        }
        return total > Long.MAX_VALUE / 2 ? -1 : (long)Math.ceil(total);
    }

    /** @return whole seconds the way OpenAI writes them: {@code 0s}, {@code 59s}, {@code 6m0s}, {@code 1h0m5s} */
    static String formatDuration(long seconds)
    {
        long h = seconds / 3600;
        long m = seconds / 60 % 60;
        long s = seconds % 60;
        if (h > 0)
            return h + "h" + m + "m" + s + "s";
        if (m > 0)
            return m + "m" + s + "s";
        return s + "s";
    }
}
