"""Measure what a run costs beside a naive full rebuild; print a table and write it as JSON.

For a history of H events over 30 days and one of scale x H over scale x 30
days (the same traffic, kept longer; one Parquet file per day of loads), on
the local target (Delta tables; local_iceberg with --format iceberg), each
step a fresh process as an orchestrator runs it (JVM start and dbt parsing
included):

* full build: `dbt run` on the history (state 1, one window);
* incremental: --new-events new events, at every history size (a tenth of
  them late: events of known cookies that landed days earlier), then
  `dbt run`;
  repeated --runs times (4 by default) with new events each time, each run
  compacting and expiring what it must: their mean is the incremental
  figure, what a run costs run after run; each run's scans of each lookup
  table are counted from Spark's event log (visitor_lookup.benchmark.scans);
* test: `dbt test` after the last run;
* no new data: `dbt run` again;
* peer: the naive full rebuild (visitor_lookup/naive_rebuild, a dbt project
  of four plain window-function models into Parquet tables) on the same events,
  once with the profile's quick compilation and once with Java's optimising
  compiler; the faster counts;
* process floor: the smallest dbt run that changes a table of our format
  (visitor_lookup/run_floor, models/one_merge: one model merging one row,
  its second run) and the smallest dbt test (one test), on the same profile;
* exact-run floor: the reads and writes every exact incremental run must
  make, for the first batch of new events (run_floor, models/exact_run: its
  first run stores the history, not timed; the second compares the new
  events with every stored id (on Iceberg through a 64-bit key of each, as
  ours does), stores them and adds their rows to three
  lookup tables after reading their stored rows of the run's cookies); then
  the reads its dbt test must make (the run's ids against every stored id,
  each lookup table's rows of the run's cookies), and a run of its first
  model over the range after that batch, which holds no event: the reads of
  a run with no new data that knows no file changed;
* with --thrift, for H only: the full build and the same incremental runs on
  the thrift target (delta with --format delta), against a local standalone cluster and Spark Thrift
  Server started for the purpose (visitor_lookup.cluster), reading the same
  Parquet files through a view.

A last process checks that our three tables equal the peer's (and, with
--thrift, the thrift target's), row for row, and times the floor: a plain
Spark job that reads the first batch of new events and groups them by cookie.
Every step's ratio to the peer of the same history is printed beside it, then
each target of docs/performance.md, met or missed, with where the exact-run
floor stands against it: a target that the floor misses too is out of reach
of any exact run on this stack, not only of ours. A full
build of OPTIMISING_FULL_BUILD_FROM events or more runs with the optimising
compiler, as docs/configuration.md advises for a build that reads millions of events.

    bin/benchmark [--history 1000000] [--scale 10] [--new-events 10000] [--runs 4] [--vars JSON] [--thrift]
                  [--format delta|iceberg]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
from pathlib import Path

from visitor_lookup.benchmark.checks import check
from visitor_lookup.benchmark.report import chart_svg, machine, report_table, scan_lines, stack
from visitor_lookup.benchmark.runs import DAYS, Bench
from visitor_lookup.benchmark.targets import assess_targets, target_line
from visitor_lookup.cluster import LOCAL_TARGETS


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=1_000_000, help="events in history H")
    parser.add_argument("--scale", type=int, default=10, help="the larger history is scale x H")
    parser.add_argument(
        "--new-events", type=int, default=10_000, help="new events per incremental run, at both sizes"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"), help="folder for the JSON")
    parser.add_argument("--vars", type=json.loads, default={}, help="extra dbt vars, as JSON")
    parser.add_argument(
        "--runs",
        type=int,
        default=4,
        help="incremental runs in a row, each with new events; their mean is the figure",
    )
    parser.add_argument(
        "--thrift", action="store_true", help="also run H on the thrift target (on a local cluster)"
    )
    parser.add_argument(
        "--format", choices=sorted(LOCAL_TARGETS), default="delta", help="the table format of our models"
    )
    parser.add_argument("--check", help=argparse.SUPPRESS)
    parser.add_argument("--peer", help=argparse.SUPPRESS)
    parser.add_argument("--floor-events", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--thrift-export", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be 1 or more")
    if args.new_events < 1:
        parser.error("--new-events must be 1 or more")

    root = Path.cwd()
    work = root / "benchmarks" / "work"
    os.environ["VISITOR_LOOKUP_WAREHOUSE_DIR"] = str(work / "warehouse")
    os.environ["VISITOR_LOOKUP_TARGET"] = LOCAL_TARGETS[args.format]
    if args.check:
        checked = check(args.check, args.peer, args.floor_events, json.dumps(args.vars), args.thrift_export)
        print(json.dumps(checked))
        return
    shutil.rmtree(work, ignore_errors=True)
    (work / "warehouse").mkdir(parents=True)
    bench = Bench(root, work, DAYS * args.scale + 1, args.vars, args.format)
    new_count = args.new_events
    sizes = [args.history, args.history * args.scale]
    results = {
        size: bench.history(
            size,
            DAYS * size // args.history,
            new_count,
            size % 9973,
            args.runs,
            thrift=args.thrift and size == sizes[0],
        )
        for size in sizes
    }

    targets = assess_targets(results[sizes[0]], results[sizes[1]], thrift=args.thrift, large_size=sizes[1])
    versions = stack()
    print(f"\n{args.format} tables on " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"{'step':<30}{'history':>12}{'wall s':>9}{'x peer':>8}{'statements':>12}")
    for step, size, wall, ratio, statements in report_table(results, new_count, args.runs):
        print(f"{step:<30}{size:>12,}{wall:>9.1f}{ratio:>8.2f}{'' if statements is None else statements:>12}")
    print()
    for size, r in results.items():
        print(f"hooks per kind ({size:,}): {r['hooks']['incremental']}")
    for line in scan_lines(results):
        print(line)
    for size, r in results.items():
        print(f"rows differing from the peer ({size:,}): {r['rows_differing_from_peer']}")
        if "rows_differing_from_thrift" in r:
            print(f"rows differing from the thrift target's ({size:,}): {r['rows_differing_from_thrift']}")
    for target in targets:
        print(target_line(target))

    args.out.mkdir(parents=True, exist_ok=True)
    report = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "stack": versions,
        "table_format": args.format,
        "history": args.history,
        "scale": args.scale,
        "new_events": new_count,
        "runs": args.runs,
        "vars": args.vars,
        "shuffle_partitions": os.environ.get("VISITOR_LOOKUP_SHUFFLE_PARTITIONS", "8"),
        "results": {str(size): r for size, r in results.items()},
        "targets": {t.name: t.met for t in targets},
        "target_figures": {
            t.name: {"ours": t.ours, "limit": t.limit, "exact_run_floor": t.floor, "unit": t.unit}
            for t in targets
            if t.ours is not None
        },
    }
    path = args.out / f"benchmark-{report['when'].replace(':', '')}.json"
    path.write_text(json.dumps(report, indent=2))
    title = f"{args.format} tables, {new_count:,} new events per incremental run, {report['when'][:10]}"
    path.with_suffix(".svg").write_text(chart_svg(results, title))
    print(f"\nwritten to {path} and its chart to {path.with_suffix('.svg')}")
