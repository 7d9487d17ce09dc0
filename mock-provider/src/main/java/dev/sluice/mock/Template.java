package dev.sluice.mock;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

/**
 * Pre-rendered bytes of one answer, body or SSE event, with a few slots for what differs per request (id, time,
 * model, token counts).
 *
 * <p>Everything that does not depend on the request (the answer text, its deltas, the tool calls, the JSON
 * punctuation) is rendered to UTF-8 once, when the mock starts; a request only splices its numbers and its quoted
 * model between the fixed segments, into one array sized up front. A template without slots renders to its one
 * shared array with no allocation at all. This keeps every answer free of per-request JSON tree building.</p>
 *
 * <p>A template is written as a Java string in which a slot is a NUL character followed by a slot letter (the
 * constants below). The answer text is always JSON-quoted before it is put into a template, and JSON quoting
 * escapes NUL, so configured text can never be mistaken for a slot.</p>
 *
 * <pre>{@code
 * Template body = Template.of("{\"id\":\"msg_mock_" + Template.ID + "\",\"model\":\"" + Template.MODEL + "\"}");
 * byte[] bytes = body.bytes(values);
 * }</pre>
 */
final class Template
{
    /** The request's sequence number (a number). */
    static final String ID = "\u0000I";
    /** The answer's creation time in Unix seconds (a number). */
    static final String CREATED = "\u0000C";
    /** The requested model, JSON-quoted without the quotes. */
    static final String MODEL = "\u0000M";
    /** Prompt tokens, including cached ones. */
    static final String PROMPT = "\u0000P";
    /** Prompt tokens that were not read from a cache (Anthropic's {@code input_tokens}). */
    static final String UNCACHED = "\u0000U";
    /** Prompt tokens read from a cache. */
    static final String CACHED = "\u0000K";
    /** Answer tokens, without thinking. */
    static final String COMPLETION = "\u0000O";
    /** Thinking tokens. */
    static final String THOUGHTS = "\u0000T";
    /** Answer tokens including thinking (Anthropic's {@code output_tokens}). */
    static final String OUTPUT = "\u0000Q";
    /** Prompt plus answer plus thinking tokens. */
    static final String TOTAL = "\u0000S";

    private static final char MARK = '\u0000';
    private static final byte[] EMPTY = new byte[0];

    private final byte[][] literals;
    private final char[] slots;
    private final int literalLength;

    private Template(byte[][] literals, char[] slots)
    {
        this.literals = literals;
        this.slots = slots;
        int length = 0;
        for (byte[] literal : literals)
            length += literal.length;
        this.literalLength = length;
    }

    /**
     * @param template the text, with slots
     * @return the compiled template
     * @throws IllegalArgumentException on an unknown slot letter
     */
    static Template of(String template)
    {
        List<byte[]> literals = new ArrayList<>();
        StringBuilder slots = new StringBuilder();
        int from = 0;
        int mark;
        while ((mark = template.indexOf(MARK, from)) >= 0)
        {
            if (mark + 1 >= template.length() || "ICMPUKOTQS".indexOf(template.charAt(mark + 1)) < 0)
                throw new IllegalArgumentException("unknown slot at " + mark + " of " + template);
            literals.add(utf8(template.substring(from, mark)));
            slots.append(template.charAt(mark + 1));
            from = mark + 2;
        }
        literals.add(utf8(template.substring(from)));
        return new Template(literals.toArray(new byte[0][]), slots.toString().toCharArray());
    }

    /** @return whether the template has no slot, so its bytes are the same for every request */
    boolean isConstant()
    {
        return slots.length == 0;
    }

    /**
     * @param values the request's values; may be {@code null} for a constant template
     * @return the rendered bytes; for a constant template the shared array, which nobody may modify
     */
    byte[] bytes(Values values)
    {
        if (slots.length == 0)
            return literals[0];
        int size = literalLength;
        for (char slot : slots)
            size += values.length(slot);
        Splice splice = new Splice(size);
        for (int i = 0; i < slots.length; i++)
        {
            splice.put(literals[i]);
            values.put(slots[i], splice);
        }
        return splice.put(literals[slots.length]).done();
    }

    /**
     * Renders the template for a server that fills some slots itself, per request: every slot not in {@code open} is
     * filled from {@code values}; each slot in {@code open} is handed to {@code slot} by its letter, between the text
     * before and after it.
     *
     * @param values the values of the slots that are not open
     * @param open the letters of the slots left open, e.g. {@code "IC"} (the sequence number and the time)
     * @param text receives each piece of rendered text, in order
     * @param slot receives each open slot's letter, in order with the text
     */
    void render(Values values, String open, Consumer<String> text,
                Consumer<Character> slot)
    {
        StringBuilder pending = new StringBuilder();
        for (int i = 0; i <= slots.length; i++)
        {
            pending.append(new String(literals[i], StandardCharsets.UTF_8));
            if (i == slots.length)
                break;
            if (open.indexOf(slots[i]) >= 0)
            {
                text.accept(pending.toString());
                pending.setLength(0);
                slot.accept(slots[i]);
            }
            else
            {
                Splice one = new Splice(values.length(slots[i]));
                values.put(slots[i], one);
                pending.append(new String(one.done(), StandardCharsets.UTF_8));
            }
        }
        text.accept(pending.toString());
    }

    /** @return the rendered bytes, wrapped */
    ByteBuffer buffer(Values values)
    {
        return ByteBuffer.wrap(bytes(values));
    }

    /** @return the template text with its slots shown as {@code ${X}}, for debugging */
    @Override
    public String toString()
    {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < slots.length; i++)
            text.append(new String(literals[i], StandardCharsets.UTF_8)).append("${").append(slots[i]).append('}');
        return text.append(new String(literals[slots.length], StandardCharsets.UTF_8)).toString();
    }

    /** @return {@code s} JSON-quoted, without the surrounding quotes */
    static String quote(String s)
    {
        return new String(JsonStringEncoder.getInstance().quoteAsString(s));
    }

    /** @return {@code s} JSON-quoted as UTF-8, without the surrounding quotes */
    static byte[] quoteUtf8(String s)
    {
        return JsonStringEncoder.getInstance().quoteAsUTF8(s);
    }

    static byte[] utf8(String s)
    {
        return s.isEmpty() ? EMPTY : s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Splits a fixed text (the refusal) into {@code n} pieces as {@link #split}, or into one piece per character when
     * it has fewer than {@code n}: a provider configured for many events streams a short fixed text as it can.
     */
    static String[] splitAtMost(String text, int n)
    {
        return split(text, Math.min(n, text.codePointCount(0, text.length())));
    }

    /** Splits {@code text} into {@code n} non-empty pieces of nearly equal length, never inside a code point. */
    static String[] split(String text, int n)
    {
        int[] codePoints = text.codePoints().toArray();
        if (n < 1 || n > codePoints.length)
            throw new IllegalArgumentException("events: " + n + " (expected: 1 to " + codePoints.length +
                ", at most one event per character of the text)");
        String[] pieces = new String[n];
        for (int i = 0; i < n; i++)
        {
            int from = (int)((long)i * codePoints.length / n);
            int to = (int)((long)(i + 1) * codePoints.length / n);
            pieces[i] = new String(codePoints, from, to - from);
        }
        return pieces;
    }

    static int digits(long n)
    {
        int digits = 1;
        for (long v = n; v >= 10; v /= 10)
            digits++;
        return digits;
    }

    /**
     * What one request puts into the slots.
     *
     * @param id the request's sequence number
     * @param created Unix seconds
     * @param model the requested model, JSON-quoted as UTF-8 without the quotes
     * @param prompt prompt tokens, cached ones included
     * @param cached prompt tokens read from a cache, at most {@code prompt}
     * @param completion answer tokens without thinking
     * @param thoughts thinking tokens
     */
    record Values(long id, long created, byte[] model, long prompt, long cached, long completion, long thoughts)
    {
        /** Values for an answer that only needs an id (error bodies). */
        static Values ofId(long id)
        {
            return new Values(id, 0, EMPTY, 0, 0, 0, 0);
        }

        private long number(char slot)
        {
            return switch (slot)
            {
                case 'I' -> id;
                case 'C' -> created;
                case 'P' -> prompt;
                case 'U' -> prompt - cached;
                case 'K' -> cached;
                case 'O' -> completion;
                case 'T' -> thoughts;
                case 'Q' -> completion + thoughts;
                case 'S' -> prompt + completion + thoughts;
                default -> throw new IllegalStateException("slot " + slot);
            };
        }

        private int length(char slot)
        {
            return slot == 'M' ? model.length : digits(number(slot));
        }

        private void put(char slot, Splice splice)
        {
            if (slot == 'M')
                splice.put(model);
            else
                splice.put(number(slot));
        }
    }

    /** Concatenation into an array sized up front: one allocation, no resizing. */
    static final class Splice
    {
        private final byte[] out;
        private int pos;

        Splice(int size)
        {
            out = new byte[size];
        }

        Splice put(byte[] bytes)
        {
            System.arraycopy(bytes, 0, out, pos, bytes.length);
            pos += bytes.length;
            return this;
        }

        /** Appends a non-negative number in ASCII decimal. */
        Splice put(long n)
        {
            int end = pos + digits(n);
            int i = end;
            long v = n;
            do
            {
                out[--i] = (byte)('0' + v % 10);
                v /= 10;
            }
            while (v != 0);
            pos = end;
            return this;
        }

        byte[] done()
        {
            if (pos != out.length)
                throw new IllegalStateException("spliced " + pos + " bytes, sized " + out.length);
            return out;
        }
    }
}
