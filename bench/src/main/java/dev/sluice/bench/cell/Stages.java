package dev.sluice.bench.cell;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The gateway's per-stage table from {@code GET /_sluice/stages}:
 * {@code {"count":N,"stages":[{"name":"read_body","p50_us":…,"p90_us":…,"p99_us":…,"mean_us":…},…]}}.
 *
 * @param count the number of exchanges the table covers
 * @param rows  one row per stage, in the gateway's order
 * @param error why there is no table (the endpoint is missing, …), or null
 */
record Stages(long count, List<StageRow> rows, String error)
{
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One stage.
     *
     * @param name   the stage
     * @param p50Us  median time in it
     * @param p90Us  90th percentile
     * @param p99Us  99th percentile
     * @param meanUs mean
     */
    record StageRow(String name, Double p50Us, Double p90Us, Double p99Us, Double meanUs)
    {
    }

    /**
     * @param why why there is no table
     * @return a table-less result
     */
    static Stages unavailable(String why)
    {
        return new Stages(0, List.of(), why);
    }

    /**
     * @param json the endpoint's answer
     * @return the table
     * @throws IllegalArgumentException if it is not the expected shape
     */
    static Stages parse(String json)
    {
        try
        {
            JsonNode root = JSON.readTree(json);
            JsonNode stages = root.path("stages");
            if (!stages.isArray())
                throw new IllegalArgumentException("no \"stages\" array");
            List<StageRow> rows = new ArrayList<>();
            for (JsonNode s : stages)
            {
                rows.add(new StageRow(s.path("name").asText("?"), number(s, "p50_us"), number(s, "p90_us"),
                    number(s, "p99_us"), number(s, "mean_us")));
            }
            return new Stages(root.path("count").asLong(0), List.copyOf(rows), null);
        }
        catch (IOException x)
        {
            throw new IllegalArgumentException("not JSON: " + x.getMessage(), x);
        }
    }

    private static Double number(JsonNode node, String field)
    {
        JsonNode n = node.get(field);
        return n != null && n.isNumber() ? n.asDouble() : null;
    }

    /**
     * Stage by stage, the median of each column over the repetitions.
     *
     * @param all one table per repetition (tables with an error are skipped)
     * @return the median table; empty if none had rows
     */
    static List<StageRow> median(List<Stages> all)
    {
        Map<String, List<StageRow>> byName = new LinkedHashMap<>();
        for (Stages s : all)
        {
            if (s == null || s.error() != null)
                continue;
            for (StageRow r : s.rows())
            {
                byName.computeIfAbsent(r.name(), k -> new ArrayList<>()).add(r);
            }
        }
        List<StageRow> rows = new ArrayList<>();
        for (Map.Entry<String, List<StageRow>> e : byName.entrySet())
        {
            List<StageRow> rs = e.getValue();
            rows.add(new StageRow(e.getKey(), Stats.median(rs.stream().map(StageRow::p50Us).toList()),
                Stats.median(rs.stream().map(StageRow::p90Us).toList()), Stats.median(rs.stream().map(StageRow::p99Us).toList()),
                Stats.median(rs.stream().map(StageRow::meanUs).toList())));
        }
        return rows;
    }
}
