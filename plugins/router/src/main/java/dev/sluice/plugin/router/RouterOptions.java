package dev.sluice.plugin.router;

/**
 * The router's {@code options}: there are none. Routes live under the binding's {@code routes} key; binding this
 * empty record makes any key written under {@code options} a startup error naming its path.
 */
public record RouterOptions()
{
}
