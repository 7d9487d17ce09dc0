package dev.sluice.support.config;

import dev.sluice.api.config.ConfigException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.NullNode;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.stream.Collectors;

/**
 * Binds config trees to option records, strictly: unknown keys, wrong types and failed record validation are
 * {@link ConfigException}s naming the exact path. JSON names are snake_case versions of record components
 * ({@code maxConnections} is {@code max_connections}); {@link Duration}s are written {@code 30s}, {@code 250ms}.
 *
 * <p>Record compact constructors validate and throw {@link IllegalArgumentException} with a message that starts
 * with the field name ({@code "url: must be set"}); the path is completed from it.
 *
 * <pre>{@code
 * public record DenyWordsOptions(List<String> words, boolean ignoreCase) { ... }
 * DenyWordsOptions options = Options.bind(config.options(), DenyWordsOptions.class, config.path() + ".options");
 * }</pre>
 */
public final class Options
{
    private static final ObjectMapper STRICT = JsonMapper.builder()
        .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        .addModule(new SimpleModule("sluice-durations").addDeserializer(Duration.class, new DurationDeserializer()))
        .withCoercionConfig(LogicalType.Textual, c -> c
            .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
        .build();

    private Options()
    {
    }

    /**
     * Binds {@code node} to {@code type}. A missing or null node binds as an empty object, so records with all
     * optional fields get their defaults.
     *
     * @param path the dotted path of {@code node}, for messages (e.g. {@code bindings.deny.options})
     */
    public static <T> T bind(JsonNode node, Class<T> type, String path)
    {
        JsonNode n = node == null || node instanceof NullNode || node.isMissingNode() ? STRICT.createObjectNode() : node;
        // Unknown keys first: Jackson builds a record before it reports them, so a misspelt required key would
        // otherwise surface as "must be set" instead of naming the typo.
        checkKeys(n, type, path);
        try
        {
            return STRICT.treeToValue(n, type);
        }
        catch (JsonMappingException e)
        {
            throw toConfigException(e, path);
        }
        catch (IOException | IllegalArgumentException e)
        {
            throw new ConfigException(path, String.valueOf(e.getMessage()));
        }
    }

    private static void checkKeys(JsonNode node, java.lang.reflect.Type type, String path)
    {
        Class<?> raw = type instanceof Class<?> c ? c
            : type instanceof java.lang.reflect.ParameterizedType p && p.getRawType() instanceof Class<?> c2 ? c2 : null;
        if (raw == null)
            return;
        if (raw.isRecord() && node.isObject())
        {
            java.util.Map<String, java.lang.reflect.RecordComponent> components = new java.util.TreeMap<>();
            for (java.lang.reflect.RecordComponent rc : raw.getRecordComponents())
                components.put(SNAKE.translate(rc.getName()), rc);
            for (java.util.Iterator<String> names = node.fieldNames(); names.hasNext(); )
            {
                String name = names.next();
                String childPath = path == null || path.isEmpty() ? name : path + "." + name;
                java.lang.reflect.RecordComponent rc = components.get(name);
                if (rc == null)
                {
                    throw new ConfigException(childPath, components.isEmpty() ? "unknown key (expected: no keys)"
                        : "unknown key (expected one of: " + String.join(", ", components.keySet()) + ")");
                }
                checkKeys(node.get(name), rc.getGenericType(), childPath);
            }
        }
        else if (java.util.List.class.isAssignableFrom(raw) && node.isArray()
            && type instanceof java.lang.reflect.ParameterizedType p)
        {
            for (int i = 0; i < node.size(); i++)
                checkKeys(node.get(i), p.getActualTypeArguments()[0], path + "[" + i + "]");
        }
        else if (java.util.Map.class.isAssignableFrom(raw) && node.isObject()
            && type instanceof java.lang.reflect.ParameterizedType p)
        {
            for (java.util.Iterator<String> names = node.fieldNames(); names.hasNext(); )
            {
                String name = names.next();
                checkKeys(node.get(name), p.getActualTypeArguments()[1], path == null || path.isEmpty() ? name : path + "." + name);
            }
        }
    }

    private static final PropertyNamingStrategies.SnakeCaseStrategy SNAKE = new PropertyNamingStrategies.SnakeCaseStrategy();

    /**
     * Checks a {@code path} option in a record's compact constructor.
     *
     * <pre>{@code
     * path = Options.path(path, "/chat/completions");
     * }</pre>
     *
     * @param path        the configured path, or {@code null}
     * @param defaultPath what {@code null} stands for
     * @return {@code path}, or {@code defaultPath} for {@code null}
     * @throws IllegalArgumentException {@code path: value: "x" (expected: a path starting with /)}, which
     *                                  {@link #bind} reports under the option's path
     */
    public static String path(String path, String defaultPath)
    {
        if (path == null)
            return defaultPath;
        if (!path.startsWith("/"))
            throw new IllegalArgumentException("path: value: \"" + path + "\" (expected: a path starting with /)");
        return path;
    }

    /** Turns a Jackson binding failure into a {@link ConfigException} whose path points at the faulty value. */
    public static ConfigException toConfigException(JsonMappingException e, String basePath)
    {
        StringBuilder path = new StringBuilder(basePath == null ? "" : basePath);
        for (JsonMappingException.Reference ref : e.getPath())
        {
            if (ref.getFieldName() != null)
                path.append(path.length() == 0 ? "" : ".").append(ref.getFieldName());
            else if (ref.getIndex() >= 0)
                path.append('[').append(ref.getIndex()).append(']');
        }
        if (e instanceof UnrecognizedPropertyException u)
        {
            Collection<Object> known = u.getKnownPropertyIds();
            String expected = known == null ? "" : known.stream().map(String::valueOf).sorted().collect(Collectors.joining(", "));
            return new ConfigException(path.toString(), expected.isEmpty() ? "unknown key (expected: no keys)"
                : "unknown key (expected one of: " + expected + ")");
        }
        if (e instanceof ValueInstantiationException v && v.getCause() != null)
        {
            String msg = String.valueOf(v.getCause().getMessage());
            int colon = msg.indexOf(": ");
            if (colon > 0 && msg.substring(0, colon).matches("[a-z_\\[\\]0-9.]+"))
                return new ConfigException(path + (path.length() == 0 ? "" : ".") + msg.substring(0, colon), msg.substring(colon + 2));
            return new ConfigException(path.toString(), msg);
        }
        if (e instanceof InvalidFormatException f)
        {
            return new ConfigException(path.toString(),
                "value: " + quoteValue(f.getValue()) + " (expected: " + describe(f.getTargetType()) + ")");
        }
        if (e instanceof MismatchedInputException m)
        {
            Throwable cause = m.getCause();
            if (cause instanceof IllegalArgumentException && cause.getMessage() != null)
                return new ConfigException(path.toString(), cause.getMessage());
            String original = m.getOriginalMessage();
            if (original != null && original.startsWith("value: "))
                return new ConfigException(path.toString(), original);
            return new ConfigException(path.toString(), "wrong type (expected: " + describe(m.getTargetType()) + ")");
        }
        if (e.getCause() instanceof IllegalArgumentException iae && iae.getMessage() != null)
            return new ConfigException(path.toString(), iae.getMessage());
        return new ConfigException(path.toString(), e.getOriginalMessage());
    }

    private static String quoteValue(Object value)
    {
        return value instanceof String ? "\"" + value + "\"" : String.valueOf(value);
    }

    private static String describe(Class<?> type)
    {
        if (type == null)
            return "another type";
        if (type == String.class)
            return "a string";
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class)
            return "an integer";
        if (type == double.class || type == Double.class)
            return "a number";
        if (type == boolean.class || type == Boolean.class)
            return "true or false";
        if (type == Duration.class)
            return "a duration such as 30s";
        if (Collection.class.isAssignableFrom(type))
            return "a list";
        if (type.isEnum())
        {
            StringBuilder b = new StringBuilder("one of: ");
            Object[] constants = type.getEnumConstants();
            for (int i = 0; i < constants.length; i++)
                b.append(i == 0 ? "" : ", ").append(constants[i].toString().toLowerCase(java.util.Locale.ROOT));
            return b.toString();
        }
        if (type.isRecord() || java.util.Map.class.isAssignableFrom(type))
            return "an object";
        return type.getSimpleName();
    }

    private static final class DurationDeserializer extends JsonDeserializer<Duration>
    {
        @Override
        public Duration deserialize(JsonParser p, DeserializationContext ctxt) throws IOException
        {
            if (!p.currentToken().isScalarValue() || p.currentToken().isNumeric() || p.currentToken().isBoolean())
                throw MismatchedInputException.from(p, Duration.class, "value: " + p.getText() + " (expected: a duration such as 250ms, 30s, 5m)");
            try
            {
                return Durations.parse(p.getText());
            }
            catch (IllegalArgumentException e)
            {
                throw MismatchedInputException.from(p, Duration.class, e.getMessage());
            }
        }
    }
}
