package dev.sluice.api.model;

import java.util.List;
import java.util.Objects;

/**
 * One turn of a conversation.
 *
 * @param role    who wrote it
 * @param content its parts, in order
 * @param name    an optional participant name ({@code null}: none)
 */
public record Message(Role role, List<ContentPart> content, String name)
{
    public Message
    {
        Objects.requireNonNull(role, "role");
        content = List.copyOf(content);
    }

    /** A message of one text part. */
    public static Message text(Role role, String text)
    {
        return new Message(role, List.of(new ContentPart.Text(text)), null);
    }

    /** Who authored a {@link Message}. */
    public enum Role
    {
        /** Instructions placed among the turns (a leading system prompt lives in {@link ChatRequest#system()}). */
        SYSTEM,
        /** The end user. */
        USER,
        /** The model. */
        ASSISTANT,
        /** Results of tool calls, sent back by the client. */
        TOOL
    }
}
