package dev.sluice.api.model;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Objects;

/**
 * A function the model may call.
 *
 * @param parameters   the JSON schema of the arguments, forwarded intact ({@code null}: none)
 * @param strict       OpenAI's strict schema adherence flag, or {@code null}
 * @param cacheControl a cache breakpoint as raw JSON, or {@code null}
 */
public record Tool(String name, String description, JsonNode parameters, Boolean strict, JsonNode cacheControl)
{
    public Tool
    {
        Objects.requireNonNull(name, "name");
    }
}
