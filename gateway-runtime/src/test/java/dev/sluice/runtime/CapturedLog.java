package dev.sluice.runtime;

import org.eclipse.jetty.logging.JettyLogger;
import org.eclipse.jetty.logging.StdErrAppender;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The runtime's log (jetty-slf4j-impl's {@link StdErrAppender}, the runtime's SLF4J backend) kept in memory as well as
 * written where it was going, from {@link #start()} to {@link #close()}. Thread-safe.
 *
 * <pre>{@code
 * CapturedLog log = CapturedLog.start();
 * int mark = log.size();
 * ...
 * assertThat(log.since(mark)).contains("answers again");
 * log.close();
 * }</pre>
 */
final class CapturedLog extends OutputStream implements AutoCloseable
{
    private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
    private final PrintStream original;
    private final PrintStream going;

    private CapturedLog(PrintStream original)
    {
        this.original = original;
        // null: the appender writes to whatever System.err is when it logs.
        this.going = original != null ? original : System.err;
    }

    /** @return the log, captured from now on */
    static CapturedLog start()
    {
        StdErrAppender appender = appender();
        CapturedLog log = new CapturedLog(appender.getStream());
        appender.setStream(new PrintStream(log, true, StandardCharsets.UTF_8));
        return log;
    }

    private static StdErrAppender appender()
    {
        return (StdErrAppender) ((JettyLogger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).getAppender();
    }

    @Override
    public void write(int b)
    {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] bytes, int offset, int length)
    {
        kept.write(bytes, offset, length);
        going.write(bytes, offset, length);
    }

    /** @return how many bytes were captured so far: a mark for {@link #since} */
    synchronized int size()
    {
        return kept.size();
    }

    /** @return what was logged after {@code mark} */
    synchronized String since(int mark)
    {
        byte[] all = kept.toByteArray();
        return new String(all, mark, all.length - mark, StandardCharsets.UTF_8);
    }

    /** Gives the appender its stream back. */
    @Override
    public void close()
    {
        appender().setStream(original);
    }
}
