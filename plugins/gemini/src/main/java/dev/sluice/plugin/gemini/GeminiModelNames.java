package dev.sluice.plugin.gemini;

import java.nio.charset.StandardCharsets;

/**
 * Gemini's resource names of models: a base model is {@code models/{id}}, a tuned model {@code tunedModels/{id}}. The
 * gateway knows a base model by its id ({@code gemini-2.5-flash}, the name routes use) and a tuned model by its whole
 * name ({@code tunedModels/my-model}), so that a route tells them apart. Stateless.
 */
final class GeminiModelNames
{
    /** The collection of base models, as a name prefix. */
    static final String MODELS = "models/";
    /** The collection of tuned models, as a name prefix. */
    static final String TUNED = "tunedModels/";

    private GeminiModelNames()
    {
    }

    /** @return the resource name of {@code model}: itself when it names its collection, else {@code models/{model}} */
    static String resourceName(String model)
    {
        return model.startsWith(MODELS) || model.startsWith(TUNED) ? model : MODELS + model;
    }

    /**
     * @return the path of {@code model} below an API version: {@code /tunedModels/{id}} for a tuned model,
     *         {@code /models/{id}} for any other (a leading {@code models/} dropped), the id percent-encoded as one
     *         path segment
     */
    static String path(String model)
    {
        if (model.startsWith(TUNED))
            return "/" + TUNED + encodeSegment(model.substring(TUNED.length()));
        return "/" + MODELS + encodeSegment(model.startsWith(MODELS) ? model.substring(MODELS.length()) : model);
    }

    /** Percent-encodes everything but RFC 3986 unreserved characters, so a model name is one path segment. */
    static String encodeSegment(String segment)
    {
        StringBuilder b = null;
        byte[] bytes = segment.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i++)
        {
            int c = bytes[i] & 0xFF;
            boolean unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
                || c == '.' || c == '_' || c == '~';
            if (unreserved && b == null)
                continue;
            if (b == null)
                b = new StringBuilder(bytes.length + 8).append(segment, 0, i);
            if (unreserved)
                b.append((char)c);
            else
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                    .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
        }
        return b == null ? segment : b.toString();
    }
}
