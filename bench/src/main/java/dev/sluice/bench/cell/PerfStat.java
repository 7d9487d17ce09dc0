package dev.sluice.bench.cell;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Parses {@code perf stat -x, -o FILE -e context-switches,cpu-migrations -p PID -- sleep N}: CSV lines
 * {@code value,unit,event,run time,percentage,…}; comments start with {@code #}. A counter perf could not read shows
 * {@code <not counted>} or {@code <not supported>} as its value and is left out.
 */
final class PerfStat
{
    private PerfStat()
    {
    }

    /**
     * @param text perf's output file
     * @return event name to count, for the counters that were read
     */
    static Map<String, Long> parse(String text)
    {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String line : text.split("\n"))
        {
            String l = line.trim();
            if (l.isEmpty() || l.startsWith("#"))
                continue;
            String[] f = l.split(",", -1);
            if (f.length < 3)
                continue;
            try
            {
                // Some perf versions append a modifier to the event name (context-switches:u).
                String event = f[2].trim();
                int colon = event.indexOf(':');
                counts.put(colon < 0 ? event : event.substring(0, colon), Long.parseLong(f[0].trim()));
            }
            catch (NumberFormatException x)
            {
                // <not counted>, <not supported>: no figure for that counter.
            }
        }
        return counts;
    }
}
