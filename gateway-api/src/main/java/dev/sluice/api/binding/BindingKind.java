package dev.sluice.api.binding;

/** The three kinds of binding, by their place in the chain. */
public enum BindingKind
{
    /** Accepts a dialect from clients on some paths and starts exchanges. */
    SERVER,
    /** Sees every exchange on its way in and its reply on its way out. */
    PROXY,
    /** Speaks a dialect to one upstream; the end of a chain. */
    CLIENT
}
