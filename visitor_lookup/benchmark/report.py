"""What a benchmark run reports: the machine and the stack it ran on, the table of steps, the SVG chart."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from pathlib import Path


def machine() -> dict[str, str | int]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    memory_kb = int(Path("/proc/meminfo").read_text().split()[1])
    return {
        "cpu": cpu,
        "cores": os.cpu_count() or 0,
        "memory_gib": round(memory_kb / 2**20),
        "python": sys.version.split()[0],
    }


def stack() -> dict[str, str]:
    """The versions a figure was measured on, so that two lines' results can be told apart."""
    from visitor_lookup.spark_home import java_version, spark_line

    line, spec = spark_line()
    java = java_version()
    return {
        "spark": importlib.metadata.version("pyspark"),
        "spark_line": line,
        "scala": spec.scala,
        "java": java.split('"')[1] if '"' in java else java.split()[1],
        "iceberg": spec.iceberg,
        "delta": importlib.metadata.version("delta-spark"),
        "dbt_core": importlib.metadata.version("dbt-core"),
        "dbt_spark": importlib.metadata.version("dbt-spark"),
    }


def report_table(
    results: dict[int, dict], new_count: int, runs: int
) -> list[tuple[str, int, float, float, int | None]]:
    """(step, history, wall s, ratio to the peer's full rebuild of that history, SQL statements sent)."""

    def rows(name: str, key: str, of: str = "") -> list[tuple[str, int, float, float, int | None]]:
        """One row per history for `key` of its results, or of its results' `of` part (thrift) where it has
        one."""
        measured = {size: r[of] if of else r for size, r in results.items() if not of or of in r}
        return [
            (
                name,
                size,
                m[key],
                m[key] / results[size]["peer_full_rebuild"],
                m.get("statements", {}).get(key),
            )
            for size, m in measured.items()
        ]

    each_run = [
        (f"  run {run} of {runs}", size, wall, wall / r["peer_full_rebuild"], statements)
        for size, r in results.items()
        for run, (wall, statements) in enumerate(
            zip(r["incremental_runs"], r["statements"]["incremental_runs"], strict=True), start=1
        )
    ]
    return [
        *rows("peer: naive full rebuild", "peer_full_rebuild"),
        *rows("full build", "full"),
        *rows(f"incremental, {new_count:,} new, mean", "incremental"),
        *each_run,
        *rows("dbt test", "test"),
        *rows("no new data", "no_new_data"),
        *rows("floor: read + group new", "floor"),
        *rows("floor: dbt run, one merge", "run_floor"),
        *rows("floor: dbt test, one test", "test_floor"),
        *rows(f"floor: exact run, {new_count:,} new", "exact_run_floor"),
        *rows("floor: exact run's dbt test", "exact_test_floor"),
        *rows("floor: exact, no new data", "exact_no_new_data_floor"),
        *rows("thrift: full build", "full", of="thrift"),
        *rows(f"thrift: incremental, {new_count:,} new", "incremental", of="thrift"),
    ]


def scan_lines(results: dict[int, dict]) -> list[str]:
    """Per history, how many times each incremental run and the exact-run floor scanned each lookup
    table."""
    lines = []
    for size, r in results.items():
        runs = r["scans"]["incremental_runs"]
        for table, floor in r["scans"]["exact_run_floor"].items():
            each = ", ".join(str(scans[table]) for scans in runs)
            lines.append(f"scans of {table} per run ({size:,}): {each}; the exact-run floor {floor}")
    return lines


# The chart's lines: (key in a history's result, legend, colour); its canvas and margins in pixels.
CHART_LINES = (
    ("peer_full_rebuild", "peer: naive full rebuild", "#d62728"),
    ("full", "our full build", "#ff7f0e"),
    ("incremental", "our incremental run", "#1f77b4"),
    ("exact_run_floor", "exact-run floor", "#2ca02c"),
)
CHART_SIZE = (640, 400)
CHART_MARGIN = (70, 20, 30, 50)  # left, right, top, bottom


def chart_svg(results: dict[int, dict], title: str) -> str:
    """An SVG line chart of a run's seconds against the history's size, one line per step of CHART_LINES,
    through the measured points only (two sizes: the lines between them are straight, not measured)."""
    width, height = CHART_SIZE
    left, right, top, bottom = CHART_MARGIN
    sizes = sorted(results)
    top_seconds = max(results[size][key] for size in sizes for key, _, _ in CHART_LINES)
    y_step = next(step for step in (5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if top_seconds / step <= 8)
    y_max = y_step * (int(top_seconds // y_step) + 1)

    def x(size: int) -> float:
        return left + (width - left - right) * size / sizes[-1]

    def y(seconds: float) -> float:
        return height - bottom - (height - top - bottom) * seconds / y_max

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="{top - 10}" font-size="14">{title}</text>',
        f'<text x="{(left + width - right) / 2}" y="{height - 8}" text-anchor="middle">'
        "events in history (millions)</text>",
        f'<text x="14" y="{(top + height - bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + height - bottom) / 2})">seconds per dbt process</text>',
    ]
    for tick in range(0, y_max + 1, y_step):
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ddd"/>'
        )
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick}</text>')
    for size in (0, *sizes):
        parts.append(
            f'<text x="{x(size):.1f}" y="{height - bottom + 16}" text-anchor="middle">{size / 1e6:g}</text>'
        )
    for row, (key, legend, colour) in enumerate(CHART_LINES):
        points = " ".join(f"{x(size):.1f},{y(results[size][key]):.1f}" for size in sizes)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts += [
            f'<circle cx="{x(size):.1f}" cy="{y(results[size][key]):.1f}" r="3" fill="{colour}"/>'
            for size in sizes
        ]
        legend_y = top + 16 * row + 10
        parts.append(
            f'<line x1="{left + 10}" x2="{left + 30}" y1="{legend_y}" y2="{legend_y}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        parts.append(f'<text x="{left + 36}" y="{legend_y + 4}">{legend}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
