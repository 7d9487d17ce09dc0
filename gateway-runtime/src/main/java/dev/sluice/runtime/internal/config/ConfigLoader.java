package dev.sluice.runtime.internal.config;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.binding.BindingConfig.RouteTarget;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.Options;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Reads a config file (YAML, or JSON by the {@code .json} extension), substitutes {@code ${{env.NAME}}} in string
 * values ({@link EnvSubstitution}), binds the generic shape strictly and checks the binding graph: exits that exist, no
 * cycles, every chain from a server ending at a client. Binding types are checked later, against the loaded plugins.
 */
public final class ConfigLoader
{
    /** The default request body cap: 4 MiB. */
    public static final int DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
    /** The default grace period for in-flight requests at shutdown. */
    public static final Duration DEFAULT_GRACE = Duration.ofSeconds(30);

    private static final ObjectMapper YAML = YAMLMapper.builder(new YAMLFactory()).build();
    private static final ObjectMapper JSON = JsonMapper.builder(new JsonFactory()).build();

    private final EnvSubstitution substitution;

    /** @param env the environment, {@code System::getenv} outside tests */
    public ConfigLoader(Function<String, String> env)
    {
        this.substitution = new EnvSubstitution(env);
    }

    /** Loads and validates {@code file}. */
    public GatewayConfig load(Path file)
    {
        String text;
        try
        {
            text = Files.readString(file);
        }
        catch (NoSuchFileException e)
        {
            throw new ConfigException("", "config file not found: " + file);
        }
        catch (IOException e)
        {
            throw new ConfigException("", "cannot read config file " + file + ": " + e.getMessage());
        }
        boolean json = file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".json");
        return parse(text, json);
    }

    /** Parses and validates config text. */
    public GatewayConfig parse(String text, boolean json)
    {
        JsonNode root;
        try
        {
            root = (json ? JSON : YAML).readTree(text);
        }
        catch (JsonProcessingException e)
        {
            String where = e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
            throw new ConfigException("", "not valid " + (json ? "JSON" : "YAML") + where + ": " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject())
            throw new ConfigException("", "the config must be an object with at least 'bindings'");
        java.util.Set<String> secrets = substitution.apply(root);
        ConfigFile file = Options.bind(root, ConfigFile.class, "");
        return validate(file, secrets);
    }

    /**
     * Reads one route: {@code when}, {@code with}, and exactly one of {@code exit} and {@code targets} (a list of
     * objects with an {@code exit} each); every other key is the binding's, handed on as the route's settings.
     */
    private static RouteConfig route(JsonNode r, String routePath)
    {
        if (r == null || !r.isObject())
            throw new ConfigException(routePath, "must be an object with when and exit (or targets)");
        JsonNode whenNode = r.get("when");
        List<JsonNode> when = new ArrayList<>();
        if (whenNode != null && !whenNode.isNull())
        {
            if (!whenNode.isArray())
                throw new ConfigException(routePath + ".when", "wrong type (expected: a list of conditions)");
            whenNode.forEach(when::add);
        }
        JsonNode exitNode = r.get("exit");
        JsonNode targetsNode = r.get("targets");
        if (exitNode != null && targetsNode != null)
            throw new ConfigException(routePath + ".targets", "cannot be combined with exit (expected: exit for one "
                + "binding, or targets for several)");
        List<RouteTarget> targets = new ArrayList<>();
        String exit = null;
        if (targetsNode != null)
        {
            if (!targetsNode.isArray() || targetsNode.isEmpty())
                throw new ConfigException(routePath + ".targets", "wrong type (expected: a non-empty list of "
                    + "{ exit: BINDING, … })");
            for (int t = 0; t < targetsNode.size(); t++)
            {
                String targetPath = routePath + ".targets[" + t + "]";
                JsonNode target = targetsNode.get(t);
                if (!target.isObject())
                    throw new ConfigException(targetPath, "wrong type (expected: an object such as { exit: BINDING })");
                String targetExit = text(target.get("exit"), targetPath + ".exit");
                ObjectNode settings = ((ObjectNode)target).deepCopy();
                settings.remove("exit");
                targets.add(new RouteTarget(targetPath, targetExit, settings));
            }
        }
        else
        {
            exit = text(exitNode, routePath + ".exit");
        }
        ObjectNode settings = ((ObjectNode)r).deepCopy();
        settings.remove(List.of("when", "exit", "with", "targets"));
        JsonNode with = r.get("with");
        return new RouteConfig(routePath, when, exit, with == null || with.isNull() ? null : with, targets, settings);
    }

    private static String text(JsonNode node, String path)
    {
        if (node == null || node.isNull())
            throw new ConfigException(path, "must be set (expected: the name of a binding)");
        if (!node.isTextual() || node.asText().isBlank())
            throw new ConfigException(path, "wrong type (expected: the name of a binding)");
        return node.asText();
    }

    private static GatewayConfig validate(ConfigFile file, java.util.Set<String> secrets)
    {
        if (file.bindings() == null || file.bindings().isEmpty())
            throw new ConfigException("bindings", "must not be empty (expected: at least a server and a client binding)");
        Map<String, BindingConfig> bindings = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigFile.Binding> e : file.bindings().entrySet())
        {
            String name = e.getKey();
            String path = "bindings." + name;
            if (!name.matches("[A-Za-z0-9_.-]+"))
                throw new ConfigException(path, "binding names may use letters, digits, '_', '-' and '.' only");
            ConfigFile.Binding b = e.getValue();
            if (b == null)
                throw new ConfigException(path, "must be an object with type and kind");
            if (b.type() == null || b.type().isBlank())
                throw new ConfigException(path + ".type", "must be set (expected: a binding type such as openai or router)");
            if (b.kind() == null)
                throw new ConfigException(path + ".kind", "must be set (expected: server, proxy or client)");
            BindingKind kind;
            try
            {
                kind = BindingKind.valueOf(b.kind().toUpperCase(Locale.ROOT));
            }
            catch (IllegalArgumentException ex)
            {
                throw new ConfigException(path + ".kind", "value: \"" + b.kind() + "\" (expected: server, proxy or client)");
            }
            List<RouteConfig> routes = new ArrayList<>();
            if (b.routes() != null)
            {
                for (int i = 0; i < b.routes().size(); i++)
                    routes.add(route(b.routes().get(i), path + ".routes[" + i + "]"));
            }
            JsonNode options = b.options() == null || b.options().isNull() ? JSON.createObjectNode() : b.options();
            if (!options.isObject())
                throw new ConfigException(path + ".options", "wrong type (expected: an object)");
            bindings.put(name, new BindingConfig(name, b.type(), kind, options, b.exit(), routes));
        }
        GraphCheck.check(bindings);
        ConfigFile.Listen listen = file.listen() == null ? new ConfigFile.Listen(null, null, null, null, null, null)
            : file.listen();
        GatewayConfig.ClientTimeouts defaults = GatewayConfig.ClientTimeouts.DEFAULTS;
        return new GatewayConfig(
            listen.host() == null ? "0.0.0.0" : listen.host(),
            listen.port() == null ? 8080 : listen.port(),
            file.limits() == null || file.limits().maxBodyBytes() == null ? DEFAULT_MAX_BODY_BYTES : file.limits().maxBodyBytes(),
            file.shutdown() == null || file.shutdown().grace() == null ? DEFAULT_GRACE : file.shutdown().grace(),
            admin(file.admin()),
            file.execution() == null || file.execution().workers() == null ? 0 : file.execution().workers(),
            file.execution() == null || file.execution().bufferPoolBytes() == null
                ? dev.sluice.runtime.internal.http.Execution.DEFAULT_BUFFER_POOL_BYTES : file.execution().bufferPoolBytes(),
            new GatewayConfig.ClientTimeouts(listen.idleTimeout() == null ? defaults.idle() : listen.idleTimeout(),
                listen.headerTimeout() == null ? defaults.header() : listen.headerTimeout(),
                listen.minBodyRate() == null ? defaults.minBodyRate() : listen.minBodyRate()),
            listen.maxConnections() == null ? GatewayConfig.defaultMaxConnections() : listen.maxConnections(),
            admission(file.admission()), bindings, secrets, warmup(file.warmup()));
    }

    /** {@code warmup: off} (or {@code false}), or {@code warmup: { requests, max_time }}; absent: the defaults. */
    private static GatewayConfig.Warmup warmup(JsonNode node)
    {
        GatewayConfig.Warmup defaults = GatewayConfig.Warmup.DEFAULTS;
        if (node == null || node.isNull())
            return defaults;
        // YAML reads a bare off as false.
        if (node.isBoolean() && !node.booleanValue() || node.isTextual() && "off".equals(node.textValue()))
            return GatewayConfig.Warmup.OFF;
        if (!node.isObject())
            throw new ConfigException("warmup", "wrong type (expected: off, or an object with requests and max_time)");
        int requests = defaults.requests();
        java.time.Duration maxTime = defaults.maxTime();
        Iterator<Map.Entry<String, JsonNode>> fields = node.properties().iterator();
        while (fields.hasNext())
        {
            Map.Entry<String, JsonNode> field = fields.next();
            JsonNode value = field.getValue();
            switch (field.getKey())
            {
                case "requests" ->
                {
                    if (!value.isIntegralNumber() || !value.canConvertToInt() || value.intValue() < 1
                        || value.intValue() > 1_000_000)
                    {
                        throw new ConfigException("warmup.requests", "value: " + value
                            + " (expected: 1..1000000, or warmup: off)");
                    }
                    requests = value.intValue();
                }
                case "max_time" ->
                {
                    try
                    {
                        if (!value.isTextual())
                            throw new IllegalArgumentException("value: " + value + " (expected: a duration such as 5s)");
                        maxTime = dev.sluice.support.config.Durations.parse(value.textValue());
                    }
                    catch (IllegalArgumentException e)
                    {
                        throw new ConfigException("warmup.max_time", e.getMessage());
                    }
                    if (maxTime.toMillis() < 1 || maxTime.compareTo(java.time.Duration.ofMinutes(5)) > 0)
                        throw new ConfigException("warmup.max_time", "value: \"" + value.textValue() + "\" (expected: 1ms..5m)");
                }
                default -> throw new ConfigException("warmup." + field.getKey(), "unknown key (expected: requests, max_time)");
            }
        }
        return new GatewayConfig.Warmup(requests, maxTime);
    }

    /**
     * The admission block with its defaults; {@code min_limit <= initial_limit <= max_limit}, where an unset
     * {@code initial_limit} is {@code max_limit} (capped by {@code max_limit} too when only that is set).
     */
    private static GatewayConfig.Admission admission(ConfigFile.Admission a)
    {
        GatewayConfig.Admission d = GatewayConfig.Admission.DEFAULTS;
        if (a == null)
            return d;
        boolean adaptive = a.adaptive() == null || a.adaptive();
        int max = a.maxLimit() == null ? d.maxLimit() : a.maxLimit();
        int min = a.minLimit() == null ? Math.min(d.minLimit(), max) : a.minLimit();
        int initial = a.initialLimit() == null ? max : a.initialLimit();
        if (adaptive)
        {
            if (min > max)
                throw new ConfigException("admission.min_limit", "value: " + min + " (expected: at most max_limit, " + max + ")");
            if (initial < min || initial > max)
                throw new ConfigException("admission.initial_limit", "value: " + initial + " (expected: between min_limit, "
                    + min + ", and max_limit, " + max + ")");
        }
        else if (a.minLimit() != null || a.maxLimit() != null || a.targetDelay() != null)
        {
            String key = a.minLimit() != null ? "min_limit" : a.maxLimit() != null ? "max_limit" : "target_delay";
            throw new ConfigException("admission." + key, "applies to an adaptive limit only (expected: adaptive: true, "
                + "or initial_limit alone for a fixed limit)");
        }
        else
        {
            min = initial;
            max = initial;
        }
        return new GatewayConfig.Admission(a.enabled() == null || a.enabled(), adaptive, min, max, initial,
            a.targetDelay() == null ? d.targetDelay() : a.targetDelay(),
            a.retryAfter() == null ? d.retryAfterSeconds() : a.retryAfter().toSeconds());
    }

    private static GatewayConfig.Admin admin(ConfigFile.Admin admin)
    {
        if (admin == null)
            return GatewayConfig.Admin.OFF;
        boolean stages = Boolean.TRUE.equals(admin.stages());
        if (admin.port() == null)
        {
            if (stages)
                throw new ConfigException("admin.stages", "needs an admin listener (expected: admin.port too)");
            if (admin.token() != null)
                throw new ConfigException("admin.token", "needs an admin listener (expected: admin.port too)");
            return GatewayConfig.Admin.OFF;
        }
        return new GatewayConfig.Admin(admin.host() == null ? "127.0.0.1" : admin.host(), admin.port(), admin.token(), stages);
    }
}
