package dev.sluice.plugin.metrics;

import java.util.List;

/**
 * The {@code metrics} binding's {@code options}, bound strictly by {@link dev.sluice.support.config.Options#bind}: keys are
 * the snake_case names of the components; any other key, a wrong type or a bad value is a startup error naming its
 * path.
 *
 * <pre>{@code
 * options: { admin_path: /metrics, models: [ "gpt-4o*", "claude-*" ], max_models: 100, jvm: true }
 * }</pre>
 *
 * @param adminPath where the admin listener serves the metrics ({@code GET}); {@code null} means {@value #DEFAULT_PATH}.
 *                  Two {@code metrics} bindings need two paths
 * @param models    model names or globs ({@code *}, {@code ?}, as the router's) whose names become {@code model} label
 *                  values, besides the models the gateway advertises (the routes' literal models); {@code null} means
 *                  none. A name no entry matches is counted under {@code model="other"}
 * @param maxModels how many distinct model names the globs of {@code models} may admit as label values, in all, the
 *                  first seen first; later ones are counted as {@code other}. Literal entries and advertised models
 *                  do not count against it. {@code null} means {@value #DEFAULT_MAX_MODELS}; 1 to
 *                  {@value #MAX_MAX_MODELS}
 * @param jvm       whether JVM and process metrics ({@code jvm_*}, {@code process_*}) are served too; {@code null}
 *                  means true
 */
public record MetricsOptions(String adminPath, List<String> models, Integer maxModels, Boolean jvm)
{
    /** The admin path when none is configured. */
    public static final String DEFAULT_PATH = "/metrics";
    /** The default cap on model names admitted by globs. */
    public static final int DEFAULT_MAX_MODELS = 100;
    /** The largest {@code max_models}: each model multiplies the series of every per-model metric. */
    public static final int MAX_MAX_MODELS = 10_000;

    /** Checks every option and fills the defaults. */
    public MetricsOptions
    {
        if (adminPath == null)
            adminPath = DEFAULT_PATH;
        if (!adminPath.startsWith("/") || adminPath.indexOf('?') >= 0 || adminPath.indexOf('#') >= 0)
            throw new IllegalArgumentException("admin_path: value: \"" + adminPath + "\" (expected: a path starting with /, no query)");
        if (models == null)
            models = List.of();
        for (int i = 0; i < models.size(); i++)
        {
            String m = models.get(i);
            if (m == null || m.isBlank())
                throw new IllegalArgumentException("models[" + i + "]: must not be blank (expected: a model name or a glob such as gpt-4o*)");
        }
        models = List.copyOf(models);
        if (maxModels == null)
            maxModels = DEFAULT_MAX_MODELS;
        if (maxModels < 1 || maxModels > MAX_MAX_MODELS)
            throw new IllegalArgumentException("max_models: value: " + maxModels + " (expected: 1 to " + MAX_MAX_MODELS + ")");
        if (jvm == null)
            jvm = true;
    }
}
