package dev.sluice.support.json;

/** Small JSON string helpers for codecs that write bytes by hand. */
public final class JsonStrings
{
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonStrings()
    {
    }

    /** @return {@code s} as a quoted, escaped JSON string literal */
    public static String quote(String s)
    {
        StringBuilder b = new StringBuilder(s.length() + 2);
        b.append('"');
        for (int i = 0; i < s.length(); i++)
        {
            char c = s.charAt(i);
            switch (c)
            {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default ->
                {
                    if (c < 0x20)
                        b.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
                    else
                        b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }
}
