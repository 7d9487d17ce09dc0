package dev.sluice.support.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The JSON factory and mapper every codec shares: one instance per process (plugins get this class from the
 * runtime's class loader, never a copy of their own). Request-facing parsing limits are set here: nesting depth
 * {@value #MAX_DEPTH}, so a hostile body cannot exhaust the stack.
 */
public final class Json
{
    /** The deepest JSON nesting accepted in requests and responses. */
    public static final int MAX_DEPTH = 64;

    /** The shared factory, for streaming parsers and generators. */
    public static final JsonFactory FACTORY = JsonFactory.builder()
        .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
        .build();

    /** The shared mapper, for trees; does not fail on unknown properties (dialects evolve). */
    public static final ObjectMapper MAPPER = JsonMapper.builder(FACTORY)
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .build();

    private Json()
    {
    }
}
