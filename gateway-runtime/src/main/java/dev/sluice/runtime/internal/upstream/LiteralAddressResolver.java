package dev.sluice.runtime.internal.upstream;

import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.SocketAddressResolver;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;

/**
 * Resolves an upstream host that is an IP address where the connection is being opened, and hands any other host to
 * the wrapped resolver.
 *
 * <p>Jetty's {@link SocketAddressResolver.Async} runs every resolution on the client's executor, with a timer on its
 * scheduler, because a DNS lookup blocks: for a host that is already an address that is a hand-off to another thread,
 * a timer scheduled and cancelled and their wake-ups for nothing, once per new connection — hundreds of them when a
 * burst of requests makes an HTTP/1.1 pool open connections at once. A provider addressed by IP (a model served on
 * the same host or network) gets its connections without them.
 *
 * <p>An address here is a dotted-quad IPv4 address (four decimal numbers 0–255) or an IPv6 address (a host with a
 * colon, with or without its brackets), which the JDK parses without a lookup. Anything else — names, and the short or
 * octal IPv4 forms {@link InetAddress} would also accept — goes to the wrapped resolver. An IPv6 host that does not
 * parse fails the promise at once, as the wrapped resolver would after its lookup.
 */
final class LiteralAddressResolver implements SocketAddressResolver
{
    private final SocketAddressResolver names;

    /**
     * @param names the resolver for hosts that are not IP addresses
     */
    LiteralAddressResolver(SocketAddressResolver names)
    {
        this.names = names;
    }

    @Override
    public void resolve(String host, int port, Map<String, Object> context, Promise<List<InetSocketAddress>> promise)
    {
        InetAddress address;
        try
        {
            address = literal(host);
        }
        catch (UnknownHostException x)
        {
            promise.failed(x);
            return;
        }
        if (address == null)
            names.resolve(host, port, context, promise);
        else
            promise.succeeded(List.of(new InetSocketAddress(address, port)));
    }

    /**
     * @return the address {@code host} spells, or {@code null} if it is not a dotted-quad IPv4 or an IPv6 address
     * @throws UnknownHostException if {@code host} has a colon but is not an IPv6 address
     */
    static InetAddress literal(String host) throws UnknownHostException
    {
        if (host == null || host.isEmpty())
            return null;
        if (host.indexOf(':') >= 0)
        {
            // Bracketed, the JDK parses it as an IPv6 address or fails: it never looks a bracketed host up.
            String bracketed = host.charAt(0) == '[' ? host : "[" + host + "]";
            return InetAddress.getByName(bracketed);
        }
        byte[] bytes = ipv4(host);
        return bytes == null ? null : InetAddress.getByAddress(host, bytes);
    }

    /** @return the four bytes of a dotted-quad address, or {@code null} if {@code host} is not one */
    private static byte[] ipv4(String host)
    {
        byte[] bytes = new byte[4];
        int part = 0;
        int value = -1;
        for (int i = 0; i < host.length(); i++)
        {
            char c = host.charAt(i);
            if (c >= '0' && c <= '9')
            {
                // At most three digits, and no leading zero: "010" is octal to some parsers.
                if (value == 0)
                    return null;
                value = value < 0 ? c - '0' : value * 10 + (c - '0');
                if (value > 255)
                    return null;
            }
            else if (c == '.' && value >= 0 && part < 3)
            {
                bytes[part++] = (byte)value;
                value = -1;
            }
            else
                return null;
        }
        if (part != 3 || value < 0)
            return null;
        bytes[3] = (byte)value;
        return bytes;
    }
}
