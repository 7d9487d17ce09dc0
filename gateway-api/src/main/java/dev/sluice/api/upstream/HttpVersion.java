package dev.sluice.api.upstream;

/** The protocol spoken to an upstream. */
public enum HttpVersion
{
    /** HTTP/1.1 with pooled keep-alive connections. */
    HTTP_1_1("http/1.1"),
    /** HTTP/2 in clear text with prior knowledge (h2c): requests multiplex over few connections. */
    H2C("h2c");

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

    /** @return the version spelled {@code name} in config, or {@code null} */
    public static HttpVersion fromConfig(String name)
    {
        for (HttpVersion v : values())
        {
            if (v.configName.equalsIgnoreCase(name))
                return v;
        }
        if ("http/2".equalsIgnoreCase(name) || "h2".equalsIgnoreCase(name))
            return H2C;
        return null;
    }
}
