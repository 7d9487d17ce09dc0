package dev.sluice.mock;

import java.util.List;

import static dev.sluice.mock.Template.CACHED;
import static dev.sluice.mock.Template.CREATED;
import static dev.sluice.mock.Template.ID;
import static dev.sluice.mock.Template.MODEL;
import static dev.sluice.mock.Template.OUTPUT;
import static dev.sluice.mock.Template.PROMPT;
import static dev.sluice.mock.Template.THOUGHTS;
import static dev.sluice.mock.Template.TOTAL;
import static dev.sluice.mock.Template.quote;

/**
 * Pre-rendered OpenAI Responses API answers for one mock configuration; errors, headers and credentials are
 * OpenAI's, as for Chat Completions.
 *
 * <p>Non-streamed: a {@code response} object. Streamed: the typed events, named and numbered
 * ({@code sequence_number}) as OpenAI sends them: {@code response.created}, {@code response.in_progress}, then per
 * output item {@code response.output_item.added}, its content ({@code response.content_part.added} and
 * {@code response.output_text.delta}s for a message, {@code response.reasoning_summary_part.added} and
 * {@code response.reasoning_summary_text.delta}s for reasoning, {@code response.function_call_arguments.delta}s for a
 * call), their {@code .done} events and {@code response.output_item.done}, then {@code response.completed} with the
 * whole response and its usage ({@code response.incomplete} for an answer the token cap ended, its message item and
 * the response {@code incomplete}, {@code incomplete_details.reason: max_output_tokens}). A refusal is a message whose
 * part is a {@code refusal}, streamed as {@code response.refusal.delta}s. A thinking answer is a
 * reasoning item (its summary the thinking text, its {@code encrypted_content} the thinking signature) followed by
 * the text.</p>
 */
final class ResponsesTemplates extends OpenAiTemplates
{
    private static final String RESPONSE_ID = "resp_mock_" + ID;
    private static final String MESSAGE_ID = "msg_mock_" + ID;
    private static final String REASONING_ID = "rs_mock_" + ID;
    private static final int TOOL_FRAGMENTS_PER_CALL = 4;
    private static final String USAGE = "{\"input_tokens\":" + PROMPT + ",\"input_tokens_details\":{\"cached_tokens\":" +
        CACHED + ",\"cache_write_tokens\":0},\"output_tokens\":" + OUTPUT + ",\"output_tokens_details\":" +
        "{\"reasoning_tokens\":" + THOUGHTS + "},\"total_tokens\":" + TOTAL + "}";
    private static final String INCOMPLETE_MAX_OUTPUT_TOKENS = "{\"reason\":\"max_output_tokens\"}";
    private static final Template STREAM_ERROR = Template.of("event: error\ndata: {\"type\":\"error\",\"code\":" +
        "\"server_error\",\"message\":\"The server had an error while processing your request. Sorry about that!\"," +
        "\"param\":null,\"sequence_number\":0}\n\n");

    /**
     * @param text the answer; the streamed text deltas concatenate to exactly this
     * @param events how many text deltas a stream has, at most one per code point of {@code text}
     */
    ResponsesTemplates(String text, int events)
    {
        super(MockDialect.OPENAI_RESPONSES);
        String[] pieces = Template.split(text, events);
        String message = message(text, "completed");

        StreamScript textStream = new Events().start().message(0, pieces, text).completed(List.of(message));
        Shape textShape = new Shape(response("completed", "[" + message + "]"), textStream, textStream, events, 0);
        shape(Answer.TEXT, textShape);
        // The cached tokens are a slot of the usage: the same templates report them when the values have them.
        shape(Answer.CACHED, textShape);

        String refusal = refusalMessage(MockModels.REFUSAL_TEXT);
        StreamScript refusalStream = new Events().start()
            .refusal(Template.splitAtMost(MockModels.REFUSAL_TEXT, events), MockModels.REFUSAL_TEXT)
            .completed(List.of(refusal));
        shape(Answer.REFUSAL, new Shape(response("completed", "[" + refusal + "]"), refusalStream, refusalStream,
            events, 0));

        // The token cap ends the message mid-way: the item and the response are incomplete.
        String capped = message(text, "incomplete");
        StreamScript cappedStream = new Events().start().message(0, pieces, text, "incomplete")
            .incomplete(List.of(capped));
        shape(Answer.MAX_TOKENS, new Shape(Template.of(responseJson("incomplete", INCOMPLETE_MAX_OUTPUT_TOKENS,
            "[" + capped + "]", USAGE)), cappedStream, cappedStream, events, 0));

        String reasoning = reasoning(THINKING_TEXT);
        StreamScript thinkingStream = new Events().start().reasoning(Template.split(THINKING_TEXT, THINKING_EVENTS))
            .message(1, pieces, text).completed(List.of(reasoning, message));
        shape(Answer.THINKING, new Shape(response("completed", "[" + reasoning + "," + message + "]"), thinkingStream,
            thinkingStream, events, THINKING_EVENTS + 1));

        String weather = call(0, WEATHER_CALL_ID, "get_weather", WEATHER_ARGUMENTS, "completed");
        String time = call(1, TIME_CALL_ID, "get_time", TIME_ARGUMENTS, "completed");
        StreamScript toolsStream = new Events().start().call(0, WEATHER_CALL_ID, "get_weather", WEATHER_ARGUMENTS)
            .call(1, TIME_CALL_ID, "get_time", TIME_ARGUMENTS).completed(List.of(weather, time));
        shape(Answer.TOOLS, new Shape(response("completed", "[" + weather + "," + time + "]"), toolsStream, toolsStream,
            2 + 2 * TOOL_FRAGMENTS_PER_CALL, 0));

        Template garbageBody = Template.of("{\"id\":\"resp_mock_garbage\",\"object\":\"response\",\"output\":[{\"type\":" +
            "\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hel");
        Events start = new Events().start();
        start.script.content("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\"," +
            "\"delta\":\"Hel\n\n");
        start.script.content("event: response.output_text.delta\ndata: this is not json\n\n");
        start.script.terminal();
        StreamScript garbageStream = start.script.event("event: response.completed\ndata: {\"type\":" +
            "\"response.completed\",\"response\":]}\n\n").build();
        shape(Answer.GARBAGE, new Shape(garbageBody, garbageStream, garbageStream, events, 0));
    }

    @Override
    Template streamError(boolean alternate, boolean first)
    {
        return STREAM_ERROR;
    }

    /** @return a {@code response} object with the given status and output, its usage filled per request */
    private static Template response(String status, String output)
    {
        return Template.of(responseJson(status, output, USAGE));
    }

    private static String responseJson(String status, String output, String usage)
    {
        return responseJson(status, "null", output, usage);
    }

    /** @param incompleteDetails the {@code incomplete_details} object, or {@code null} as JSON */
    private static String responseJson(String status, String incompleteDetails, String output, String usage)
    {
        return "{\"id\":\"" + RESPONSE_ID + "\",\"object\":\"response\",\"created_at\":" + CREATED + ",\"status\":\"" +
            status + "\",\"error\":null,\"incomplete_details\":" + incompleteDetails + ",\"instructions\":null," +
            "\"max_output_tokens\":null," +
            "\"model\":\"" + MODEL + "\",\"output\":" + output + ",\"parallel_tool_calls\":true," +
            "\"previous_response_id\":null,\"reasoning\":{\"effort\":null,\"summary\":null},\"store\":true," +
            "\"temperature\":1.0,\"text\":{\"format\":{\"type\":\"text\"}},\"tool_choice\":\"auto\",\"tools\":[]," +
            "\"top_p\":1.0,\"truncation\":\"disabled\",\"usage\":" + usage + ",\"user\":null,\"metadata\":{}}";
    }

    private static String outputText(String text)
    {
        return "{\"type\":\"output_text\",\"text\":\"" + quote(text) + "\",\"annotations\":[],\"logprobs\":[]}";
    }

    private static String message(String text, String status)
    {
        return "{\"id\":\"" + MESSAGE_ID + "\",\"type\":\"message\",\"status\":\"" + status + "\",\"role\":\"assistant\"," +
            "\"content\":[" + (text == null ? "" : outputText(text)) + "]}";
    }

    /** @return a completed message whose one part is a refusal */
    private static String refusalMessage(String refusal)
    {
        return "{\"id\":\"" + MESSAGE_ID + "\",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\"," +
            "\"content\":[" + refusalPart(refusal) + "]}";
    }

    private static String refusalPart(String refusal)
    {
        return "{\"type\":\"refusal\",\"refusal\":\"" + quote(refusal) + "\"}";
    }

    private static String reasoning(String summary)
    {
        return "{\"id\":\"" + REASONING_ID + "\",\"type\":\"reasoning\",\"summary\":[" +
            (summary == null ? "" : summaryText(summary)) + "]" +
            (summary == null ? "" : ",\"encrypted_content\":\"" + THINKING_SIGNATURE + "\"") + "}";
    }

    private static String summaryText(String text)
    {
        return "{\"type\":\"summary_text\",\"text\":\"" + quote(text) + "\"}";
    }

    private static String call(int index, String callId, String name, String arguments, String status)
    {
        return "{\"id\":\"fc_mock_" + index + "_" + ID + "\",\"type\":\"function_call\",\"status\":\"" + status +
            "\",\"arguments\":\"" + quote(arguments) + "\",\"call_id\":\"" + callId + "\",\"name\":\"" + name + "\"}";
    }

    /** Builds one stream's events, numbering them. */
    private static final class Events
    {
        final StreamScript.Builder script = StreamScript.builder();
        private int sequence;

        /** @return the event {@code type} with {@code fields} (JSON members after the type), framed */
        private String event(String type, String fields)
        {
            return "event: " + type + "\ndata: {\"type\":\"" + type + "\"," + fields + ",\"sequence_number\":" +
                sequence++ + "}\n\n";
        }

        Events start()
        {
            String inProgress = responseJson("in_progress", "[]", "null");
            script.event(event("response.created", "\"response\":" + inProgress));
            script.event(event("response.in_progress", "\"response\":" + inProgress));
            return this;
        }

        Events message(int output, String[] pieces, String text)
        {
            return message(output, pieces, text, "completed");
        }

        /** @param status the message item's status when done */
        Events message(int output, String[] pieces, String text, String status)
        {
            String item = "\"item_id\":\"" + MESSAGE_ID + "\",\"output_index\":" + output + ",\"content_index\":0";
            script.event(event("response.output_item.added", "\"output_index\":" + output + ",\"item\":" +
                ResponsesTemplates.message(null, "in_progress")));
            script.event(event("response.content_part.added", item + ",\"part\":" + outputText("")));
            for (String piece : pieces)
                script.content(event("response.output_text.delta", item + ",\"delta\":\"" + quote(piece) +
                    "\",\"logprobs\":[]"));
            script.terminal();
            script.event(event("response.output_text.done", item + ",\"text\":\"" + quote(text) + "\",\"logprobs\":[]"));
            script.event(event("response.content_part.done", item + ",\"part\":" + outputText(text)));
            script.event(event("response.output_item.done", "\"output_index\":" + output + ",\"item\":" +
                ResponsesTemplates.message(text, status)));
            return this;
        }

        /** A message whose one part is the refusal {@code text}, streamed as refusal deltas. */
        Events refusal(String[] pieces, String text)
        {
            String item = "\"item_id\":\"" + MESSAGE_ID + "\",\"output_index\":0,\"content_index\":0";
            script.event(event("response.output_item.added", "\"output_index\":0,\"item\":" +
                ResponsesTemplates.message(null, "in_progress")));
            script.event(event("response.content_part.added", item + ",\"part\":" + refusalPart("")));
            for (String piece : pieces)
                script.content(event("response.refusal.delta", item + ",\"delta\":\"" + quote(piece) + "\""));
            script.terminal();
            script.event(event("response.refusal.done", item + ",\"refusal\":\"" + quote(text) + "\""));
            script.event(event("response.content_part.done", item + ",\"part\":" + refusalPart(text)));
            script.event(event("response.output_item.done", "\"output_index\":0,\"item\":" + refusalMessage(text)));
            return this;
        }

        Events reasoning(String[] pieces)
        {
            String item = "\"item_id\":\"" + REASONING_ID + "\",\"output_index\":0,\"summary_index\":0";
            script.event(event("response.output_item.added", "\"output_index\":0,\"item\":" +
                ResponsesTemplates.reasoning(null)));
            script.event(event("response.reasoning_summary_part.added", item + ",\"part\":" + summaryText("")));
            for (String piece : pieces)
                script.content(event("response.reasoning_summary_text.delta", item + ",\"delta\":\"" + quote(piece) +
                    "\""));
            script.event(event("response.reasoning_summary_text.done", item + ",\"text\":\"" + quote(THINKING_TEXT) +
                "\""));
            script.event(event("response.reasoning_summary_part.done", item + ",\"part\":" + summaryText(THINKING_TEXT)));
            script.event(event("response.output_item.done", "\"output_index\":0,\"item\":" +
                ResponsesTemplates.reasoning(THINKING_TEXT)));
            return this;
        }

        Events call(int output, String callId, String name, String arguments)
        {
            String item = "\"item_id\":\"fc_mock_" + output + "_" + ID + "\",\"output_index\":" + output;
            script.event(event("response.output_item.added", "\"output_index\":" + output + ",\"item\":" +
                ResponsesTemplates.call(output, callId, name, "", "in_progress")));
            for (String fragment : Template.split(arguments, TOOL_FRAGMENTS_PER_CALL))
                script.content(event("response.function_call_arguments.delta", item + ",\"delta\":\"" +
                    quote(fragment) + "\""));
            if (output == 1)
                script.terminal();
            script.event(event("response.function_call_arguments.done", item + ",\"name\":\"" + name +
                "\",\"arguments\":\"" + quote(arguments) + "\""));
            script.event(event("response.output_item.done", "\"output_index\":" + output + ",\"item\":" +
                ResponsesTemplates.call(output, callId, name, arguments, "completed")));
            return this;
        }

        /** Ends the stream as the token cap ends it: {@code response.incomplete}. */
        StreamScript incomplete(List<String> output)
        {
            script.event(event("response.incomplete", "\"response\":" + responseJson("incomplete",
                INCOMPLETE_MAX_OUTPUT_TOKENS, "[" + String.join(",", output) + "]", USAGE)));
            return script.build();
        }

        StreamScript completed(List<String> output)
        {
            script.event(event("response.completed", "\"response\":" + responseJson("completed",
                "[" + String.join(",", output) + "]", USAGE)));
            return script.build();
        }
    }
}
