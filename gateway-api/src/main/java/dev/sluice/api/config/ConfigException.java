package dev.sluice.api.config;

/**
 * A configuration mistake, found at startup (or by {@code sluice check}). The message names the exact path and
 * what was expected: {@code bindings.router.routes[1].whenn: unknown key (expected one of: when, exit, with)}.
 *
 * <pre>{@code
 * if (options.maxTokens() < 1)
 *     throw new ConfigException(config.optionsPath() + ".max_tokens",
 *         "value: " + options.maxTokens() + " (expected: a positive integer)");
 * }</pre>
 */
public class ConfigException extends RuntimeException
{
    private final String path;
    private final String problem;

    /**
     * @param path    the dotted path of the faulty value, e.g. {@code bindings.south.options.url}
     * @param problem what is wrong, e.g. {@code value: "htp://x" (expected: an http or https URL)}
     */
    public ConfigException(String path, String problem)
    {
        super(path == null || path.isEmpty() ? problem : path + ": " + problem);
        this.path = path;
        this.problem = problem;
    }

    /** @return the dotted path of the faulty value */
    public String path()
    {
        return path;
    }

    /** @return what is wrong, without the path */
    public String problem()
    {
        return problem;
    }
}
