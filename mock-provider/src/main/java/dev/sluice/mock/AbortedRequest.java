package dev.sluice.mock;

import java.time.Instant;

/**
 * A request the client abandoned while the {@link MockProvider} was still answering it: the peer closed the
 * connection or reset the stream while an answer was delayed ({@code mock-slow-}, {@code mock-hang}, the
 * configured delays) or while events were being streamed.
 *
 * <p>A gateway test uses these to prove that a client disconnect cancelled the upstream request. Failures the
 * mock causes itself ({@code mock-cut-}) are not aborts.</p>
 *
 * @param request the request, or {@code null} when recording is disabled
 * @param cause what Jetty reported: the write failure, the stream reset, or the end of the connection
 * @param eventsWritten how many response writes (SSE events, or the body) had completed before the abort
 * @param abortedAt wall-clock time the abort was noticed
 */
public record AbortedRequest(RecordedRequest request, Throwable cause, int eventsWritten, Instant abortedAt)
{
}
