package dev.sluice.runtime.internal.http;

import dev.sluice.api.GatewayException;

import java.util.Collection;

/**
 * Takes the gateway's own credentials out of error messages before a client, a log line or a completion listener sees
 * them. A client binding relays a provider's error message ({@code "upstream: …"}); a provider that quotes the key it
 * was sent (some OpenAI-compatible servers do, on a 400 as much as on a 401) would otherwise show the gateway's
 * provider key to every client. Applied only on error paths: a refusal costs one {@code indexOf} per secret, a success
 * nothing.
 */
final class Redaction
{
    /** What a secret becomes. */
    static final String REDACTED = "[redacted]";
    /** Values shorter than this are not treated as secrets: redacting "x" everywhere would garble every message. */
    static final int MIN_SECRET_CHARS = 8;
    /** No redaction. */
    static final Redaction NONE = new Redaction(java.util.List.of());

    private final String[] secrets;

    /** @param secrets the values to hide: those the environment put into secret fields of the config */
    Redaction(Collection<String> secrets)
    {
        // Longest first, so that a secret containing another is replaced whole.
        this.secrets = secrets.stream().filter(s -> s != null && s.length() >= MIN_SECRET_CHARS)
            .sorted((a, b) -> Integer.compare(b.length(), a.length())).toArray(String[]::new);
    }

    /**
     * @return {@code error} itself if its message quotes no secret, else a copy (same kind, status, param, code,
     *         cause and headers) whose message has each secret replaced by {@value #REDACTED}
     */
    GatewayException scrub(GatewayException error)
    {
        String message = error.getMessage();
        String scrubbed = message;
        for (String secret : secrets)
        {
            if (scrubbed.contains(secret))
                scrubbed = scrubbed.replace(secret, REDACTED);
        }
        if (scrubbed == message)
            return error;
        return new GatewayException(error.kind(), error.status(), scrubbed, error.param(), error.code(), error.getCause(),
            error.headers());
    }
}
