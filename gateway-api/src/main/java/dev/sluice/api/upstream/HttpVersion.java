package dev.sluice.api.upstream;

/**
 * The protocol spoken to an upstream. A client binding's {@code http.version} names one of these, or {@code auto}
 * (the default), which gateway-support's {@code HttpOptionsConfig} resolves from the URL: {@link #H2} for
 * {@code https} URLs, {@link #HTTP_1_1} for {@code http} URLs.
 */
public enum HttpVersion
{
    /** HTTP/1.1 with pooled keep-alive connections, over TLS for an {@code https} URL. */
    HTTP_1_1("http/1.1"),
    /** HTTP/2 in clear text with prior knowledge (h2c): requests multiplex over few connections. */
    H2C("h2c"),
    /**
     * HTTP/2: on an {@code https} URL negotiated by TLS ALPN (offering {@code h2}, then {@code http/1.1}), so a server
     * that does not offer {@code h2} is spoken HTTP/1.1 to; requests multiplex over few connections. On an {@code http}
     * URL there is nothing to negotiate with, and it means {@link #H2C}: HTTP/2 with prior knowledge.
     *
     * @since 0.6.0
     */
    H2("h2");

    private final String configName;

    HttpVersion(String configName)
    {
        this.configName = configName;
    }

    /** @return the spelling used in config files */
    public String configName()
    {
        return configName;
    }

    /**
     * @return the version spelled {@code name} in config ({@code http/2} is {@link #H2}), or {@code null} for any other
     *         name, {@code auto} included (it depends on the URL)
     */
    public static HttpVersion fromConfig(String name)
    {
        for (HttpVersion v : values())
        {
            if (v.configName.equalsIgnoreCase(name))
                return v;
        }
        if ("http/2".equalsIgnoreCase(name))
            return H2;
        return null;
    }
}
