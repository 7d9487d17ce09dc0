package dev.sluice.api.upstream;

import java.util.HashSet;
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
}
