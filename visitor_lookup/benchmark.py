"""Measure what a run costs as history grows; print a table and write it as JSON.

For a history of H events over 30 days and one of scale x H over scale x 30
days (the same traffic, kept longer; one Parquet file per day of loads), on
the local target: a full build; an incremental run bringing new events equal to
new_share x H (a tenth of them late: events of known cookies that landed days
earlier), repeated --runs times with new events each time (default once); a
run with no new data, as a fresh `dbt run` process (JVM start
included); and the floor, a plain Spark job that reads the same new events
and groups them by cookie. For each history a child process runs the warm
steps with dbt in-process (one Spark for them); the no-data run starts after
it exits, since the embedded Derby metastore admits one JVM at a time.

    bin/benchmark [--history 1000000] [--scale 10] [--new-share 0.01] [--runs 1] [--vars JSON]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from dbt.cli.main import dbtRunner
from pyspark.sql import SparkSession

from visitor_lookup.generate import SCHEMA, write_batches

END = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
DAYS = 30  # of history H; a history of scale x H spans scale x DAYS


def run_vars(span_days: int) -> dict[str, str | int]:
    """Start before the longest history, and read all of it in the full build's one window."""
    return {
        "visitor_lookup__start_date": str((END - dt.timedelta(days=span_days)).date()),
        "visitor_lookup__backfill_limit_days": span_days + 1,
    }


def log(message: str) -> None:
    print(f"benchmark: {message}", file=sys.stderr, flush=True)


def new_events(history_file: Path, out: Path, count: int, seed: int, run: int = 1) -> Path:
    """`count` new events (ids unseen) loaded in the run-th 6 hours after the history; a tenth are late
    events of known cookies."""
    (generated,) = write_batches(out, count, 1, END + dt.timedelta(hours=6 * run), 0.25, seed, False)
    known = pc.unique(pq.read_table(history_file, columns=["visitor_cookie_id"])["visitor_cookie_id"])
    rng = random.Random(seed)
    rows = pq.read_table(generated).to_pylist()
    for row in rows:
        if row["event_id"] is not None:
            row["event_id"] = f"new{run}-{row['event_id']}"
    for row in rng.sample(rows, count // 10):
        if row["landed"] is not None and row["visitor_cookie_id"]:
            row["visitor_cookie_id"] = known[rng.randrange(len(known))].as_py()
            row["landed"] -= dt.timedelta(days=rng.uniform(1, 5))
    fresh = out / f"new_events_{run}.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), fresh)
    generated.unlink()
    return fresh


class Bench:
    def __init__(self, root: Path, work: Path, span_days: int, extra_vars: dict) -> None:
        self.root = root
        self.work = work
        self.runner = dbtRunner()
        self.span_days = span_days
        self.extra_vars = extra_vars
        self.vars = json.dumps({**run_vars(span_days), **extra_vars})

    def dbt_run(self, schema: str, events: Path) -> float:
        os.environ["VISITOR_LOOKUP_SCHEMA"] = schema
        os.environ["VISITOR_LOOKUP_EVENTS_PATH"] = str(events)
        started = time.monotonic()
        result = self.runner.invoke(["run", "--vars", self.vars, "--project-dir", str(self.root)])
        if not result.success:
            sys.exit(f"benchmark: dbt run failed for {schema}")
        return time.monotonic() - started

    def dbt_run_cold(self, schema: str, events: Path) -> float:
        env = {**os.environ, "VISITOR_LOOKUP_SCHEMA": schema, "VISITOR_LOOKUP_EVENTS_PATH": str(events)}
        started = time.monotonic()
        subprocess.run(
            ["dbt", "run", "--vars", self.vars, "--project-dir", str(self.root)],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return time.monotonic() - started

    def warm_steps(self, size: int, days: int, new_count: int, seed: int, runs: int) -> dict:
        """Full build, floor and `runs` incremental runs, each with new events, in this process."""
        schema = f"bench_{size}"
        events = self.work / schema / "events"
        shutil.rmtree(events.parent, ignore_errors=True)
        log(f"generating {size:,} events of history over {days} days")
        history_files = write_batches(events, size, days, END, days, seed, True)
        log(f"full build of {size:,} events")
        full = self.dbt_run(schema, events)
        log(f"full build: {full:.1f} s; adding {new_count:,} new events")
        incoming = self.work / schema / "incoming"
        batches = [
            new_events(history_files[-1], incoming, new_count, seed + run, run) for run in range(1, runs + 1)
        ]
        floor_started = time.monotonic()
        spark = SparkSession.builder.getOrCreate()
        spark.read.parquet(str(batches[0])).groupBy("visitor_cookie_id").agg({"landed": "min"}).collect()
        floor = time.monotonic() - floor_started
        incremental_runs = []
        for run, fresh in enumerate(batches, start=1):
            fresh.rename(events / fresh.name)
            incremental_runs.append(self.dbt_run(schema, events))
            log(f"incremental run {run} of {runs}: {incremental_runs[-1]:.1f} s")
        return {
            "full": full,
            "incremental": incremental_runs[0],
            "incremental_runs": incremental_runs,
            "floor": floor,
        }

    def history(self, size: int, days: int, new_count: int, seed: int, runs: int) -> dict:
        child = subprocess.run(
            [
                sys.executable,
                "-m",
                "visitor_lookup.benchmark",
                "--warm-steps",
                str(size),
                "--days",
                str(days),
                "--span-days",
                str(self.span_days),
                "--vars",
                json.dumps(self.extra_vars),
                "--new-count",
                str(new_count),
                "--seed",
                str(seed),
                "--runs",
                str(runs),
            ],
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        )
        measured = json.loads(child.stdout.strip().splitlines()[-1])
        log("run with no new data (new process)")
        schema = f"bench_{size}"
        measured["no_new_data"] = self.dbt_run_cold(schema, self.work / schema / "events")
        return measured


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=1_000_000, help="events in history H")
    parser.add_argument("--scale", type=int, default=10, help="the larger history is scale x H")
    parser.add_argument("--new-share", type=float, default=0.01, help="new events per run, as a share of H")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"), help="folder for the JSON")
    parser.add_argument("--vars", type=json.loads, default={}, help="extra dbt vars, as JSON")
    parser.add_argument("--runs", type=int, default=1, help="incremental runs in a row, each with new events")
    parser.add_argument("--warm-steps", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--days", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--span-days", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--new-count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be 1 or more")

    root = Path.cwd()
    work = root / "benchmarks" / "work"
    os.environ["VISITOR_LOOKUP_WAREHOUSE_DIR"] = str(work / "warehouse")
    if args.warm_steps:
        bench = Bench(root, work, args.span_days, args.vars)
        print(json.dumps(bench.warm_steps(args.warm_steps, args.days, args.new_count, args.seed, args.runs)))
        return
    shutil.rmtree(work, ignore_errors=True)
    (work / "warehouse").mkdir(parents=True)
    bench = Bench(root, work, DAYS * args.scale + 1, args.vars)
    new_count = max(1, int(args.history * args.new_share))
    sizes = [args.history, args.history * args.scale]
    results = {
        size: bench.history(size, DAYS * size // args.history, new_count, size % 9973, args.runs)
        for size in sizes
    }

    small, large = results[sizes[0]], results[sizes[1]]
    rows = (
        [("full build", size, r["full"], size / r["full"]) for size, r in results.items()]
        + [
            (f"incremental, {new_count:,} new", size, r["incremental"], new_count / r["incremental"])
            for size, r in results.items()
        ]
        + [
            (f"incremental run {run} of {args.runs}", size, wall, new_count / wall)
            for size, r in results.items()
            for run, wall in enumerate(r["incremental_runs"][1:], start=2)
        ]
        + [("no new data (fresh process)", size, r["no_new_data"], 0.0) for size, r in results.items()]
        + [
            ("floor: read + group new events", size, r["floor"], new_count / r["floor"])
            for size, r in results.items()
        ]
    )
    targets = {
        "incremental on scale x H <= 1.5 x on H": large["incremental"] <= 1.5 * small["incremental"],
        "incremental <= 0.10 x full build (scale x H)": large["incremental"] <= 0.10 * large["full"],
        "full build >= 150k events/s (scale x H)": sizes[1] / large["full"] >= 150_000,
        "no new data <= 30 s": max(small["no_new_data"], large["no_new_data"]) <= 30,
    }
    print(f"\n{'step':<34}{'history':>12}{'wall s':>10}{'events/s':>12}")
    for step, size, wall, rate in rows:
        print(f"{step:<34}{size:>12,}{wall:>10.1f}{rate:>12,.0f}")
    print()
    for target, met in targets.items():
        print(f"{'met ' if met else 'MISSED'} {target}")

    args.out.mkdir(parents=True, exist_ok=True)
    report = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "history": args.history,
        "scale": args.scale,
        "new_events": new_count,
        "runs": args.runs,
        "vars": args.vars,
        "shuffle_partitions": os.environ.get("VISITOR_LOOKUP_SHUFFLE_PARTITIONS", "8"),
        "results": {str(size): r for size, r in results.items()},
        "targets": targets,
    }
    path = args.out / f"benchmark-{report['when'].replace(':', '')}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"\nwritten to {path}")


if __name__ == "__main__":
    main()
