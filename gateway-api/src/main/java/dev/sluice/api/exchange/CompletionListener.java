package dev.sluice.api.exchange;

/**
 * Told once that an exchange is over: see {@link Completion}. Registered for one exchange with
 * {@link Exchange#onComplete(CompletionListener)} (a limiter releasing its slot) or for every exchange of the gateway
 * with {@link dev.sluice.api.binding.BindingContext#onComplete(CompletionListener)} (a request log, metrics).
 *
 * <p>It runs on the thread that completed the exchange — usually a selector or pool thread of the server: it must not
 * block and should take microseconds (hand slow work, such as writing a file, to
 * {@link dev.sluice.api.binding.BindingContext#executor()} through a bounded queue). An exception it throws is logged
 * and does not affect the exchange or the other listeners. The {@code Completion} is valid only during the call: copy
 * what you keep.
 */
@FunctionalInterface
public interface CompletionListener
{
    /** The exchange is over; {@code completion} says how. */
    void completed(Completion completion);
}
