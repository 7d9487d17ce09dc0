package dev.sluice.bench.cell;

import java.nio.file.Path;
import java.util.Map;

import dev.sluice.mock.FixedAnswer;

/**
 * The static nginx mock's config: one worker that answers each chat path of a cell with the Java mock's answer to
 * that cell's request ({@link FixedAnswer}), rendered when the config is written. Only the request id and the time
 * are filled per request: the id with {@code $connection_requests} (the Java mock counts requests over all
 * connections, nginx per connection: the same digits on a fresh connection, fewer on a busy one), the time from
 * {@code $msec}.
 *
 * <p>Keep-alive never ends a busy connection during a session (10⁹ requests, an hour idle), the backlog takes the
 * gateway's connection bursts, a request body is read whole into memory before the answer (never to disk) and {@code GET /_mock/stats} is {@code stub_status}, whose request count {@link MockProcess#requests()} reads.</p>
 *
 * <p>nginx 1.22 serves either HTTP/1.1 or h2c (prior knowledge) on one plain-text port, not both: for an h2c cell
 * the mock's port speaks h2c and a second port HTTP/1.1, for the nginx byte pipe (which speaks HTTP/1.1 upstream)
 * and the harness' own requests.</p>
 */
final class NginxMockConf
{
    /** Requests a connection may carry: more than any session sends. */
    static final long KEEPALIVE_REQUESTS = 1_000_000_000L;
    /** Longer than any cell: the gateway's idle pooled connections are never closed under it. */
    static final String KEEPALIVE_TIMEOUT = "3600s";

    private NginxMockConf()
    {
    }

    /**
     * @param prefix the instance's own directory
     * @param port the mock's port (127.0.0.1 only): HTTP/1.1, or h2c when {@code h2c}
     * @param http11Port with {@code h2c}, a second port speaking HTTP/1.1; otherwise ignored
     * @param h2c whether {@code port} speaks h2c (prior knowledge)
     * @param user the user workers run as when the master runs as root, or null
     * @param answers path (exact) to the answer it gets
     * @return the config text
     */
    static String render(Path prefix, int port, int http11Port, boolean h2c, String user, Map<String, FixedAnswer> answers)
    {
        StringBuilder conf = new StringBuilder(NginxConf.head("the static mock", prefix, "1", user, KEEPALIVE_TIMEOUT,
            KEEPALIVE_REQUESTS));
        // nginx strings have no escape for '$': a literal one is spelled ${mock_dollar}.
        conf.append("    geo $mock_dollar { default \"$\"; }\n");
        conf.append("    map $msec $mock_created { \"~^(?<s>[0-9]+)\" $s; }\n");
        conf.append("    server {\n");
        conf.append("        listen 127.0.0.1:").append(port).append(h2c ? " http2" : "").append(" backlog=4096;\n");
        if (h2c)
            conf.append("        listen 127.0.0.1:").append(http11Port).append(" backlog=4096;\n");
        // A body over the limit would get nginx's own 413; 8 MiB is what the byte pipe accepts. Bodies the mock
        // serves (MockProcess.NGINX_MAX_BODY) stay in memory.
        conf.append("        client_max_body_size 8m;\n");
        conf.append("        client_body_buffer_size ").append(MockProcess.NGINX_MAX_BODY / 1024).append("k;\n");
        conf.append("        log_not_found off;\n");
        int n = 0;
        for (Map.Entry<String, FixedAnswer> route : answers.entrySet())
        {
            FixedAnswer answer = route.getValue();
            String named = "@answer" + n++;
            // Read the whole body first, as the Java mock does: `return` alone answers on the headers and discards
            // the body as it comes, and an h2c stream answered before its END_STREAM is reset (NO_ERROR), which
            // Jetty's client reports as a failed request. mirror_request_body reads the body (the mirror subrequest
            // itself answers 204 in memory); the content phase then finds no file (404, unlogged), which
            // error_page turns into the answer.
            conf.append("        location = ").append(route.getKey()).append(" {\n");
            conf.append("            mirror /_mock/read;\n");
            conf.append("            mirror_request_body on;\n");
            conf.append("            error_page 404 405 = ").append(named).append(";\n");
            conf.append("        }\n");
            conf.append("        location ").append(named).append(" {\n");
            conf.append("            default_type ").append(answer.contentType()).append(";\n");
            if (answer.requestIdHeader() != null)
                conf.append("            add_header ").append(answer.requestIdHeader()).append(' ')
                    .append(quote(answer.requestIdPrefix())).append("$connection_requests;\n");
            conf.append("            return ").append(answer.status()).append(" \"").append(body(answer)).append("\";\n");
            conf.append("        }\n");
        }
        conf.append("        location = /_mock/read {\n");
        conf.append("            internal;\n");
        conf.append("            return 204;\n");
        conf.append("        }\n");
        conf.append("        location = /_mock/stats {\n");
        conf.append("            stub_status;\n");
        conf.append("        }\n");
        conf.append("        location / {\n");
        conf.append("            default_type application/json;\n");
        conf.append("            return 404 \"{\\\"error\\\":{\\\"message\\\":\\\"Invalid URL\\\",\\\"type\\\":" +
            "\\\"invalid_request_error\\\",\\\"param\\\":null,\\\"code\\\":null}}\";\n");
        conf.append("        }\n");
        conf.append("    }\n");
        conf.append("}\n");
        return conf.toString();
    }

    /** @return the body as the inside of an nginx double-quoted string, with its slots as variables */
    static String body(FixedAnswer answer)
    {
        StringBuilder out = new StringBuilder();
        for (FixedAnswer.Part part : answer.body())
        {
            if (part.slot() == null)
                out.append(quote(part.text()));
            else
                out.append(part.slot() == FixedAnswer.Slot.ID ? "${connection_requests}" : "${mock_created}");
        }
        return out.toString();
    }

    /**
     * @param text literal text
     * @return it as the inside of an nginx double-quoted string: {@code \} and {@code "} escaped, {@code $} spelled
     * {@code ${mock_dollar}} (nginx has no escape for it)
     */
    static String quote(String text)
    {
        StringBuilder out = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++)
        {
            char c = text.charAt(i);
            switch (c)
            {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '$' -> out.append("${mock_dollar}");
                default -> out.append(c);
            }
        }
        return out.toString();
    }
}
