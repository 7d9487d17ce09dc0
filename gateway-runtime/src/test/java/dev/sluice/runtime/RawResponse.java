package dev.sluice.runtime;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 response read off a raw socket, for tests that must control exactly what a client writes and reads on
 * one connection: the status, the headers (names in lower case) and a {@code Content-Length} body.
 */
record RawResponse(int status, Map<String, String> headers, String body)
{
    /** Reads one response: its head, then a {@code Content-Length} body (none without the header). */
    static RawResponse read(InputStream in) throws IOException
    {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4)
        {
            int c = in.read();
            if (c < 0)
                throw new AssertionError("connection closed before a complete response head: " + head);
            head.write(c);
            state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3)) ? state + 1 : 0;
        }
        String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
        Map<String, String> headers = new HashMap<>();
        for (int i = 1; i < lines.length; i++)
        {
            int colon = lines[i].indexOf(':');
            if (colon > 0)
                headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
        }
        byte[] body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
        return new RawResponse(Integer.parseInt(lines[0].split(" ")[1]), headers, new String(body, StandardCharsets.UTF_8));
    }

    /** @return whether the peer closes the connection within the socket's timeout; a reset counts as a close */
    static boolean closes(InputStream in)
    {
        try
        {
            return in.read() < 0;
        }
        catch (SocketTimeoutException e)
        {
            return false;
        }
        catch (IOException reset)
        {
            return true;
        }
    }
}
