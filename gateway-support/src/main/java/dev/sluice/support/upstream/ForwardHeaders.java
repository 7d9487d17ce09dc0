package dev.sluice.support.upstream;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The request headers no client binding may copy upstream, whatever its {@code forward_headers} say: every dialect's
 * credentials (a client's key must never reach a provider, in any dialect's header) and the framing headers the HTTP
 * client sets itself. One list for every dialect, so that an operator's {@code forward_headers} cannot send, say,
 * an Anthropic client's {@code x-api-key} to an OpenAI upstream.
 */
public final class ForwardHeaders
{
    /** Lower-case names that are never forwarded. */
    public static final Set<String> NEVER = Set.of(
        // credentials of every dialect
        "authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-goog-api-key",
        // framing and negotiation, the HTTP client's own
        "host", "content-length", "content-type", "transfer-encoding", "connection", "upgrade", "te", "keep-alive",
        "accept");

    private ForwardHeaders()
    {
    }

    /** @return {@link #NEVER} plus {@code extras}, lower-cased */
    public static Set<String> neverPlus(String... extras)
    {
        Set<String> all = new HashSet<>(NEVER);
        for (String e : extras)
            all.add(e.toLowerCase(Locale.ROOT));
        return Set.copyOf(all);
    }

    /**
     * Checks a client binding's {@code forward_headers} option.
     *
     * <pre>{@code
     * forwardHeaders = forwardHeaders == null ? List.of() : ForwardHeaders.checkOptions(forwardHeaders, ForwardHeaders.NEVER);
     * }</pre>
     *
     * @param names          the configured header names
     * @param notForwardable the lower-case names the binding sets itself ({@link #NEVER}, or {@link #neverPlus})
     * @return {@code names}, unmodifiable
     * @throws IllegalArgumentException naming the first blank or not forwardable entry ({@code forward_headers[1]: …}),
     *                                  which {@code Options.bind} reports under the option's path
     */
    public static List<String> checkOptions(List<String> names, Set<String> notForwardable)
    {
        List<String> checked = new ArrayList<>(names.size());
        for (int i = 0; i < names.size(); i++)
        {
            String name = names.get(i);
            if (name == null || name.isBlank())
                throw new IllegalArgumentException("forward_headers[" + i + "]: must not be blank");
            if (notForwardable.contains(name.toLowerCase(Locale.ROOT)))
                throw new IllegalArgumentException("forward_headers[" + i + "]: value: \"" + name + "\" (expected: a header"
                    + " the gateway does not set itself; credentials and framing headers are never forwarded)");
            checked.add(name);
        }
        return List.copyOf(checked);
    }
}
