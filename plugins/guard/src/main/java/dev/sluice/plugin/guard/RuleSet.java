package dev.sluice.plugin.guard;

import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Message;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;

/**
 * The rules of one direction of one binding, and how they apply to a text: find every confirmed match of every rule,
 * count it, then block (the first blocking rule in config order wins), redact, or — in report mode — change nothing.
 *
 * <p>What is scanned: text parts, tool-call arguments and tool results (their text parts), in the system prompt and in
 * every message; every input of an embeddings request. Images and reasoning ({@link ContentPart.Thinking}, whose
 * provider signature a change would break) are not.
 *
 * <p>Cost of a miss: per text and rule, a pre-test that reads the text once without allocating (an e-mail needs an
 * {@code @}, numbers need a digit) and, when it passes, one {@link Matcher} and its scan. Nothing else is allocated:
 * the hit list is created at the first confirmed match.
 *
 * <p>Thread-safe: immutable apart from the rules' counters.
 */
final class RuleSet
{
    private static final Comparator<Span> BY_START = Comparator.comparingInt(Span::start);

    private final Rule[] rules;
    private final boolean report;

    /**
     * @param rules  the rules, in config order
     * @param report whether hits are only counted ({@code mode: report})
     */
    RuleSet(List<Rule> rules, boolean report)
    {
        this.rules = rules.toArray(new Rule[0]);
        this.report = report;
    }

    /** @return whether hits are only counted */
    boolean report()
    {
        return report;
    }

    /** A confirmed match of {@code rule} at {@code [start, end)}. */
    record Span(int start, int end, Rule rule)
    {
    }

    /**
     * Finds every confirmed match in {@code text[from, text.length())}; lookbehinds see the characters before
     * {@code from}.
     *
     * @param text the text
     * @param from where to start
     * @return the matches, or {@code null} if there are none
     */
    List<Span> scan(CharSequence text, int from)
    {
        List<Span> spans = null;
        int end = text.length();
        for (Rule rule : rules)
        {
            for (Detector detector : rule.detectors())
            {
                if (!detector.mayMatch(text))
                    continue;
                if (detector.anchored())
                {
                    spans = scanAnchored(detector, rule, text, from, spans);
                    continue;
                }
                Matcher m = detector.matcher(text);
                if (from > 0)
                    m.region(from, end).useTransparentBounds(true).useAnchoringBounds(false);
                while (m.find())
                {
                    if (m.end() == m.start())
                        continue;
                    if (!detector.confirm(text, m))
                        continue;
                    if (spans == null)
                        spans = new ArrayList<>(4);
                    spans.add(new Span(m.start(), m.end(), rule));
                }
            }
        }
        return spans;
    }

    /** Tries {@code detector} only where {@link Detector#canStartAt} allows; see there for why. */
    private static List<Span> scanAnchored(Detector detector, Rule rule, CharSequence text, int from, List<Span> spans)
    {
        int end = text.length();
        Matcher m = null;
        for (int i = from; i < end; i++)
        {
            if (!detector.canStartAt(text, i))
                continue;
            if (m == null)
                m = detector.matcher(text).useTransparentBounds(true).useAnchoringBounds(false);
            m.region(i, end);
            if (!m.lookingAt() || m.end() == i)
                continue;
            if (detector.confirm(text, m))
            {
                if (spans == null)
                    spans = new ArrayList<>(4);
                spans.add(new Span(i, m.end(), rule));
            }
            // Past the candidate either way, as find() would: a 16-digit run that is no phone holds no shorter phone.
            i = m.end() - 1;
        }
        return spans;
    }

    /**
     * Counts {@code spans} and returns the refusal if one of them belongs to a blocking rule (not in report mode).
     *
     * @return the refusal of the first blocking rule in config order, or {@code null}
     */
    GatewayException count(List<Span> spans)
    {
        Rule blocking = null;
        for (Span span : spans)
        {
            span.rule().hit(1);
            if (!report && span.rule().action() == Rule.Action.BLOCK
                && (blocking == null || indexOf(span.rule()) < indexOf(blocking)))
                blocking = span.rule();
        }
        return blocking == null ? null : blocking.blocked();
    }

    private int indexOf(Rule rule)
    {
        for (int i = 0; i < rules.length; i++)
        {
            if (rules[i] == rule)
                return i;
        }
        return -1;
    }

    /**
     * Appends {@code text[from, to)} to {@code out} with every redacting span replaced (spans may overlap and may
     * start before {@code from}; those that end by {@code from} are skipped).
     *
     * @param spans the spans, which this sorts by start
     */
    static void redact(CharSequence text, int from, int to, List<Span> spans, StringBuilder out)
    {
        spans.sort(BY_START);
        int pos = from;
        for (Span span : spans)
        {
            if (span.rule().action() != Rule.Action.REDACT || span.end() <= pos || span.start() >= to)
                continue;
            int start = Math.max(span.start(), pos);
            out.append(text, pos, start).append(span.rule().replacement());
            pos = Math.min(span.end(), to);
        }
        out.append(text, pos, to);
    }

    /**
     * Applies the rules to one whole text.
     *
     * @return the redacted text, or {@code null} if it stays as it is (no hit, or report mode)
     * @throws GatewayException the refusal of a blocking rule that matched
     */
    String apply(String text)
    {
        if (text.isEmpty())
            return null;
        List<Span> spans = scan(text, 0);
        if (spans == null)
            return null;
        GatewayException blocked = count(spans);
        if (blocked != null)
            throw blocked;
        if (report)
            return null;
        StringBuilder out = new StringBuilder(text.length() + 16);
        redact(text, 0, text.length(), spans, out);
        return out.toString();
    }

    /**
     * Applies the rules to every text, tool-call argument and tool result of a request.
     *
     * @return the redacted request, or {@code null} if it stays as it is
     * @throws GatewayException the refusal of a blocking rule that matched
     */
    ChatRequest apply(ChatRequest request)
    {
        List<ContentPart> system = apply(request.system());
        List<Message> messages = null;
        List<Message> original = request.messages();
        for (int i = 0; i < original.size(); i++)
        {
            Message message = original.get(i);
            List<ContentPart> content = apply(message.content());
            if (content == null)
                continue;
            if (messages == null)
                messages = new ArrayList<>(original);
            messages.set(i, new Message(message.role(), content, message.name()));
        }
        if (system == null && messages == null)
            return null;
        return new ChatRequest(request.model(), system == null ? request.system() : system,
            messages == null ? original : messages, request.tools(), request.toolChoice(), request.parallelToolCalls(),
            request.sampling(), request.responseFormat(), request.stream(), request.includeUsage(), request.user(),
            request.metadata(), request.extensions());
    }

    /**
     * Applies the rules to every input of an embeddings request, each a whole text.
     *
     * @return the request with its inputs redacted (their number and order kept), or {@code null} if it stays as it is
     * @throws GatewayException the refusal of a blocking rule that matched
     */
    Embeddings.Request apply(Embeddings.Request request)
    {
        List<String> original = request.inputs();
        List<String> inputs = null;
        for (int i = 0; i < original.size(); i++)
        {
            String redacted = apply(original.get(i));
            if (redacted == null)
                continue;
            if (inputs == null)
                inputs = new ArrayList<>(original);
            inputs.set(i, redacted);
        }
        return inputs == null ? null
            : new Embeddings.Request(request.model(), inputs, request.dimensions(), request.format(), request.user());
    }

    /**
     * Applies the rules to the content of a non-streamed answer.
     *
     * @return the redacted answer, or {@code null} if it stays as it is
     * @throws GatewayException the refusal of a blocking rule that matched
     */
    ChatResponse apply(ChatResponse response)
    {
        List<ContentPart> content = apply(response.content());
        if (content == null)
            return null;
        return new ChatResponse(response.id(), response.model(), content, response.stopReason(),
            response.rawStopReason(), response.usage(), response.created(), response.extensions(), response.dialect());
    }

    /** @return the parts with redactions, or {@code null} if none changed */
    private List<ContentPart> apply(List<ContentPart> parts)
    {
        List<ContentPart> changed = null;
        for (int i = 0; i < parts.size(); i++)
        {
            ContentPart part = parts.get(i);
            ContentPart replaced = null;
            if (part instanceof ContentPart.Text text)
            {
                String redacted = apply(text.text());
                if (redacted != null)
                    replaced = new ContentPart.Text(redacted, text.cacheControl());
            }
            else if (part instanceof ContentPart.ToolCall call)
            {
                // Arguments are JSON text; the detectors match no quote or backslash, so a redaction stays inside a
                // string and the JSON stays valid (a deny-list regex that matches quotes is the operator's choice).
                String redacted = apply(call.arguments());
                if (redacted != null)
                    replaced = new ContentPart.ToolCall(call.id(), call.name(), redacted, call.cacheControl());
            }
            else if (part instanceof ContentPart.ToolResult result)
            {
                List<ContentPart> content = apply(result.content());
                if (content != null)
                    replaced = new ContentPart.ToolResult(result.toolCallId(), content, result.error(), result.cacheControl());
            }
            if (replaced == null)
                continue;
            if (changed == null)
                changed = new ArrayList<>(parts);
            changed.set(i, replaced);
        }
        return changed;
    }
}
