package dev.sluice.api.codec;

import java.util.Objects;

/**
 * What a cheap scan of a request body finds: the model, whether a stream is wanted, and where the model's JSON
 * string value sits in the body (so a route alias can splice another name in without a full parse).
 *
 * @param model      the model named by the client
 * @param stream     whether the client asked for a stream
 * @param modelStart byte offset of the model value's opening quote, or -1 if the model is not in the body
 * @param modelEnd   byte offset just past the model value's closing quote, or -1
 */
public record RequestPeek(String model, boolean stream, int modelStart, int modelEnd)
{
    public RequestPeek
    {
        Objects.requireNonNull(model, "model");
    }
}
