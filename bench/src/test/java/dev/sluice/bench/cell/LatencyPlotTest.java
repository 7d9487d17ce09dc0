package dev.sluice.bench.cell;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;

import dev.sluice.bench.load.LoadResult;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import static org.assertj.core.api.Assertions.assertThat;

class LatencyPlotTest
{
    @TempDir
    Path dir;

    @Test
    void drawsOneLinePerTargetWithAxesAndLegend() throws Exception
    {
        Map<String, Histogram> series = new LinkedHashMap<>();
        series.put("gateway", uniform(200, 2_000));
        series.put("direct", uniform(100, 1_000));

        Document svg = parse(LatencyPlot.svg("S1-5k: latency by percentile", series));

        List<Element> lines = elements(svg, "polyline");
        assertThat(lines).extracting(l -> l.getAttribute("data-series")).containsExactly("gateway", "direct");
        for (Element line : lines)
        {
            String[] points = line.getAttribute("points").split(" ");
            assertThat(points).hasSize(LatencyPlot.DECADES * LatencyPlot.STEPS_PER_DECADE + 1);
            // Left to right along the percentile axis, and never faster at a higher percentile (SVG's y grows down).
            double lastX = -1;
            double lastY = Double.MAX_VALUE;
            for (String point : points)
            {
                double x = Double.parseDouble(point.split(",")[0]);
                double y = Double.parseDouble(point.split(",")[1]);
                assertThat(x).isGreaterThan(lastX);
                assertThat(y).isLessThanOrEqualTo(lastY);
                lastX = x;
                lastY = y;
            }
        }
        // The gateway's line lies above the direct one at the median: it is slower there.
        assertThat(yAt(lines.get(0), 2 * LatencyPlot.STEPS_PER_DECADE / 2))
            .isLessThan(yAt(lines.get(1), 2 * LatencyPlot.STEPS_PER_DECADE / 2));
        List<String> texts = elements(svg, "text").stream().map(Element::getTextContent).toList();
        assertThat(texts).contains("0%", "90%", "99%", "99.9%", "99.99%", "100 µs", "1 ms", "10 ms",
            "gateway (n=1,801)", "direct (n=901)", "latency (log scale)", "S1-5k: latency by percentile");
        assertThat(texts).anyMatch(t -> t.startsWith("percentile"));
        assertThat(elements(svg, "line")).filteredOn(l -> "legend".equals(l.getAttribute("class"))).hasSize(2);
    }

    @Test
    void writesTheCellsPlotFromItsHistogramLogsAndTheReportLinksIt() throws Exception
    {
        Path logs = dir.resolve("raw/S1-5k");
        for (int rep = 1; rep <= 2; rep++)
        {
            HistogramLogs.write(logs.resolve("r" + rep + "-gateway.hlog"), result(uniform(200, 2_000)), "gw", 0, 1_000);
            HistogramLogs.write(logs.resolve("r" + rep + "-direct.hlog"), result(uniform(100, 1_000)), "direct", 0, 1_000);
            HistogramLogs.write(logs.resolve("r" + rep + "-jetty-proxy.hlog"), result(uniform(150, 1_500)), "jp", 0, 1_000);
        }

        Path svg = LatencyPlot.write("S1-5k", logs, dir.resolve(LatencyPlot.DIR));

        assertThat(svg).isEqualTo(dir.resolve("plots/S1-5k.svg"));
        Document doc = parse(Files.readString(svg, StandardCharsets.UTF_8));
        assertThat(elements(doc, "polyline")).extracting(l -> l.getAttribute("data-series"))
            .containsExactly("gateway", "direct", "jetty-proxy");
        // Two repetitions added together.
        assertThat(elements(doc, "text").stream().map(Element::getTextContent)).contains("gateway (n=3,602)");

        CellResult cell = ReportTest.cells().get(0);
        String linked = Report.markdown(ReportTest.INFO, List.of(cell), name -> true);
        assertThat(linked).contains("![" + cell.cell() + ": latency by percentile](plots/" + cell.cell() + ".svg)");
        assertThat(Report.markdown(ReportTest.INFO, List.of(cell))).doesNotContain("plots/");
    }

    @Test
    void aLadderIsDrawnAtTheGatewaysHighestStep() throws Exception
    {
        Path logs = dir.resolve("raw/SAT");
        HistogramLogs.write(logs.resolve("r1-gateway-2000.hlog"), result(uniform(100, 200)), "gw", 0, 1_000);
        HistogramLogs.write(logs.resolve("r1-gateway-4000.hlog"), result(uniform(300, 600)), "gw", 0, 1_000);
        HistogramLogs.write(logs.resolve("r1-direct-4000.hlog"), result(uniform(100, 300)), "direct", 0, 1_000);
        HistogramLogs.write(logs.resolve("r1-direct-8000.hlog"), result(uniform(100, 300)), "direct", 0, 1_000);

        Document doc = parse(Files.readString(LatencyPlot.write("SAT", logs, dir.resolve("plots")), StandardCharsets.UTF_8));

        assertThat(elements(doc, "title").get(0).getTextContent()).endsWith("at 4,000 req/s offered");
        assertThat(elements(doc, "text").stream().map(Element::getTextContent)).contains("gateway (n=301)", "direct (n=201)");
    }

    @Test
    void aCellWithoutHistogramsHasNoPlot() throws Exception
    {
        assertThat(LatencyPlot.write("IDLE", dir.resolve("raw/IDLE"), dir.resolve("plots"))).isNull();
        assertThat(dir.resolve("plots")).doesNotExist();
    }

    private static Histogram uniform(long from, long to)
    {
        Histogram h = new Histogram(3);
        for (long v = from; v <= to; v++)
        {
            h.recordValue(v);
        }
        return h;
    }

    private static LoadResult result(Histogram latency)
    {
        Histogram empty = new Histogram(3);
        return new LoadResult(latency.getTotalCount(), latency.getTotalCount(), latency.getTotalCount(), Map.of(), 1.0,
            latency, empty, empty, empty, empty, 0);
    }

    private static double yAt(Element line, int index)
    {
        return Double.parseDouble(line.getAttribute("points").split(" ")[index].split(",")[1]);
    }

    private static Document parse(String svg) throws Exception
    {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        return factory.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    private static List<Element> elements(Document doc, String name)
    {
        NodeList nodes = doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", name);
        List<Element> out = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++)
        {
            out.add((Element)nodes.item(i));
        }
        return out;
    }
}
