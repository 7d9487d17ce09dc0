package dev.sluice.bench.cell;

/**
 * One target of a cell, checked against the cell's medians.
 *
 * @param what     what is checked, e.g. {@code overhead p99}
 * @param target   the target as written in the issue, e.g. {@code ≤ 500 µs}
 * @param measured the figure reached, formatted
 * @param met      whether it was met; null when it cannot be judged (missing figure, no nginx, …)
 */
record Check(String what, String target, String measured, Boolean met)
{
}
