package dev.sluice.api.admin;

import java.util.concurrent.CompletionStage;

/**
 * Serves one admin endpoint. Called on a server thread: never block; answer at once or complete the stage later
 * (blocking work goes to {@link dev.sluice.api.binding.BindingContext#executor()}). A failed stage, or an exception,
 * answers 500 with a generic JSON message; the cause is logged.
 */
@FunctionalInterface
public interface AdminHandler
{
    /** Handles {@code request}. */
    CompletionStage<AdminResponse> handle(AdminRequest request);
}
