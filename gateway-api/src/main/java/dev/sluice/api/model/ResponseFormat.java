package dev.sluice.api.model;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Objects;

/**
 * The shape the answer must have.
 *
 * @param type   text, any JSON object, or JSON matching {@code schema}
 * @param name   the schema's name ({@code JSON_SCHEMA} only), or {@code null}
 * @param schema the JSON schema, forwarded intact, or {@code null}
 * @param strict strict adherence, or {@code null}
 */
public record ResponseFormat(Type type, String name, JsonNode schema, Boolean strict)
{
    /** The kinds of format. */
    public enum Type
    {
        TEXT, JSON_OBJECT, JSON_SCHEMA
    }

    public ResponseFormat
    {
        Objects.requireNonNull(type, "type");
    }
}
