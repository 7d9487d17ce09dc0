package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses the table {@code strace -c -f} writes when it detaches: one row per system call with its call count, then a
 * {@code total} row.
 *
 * <pre>
 * % time     seconds  usecs/call     calls    errors syscall
 * ------ ----------- ----------- --------- --------- ----------------
 *  68.93    0.051732          32      1568       782 futex
 * ------ ----------- ----------- --------- --------- ----------------
 * 100.00    0.075053          47      1585       787 total
 * </pre>
 *
 * <p>Columns are found from the dashed separator line, not by counting tokens: {@code errors} is blank for calls that
 * never failed, and older straces leave {@code usecs/call} blank on the total row, so a token count is ambiguous.</p>
 *
 * @param calls system call name to calls, most called first (the total row excluded)
 * @param total the total row's calls (the sum of the rows when the total row is missing)
 */
record StraceSummary(Map<String, Long> calls, long total)
{
    /**
     * @param text the file {@code strace -c -o FILE} wrote
     * @return the calls
     * @throws IllegalArgumentException if there is no strace summary table in it
     */
    static StraceSummary parse(String text)
    {
        String[] lines = text.split("\n");
        int header = -1;
        for (int i = 0; i < lines.length; i++)
        {
            if (lines[i].contains("calls") && lines[i].contains("syscall"))
            {
                header = i;
                break;
            }
        }
        if (header < 0 || header + 1 >= lines.length || !lines[header + 1].trim().startsWith("---"))
            throw new IllegalArgumentException("not an strace -c summary (no header and separator line)");
        List<String> headerNames = columns(lines[header], spans(lines[header + 1]));
        int callsColumn = headerNames.indexOf("calls");
        int nameColumn = headerNames.size() - 1;
        if (callsColumn < 0)
            throw new IllegalArgumentException("not an strace -c summary (no calls column)");
        List<int[]> spans = spans(lines[header + 1]);
        Map<String, Long> calls = new LinkedHashMap<>();
        Long total = null;
        for (int i = header + 2; i < lines.length; i++)
        {
            String line = lines[i];
            if (line.isBlank() || line.trim().startsWith("---"))
                continue;
            List<String> cells = columns(line, spans);
            if (cells.size() <= nameColumn || cells.get(callsColumn).isEmpty())
                continue;
            String name = cells.get(nameColumn);
            long n;
            try
            {
                n = Long.parseLong(cells.get(callsColumn));
            }
            catch (NumberFormatException x)
            {
                continue;
            }
            if ("total".equals(name))
                total = n;
            else
                calls.merge(name, n, Long::sum);
        }
        if (calls.isEmpty() && total == null)
            throw new IllegalArgumentException("an strace -c summary without rows");
        Map<String, Long> sorted = new LinkedHashMap<>();
        calls.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
            .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        long sum = calls.values().stream().mapToLong(Long::longValue).sum();
        return new StraceSummary(sorted, total != null ? total : sum);
    }

    /**
     * @param requests requests completed while strace was attached
     * @param top how many of the most frequent calls to keep
     * @return the most frequent calls per request, most frequent first
     */
    Map<String, Double> perRequest(long requests, int top)
    {
        Map<String, Double> per = new LinkedHashMap<>();
        if (requests <= 0)
            return per;
        calls.entrySet().stream().limit(top).forEach(e -> per.put(e.getKey(), (double)e.getValue() / requests));
        return per;
    }

    // [start, end) of each run of dashes: the columns, whose values are right-aligned under them (the last is left-aligned).
    private static List<int[]> spans(String separator)
    {
        List<int[]> spans = new ArrayList<>();
        int i = 0;
        while (i < separator.length())
        {
            if (separator.charAt(i) == '-')
            {
                int start = i;
                while (i < separator.length() && separator.charAt(i) == '-')
                {
                    i++;
                }
                spans.add(new int[]{start, i});
            }
            else
                i++;
        }
        return spans;
    }

    private static List<String> columns(String line, List<int[]> spans)
    {
        List<String> cells = new ArrayList<>();
        for (int c = 0; c < spans.size(); c++)
        {
            // A cell runs from the previous column's end to this column's end (right-aligned numbers may start before
            // their dashes); the last (the call name) runs to the end of the line.
            int start = c == 0 ? 0 : spans.get(c - 1)[1];
            int end = c == spans.size() - 1 ? line.length() : spans.get(c)[1];
            if (start >= line.length())
                cells.add("");
            else
                cells.add(line.substring(start, Math.min(end, line.length())).trim());
        }
        return cells;
    }
}
