package dev.sluice.support.json;

/**
 * Checks that bytes are exactly one well-formed JSON text (RFC 8259: one value, optionally surrounded by whitespace;
 * strings well-formed UTF-8 without raw control characters, valid escapes; numbers in JSON's grammar), nested at most
 * {@value Json#MAX_DEPTH} deep like everything the shared {@link Json#FACTORY} reads. It builds nothing: no String,
 * no token, no tree, no allocation at all (the nesting is kept as one bit per level in a {@code long}), one pass over
 * the bytes. It says whether the bytes are JSON, not what they mean: a relay uses it to refuse to pass on a provider's
 * garbage, and leaves the meaning to the client.
 *
 * <p>Stateless and thread-safe.
 *
 * <pre>{@code
 * if (!JsonValidator.isValid(body, 0, body.length))
 *     throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream answered with a body that is not valid JSON");
 * }</pre>
 */
public final class JsonValidator
{
    private JsonValidator()
    {
    }

    /** @return whether all of {@code bytes} is one JSON text */
    public static boolean isValid(byte[] bytes)
    {
        return isValid(bytes, 0, bytes.length);
    }

    /**
     * @param bytes  the array holding the text
     * @param offset where it starts
     * @param length its length
     * @return whether {@code bytes[offset, offset + length)} is one JSON text, nested at most {@value Json#MAX_DEPTH}
     * deep
     */
    public static boolean isValid(byte[] bytes, int offset, int length)
    {
        final int end = offset + length;
        // One bit per open container, the innermost at bit 0: 1 for an object, 0 for an array.
        long stack = 0;
        int depth = 0;
        int i = skipWhitespace(bytes, offset, end);
        while (true)
        {
            // A value starts at i.
            if (i >= end)
                return false;
            byte b = bytes[i];
            switch (b)
            {
                case '{' ->
                {
                    if (depth == Json.MAX_DEPTH)
                        return false;
                    stack = stack << 1 | 1;
                    depth++;
                    i = skipWhitespace(bytes, i + 1, end);
                    if (i < end && bytes[i] == '}')
                    {
                        stack >>>= 1;
                        depth--;
                        i++;
                    }
                    else
                    {
                        i = member(bytes, i, end);
                        if (i < 0)
                            return false;
                        continue;
                    }
                }
                case '[' ->
                {
                    if (depth == Json.MAX_DEPTH)
                        return false;
                    stack <<= 1;
                    depth++;
                    i = skipWhitespace(bytes, i + 1, end);
                    if (i < end && bytes[i] == ']')
                    {
                        stack >>>= 1;
                        depth--;
                        i++;
                    }
                    else
                        continue;
                }
                case '"' -> i = string(bytes, i + 1, end);
                case 't' -> i = literal(bytes, i, end, 't', 'r', 'u', 'e');
                case 'f' -> i = i + 5 <= end && bytes[i + 1] == 'a' ? literal(bytes, i + 1, end, 'a', 'l', 's', 'e') : -1;
                case 'n' -> i = literal(bytes, i, end, 'n', 'u', 'l', 'l');
                default -> i = number(bytes, i, end);
            }
            // After a value: a separator, the end of containers, or the end of the text.
            while (true)
            {
                if (i < 0)
                    return false;
                i = skipWhitespace(bytes, i, end);
                if (depth == 0)
                    return i == end;
                if (i >= end)
                    return false;
                b = bytes[i];
                boolean inObject = (stack & 1) != 0;
                if (b == ',')
                {
                    i = skipWhitespace(bytes, i + 1, end);
                    if (inObject)
                        i = member(bytes, i, end);
                    break;
                }
                if (b != (inObject ? '}' : ']'))
                    return false;
                stack >>>= 1;
                depth--;
                i++;
            }
            if (i < 0)
                return false;
        }
    }

    /**
     * Reads an object member's name and colon at {@code i}.
     *
     * @return where its value starts (after whitespace), or -1
     */
    private static int member(byte[] bytes, int i, int end)
    {
        if (i >= end || bytes[i] != '"')
            return -1;
        i = string(bytes, i + 1, end);
        if (i < 0)
            return -1;
        i = skipWhitespace(bytes, i, end);
        if (i >= end || bytes[i] != ':')
            return -1;
        return skipWhitespace(bytes, i + 1, end);
    }

    private static int skipWhitespace(byte[] bytes, int i, int end)
    {
        while (i < end)
        {
            byte b = bytes[i];
            if (b != ' ' && b != '\n' && b != '\r' && b != '\t')
                return i;
            i++;
        }
        return i;
    }

    /** @return the index after the four bytes {@code a b c d} at {@code i}, or -1 */
    private static int literal(byte[] bytes, int i, int end, char a, char b, char c, char d)
    {
        if (i + 4 > end || bytes[i] != a || bytes[i + 1] != b || bytes[i + 2] != c || bytes[i + 3] != d)
            return -1;
        return i + 4;
    }

    /** @return the index after the number at {@code i}, or -1 */
    private static int number(byte[] bytes, int i, int end)
    {
        if (i < end && bytes[i] == '-')
            i++;
        if (i >= end)
            return -1;
        if (bytes[i] == '0')
            i++;
        else if (isDigit(bytes[i]))
            i = digits(bytes, i + 1, end);
        else
            return -1;
        if (i < end && bytes[i] == '.')
        {
            if (i + 1 >= end || !isDigit(bytes[i + 1]))
                return -1;
            i = digits(bytes, i + 2, end);
        }
        if (i < end && (bytes[i] == 'e' || bytes[i] == 'E'))
        {
            i++;
            if (i < end && (bytes[i] == '+' || bytes[i] == '-'))
                i++;
            if (i >= end || !isDigit(bytes[i]))
                return -1;
            i = digits(bytes, i + 1, end);
        }
        return i;
    }

    private static int digits(byte[] bytes, int i, int end)
    {
        while (i < end && isDigit(bytes[i]))
            i++;
        return i;
    }

    private static boolean isDigit(byte b)
    {
        return b >= '0' && b <= '9';
    }

    /**
     * Reads the rest of a string whose opening quote is just before {@code i}.
     *
     * @return the index after its closing quote, or -1
     */
    private static int string(byte[] bytes, int i, int end)
    {
        while (i < end)
        {
            int b = bytes[i];
            if (b == '"')
                return i + 1;
            if (b == '\\')
            {
                if (i + 1 >= end)
                    return -1;
                switch (bytes[i + 1])
                {
                    case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> i += 2;
                    case 'u' ->
                    {
                        if (i + 6 > end || !isHex(bytes[i + 2]) || !isHex(bytes[i + 3]) || !isHex(bytes[i + 4])
                            || !isHex(bytes[i + 5]))
                            return -1;
                        i += 6;
                    }
                    default ->
                    {
                        return -1;
                    }
                }
            }
            else if (b >= 0x20)
                i++;
            else if (b >= 0)
                return -1;
            else
            {
                i = utf8(bytes, i, end);
                if (i < 0)
                    return -1;
            }
        }
        return -1;
    }

    private static boolean isHex(byte b)
    {
        return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F';
    }

    /**
     * Reads one multi-byte UTF-8 sequence at {@code i} (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
     *
     * @return the index after it, or -1
     */
    private static int utf8(byte[] bytes, int i, int end)
    {
        int lead = bytes[i] & 0xFF;
        int n;
        int min = 0x80;
        int max = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF)
            n = 1;
        else if (lead >= 0xE0 && lead <= 0xEF)
        {
            n = 2;
            if (lead == 0xE0)
                min = 0xA0;
            else if (lead == 0xED)
                max = 0x9F;
        }
        else if (lead >= 0xF0 && lead <= 0xF4)
        {
            n = 3;
            if (lead == 0xF0)
                min = 0x90;
            else if (lead == 0xF4)
                max = 0x8F;
        }
        else
            return -1;
        if (i + n >= end)
            return -1;
        int second = bytes[i + 1] & 0xFF;
        if (second < min || second > max)
            return -1;
        for (int k = 2; k <= n; k++)
        {
            int c = bytes[i + k] & 0xFF;
            if (c < 0x80 || c > 0xBF)
                return -1;
        }
        return i + n + 1;
    }
}
