package dev.sluice.runtime.internal.http;

import dev.sluice.api.exchange.ResponseHeaders;
import org.eclipse.jetty.http.HttpFields;

/**
 * Writes a reply's or an error's {@link ResponseHeaders} onto the response, before the runtime sets its own (so the
 * runtime's win where both set a name: {@code cache-control} of a stream). The names the runtime owns never get
 * here: {@code ResponseHeaders} refuses them when it is built.
 */
final class ReplyHeaders
{
    private ReplyHeaders()
    {
    }

    static void add(HttpFields.Mutable fields, ResponseHeaders headers)
    {
        // Indexed, not forEach: no lambda on the path of every reply.
        for (int i = 0, n = headers.size(); i < n; i++)
            fields.add(headers.name(i), headers.value(i));
    }
}
