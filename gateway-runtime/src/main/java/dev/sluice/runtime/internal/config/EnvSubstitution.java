package dev.sluice.runtime.internal.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.sluice.api.config.ConfigException;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Substitutes {@code ${{env.NAME}}} in a config tree's string values, from the environment, and collects the secrets:
 * the values of keys that name one ({@code api_key}, {@code secret}, {@code password}, … and lists under
 * {@code api_keys}), which must come from the environment and are never echoed in an error or a log.
 */
final class EnvSubstitution
{
    private static final Pattern ENV = Pattern.compile("\\$\\{\\{\\s*env\\.([A-Za-z_][A-Za-z0-9_]*)\\s*}}");
    private static final Pattern SECRET_KEY = Pattern.compile("(^|_)(api_key|secret|password|access_token|auth_token|bearer_token)$");
    /** Keys whose value is a list of secrets, each held to the same rules as one secret's value. */
    private static final Pattern SECRET_LIST_KEY = Pattern.compile("(^|_)api_keys$");
    private final Function<String, String> env;

    /** @param env the environment, {@code System::getenv} outside tests */
    EnvSubstitution(Function<String, String> env)
    {
        this.env = env;
    }

    /**
     * Substitutes in place every string value of {@code root}.
     *
     * @return the secrets' values, after substitution
     * @throws ConfigException naming the path of a variable that is not set or a secret written in the file
     */
    Set<String> apply(JsonNode root)
    {
        Set<String> secrets = new HashSet<>();
        substitute(root, "", secrets);
        return secrets;
    }

    private void substitute(JsonNode node, String path, Set<String> secrets)
    {
        if (node instanceof ObjectNode object)
        {
            Iterator<Map.Entry<String, JsonNode>> fields = object.properties().iterator();
            List<Map.Entry<String, JsonNode>> replacements = new ArrayList<>();
            while (fields.hasNext())
            {
                Map.Entry<String, JsonNode> field = fields.next();
                String childPath = path.isEmpty() ? field.getKey() : path + "." + field.getKey();
                JsonNode value = field.getValue();
                if (value.isTextual())
                {
                    String original = value.textValue();
                    String replaced = substituteText(original, childPath);
                    if (SECRET_KEY.matcher(field.getKey()).find() && !original.isEmpty())
                    {
                        if (!ENV.matcher(original.trim()).matches())
                            throw new ConfigException(childPath, "secrets come only from the environment (expected: \"${{env.NAME}}\")");
                        secrets.add(replaced);
                    }
                    if (!replaced.equals(original))
                        replacements.add(Map.entry(field.getKey(), new TextNode(replaced)));
                }
                else if (value instanceof ArrayNode list && SECRET_LIST_KEY.matcher(field.getKey()).find())
                {
                    substituteSecrets(list, childPath, secrets);
                }
                else
                {
                    substitute(value, childPath, secrets);
                }
            }
            for (Map.Entry<String, JsonNode> r : replacements)
                object.set(r.getKey(), r.getValue());
        }
        else if (node instanceof ArrayNode array)
        {
            for (int i = 0; i < array.size(); i++)
            {
                JsonNode value = array.get(i);
                String childPath = path + "[" + i + "]";
                if (value.isTextual())
                    array.set(i, new TextNode(substituteText(value.textValue(), childPath)));
                else
                    substitute(value, childPath, secrets);
            }
        }
    }

    /** Each text of a list of secrets ({@code api_keys}) comes from the environment and is a secret, like one secret. */
    private void substituteSecrets(ArrayNode list, String path, Set<String> secrets)
    {
        for (int i = 0; i < list.size(); i++)
        {
            JsonNode value = list.get(i);
            String childPath = path + "[" + i + "]";
            if (!value.isTextual())
            {
                // Not a key at all: the binding's options report the wrong type.
                substitute(value, childPath, secrets);
                continue;
            }
            String original = value.textValue();
            String replaced = substituteText(original, childPath);
            if (!original.isEmpty())
            {
                if (!ENV.matcher(original.trim()).matches())
                    throw new ConfigException(childPath, "secrets come only from the environment (expected: \"${{env.NAME}}\")");
                secrets.add(replaced);
            }
            list.set(i, new TextNode(replaced));
        }
    }

    private String substituteText(String text, String path)
    {
        if (text.indexOf("${{") < 0)
            return text;
        Matcher m = ENV.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find())
        {
            String value = env.apply(m.group(1));
            if (value == null)
                throw new ConfigException(path, "environment variable " + m.group(1) + " is not set");
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        if (out.indexOf("${{") >= 0)
            throw new ConfigException(path, "value: \"" + text + "\" (expected: ${{env.NAME}} substitutions only)");
        return out.toString();
    }
}
