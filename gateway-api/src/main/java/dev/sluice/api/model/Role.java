package dev.sluice.api.model;

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
