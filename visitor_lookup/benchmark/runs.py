"""The benchmark's timed steps: the generated history and new events, and each dbt command as a fresh
process, its wall time, dbt's time per node and the statements it sent."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from visitor_lookup.benchmark.checks import COMPARED, models_schema
from visitor_lookup.benchmark.scans import event_log_options, table_scans
from visitor_lookup.cluster import THRIFT_TARGETS, Cluster, free_port, running
from visitor_lookup.generate import SCHEMA, write_batches

END = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
DAYS = 30  # of history H; a history of scale x H spans scale x DAYS
BATCH_HOURS = 6  # the n-th batch of new events is loaded in the n-th BATCH_HOURS after END
PEER_PROJECT = Path(__file__).parents[1] / "naive_rebuild"
FLOOR_PROJECT = Path(__file__).parents[1] / "run_floor"
# Brings back Java's optimising compiler, which the profile leaves off (docs/configuration.md): it pays
# off in a process that reads millions of events (docs/performance.md).
OPTIMISING_COMPILER = "-XX:TieredStopAtLevel=4"
OPTIMISING_FULL_BUILD_FROM = 5_000_000
# The lookup tables whose scans a run counts, and the floor's tables in the same roles.
LOOKUP_TABLES = {table: table for table in ("first_dates", "user_mapping", "visitor_lookup_spans")}
FLOOR_LOOKUP_TABLES = {
    "first_dates": "exact_run_first_dates",
    "user_mapping": "exact_run_user_mapping",
    "visitor_lookup_spans": "exact_run_visitor_lookup",
}


def run_vars(span_days: int) -> dict[str, str | int]:
    """Start before the longest history, and read all of it in the full build's one window."""
    return {
        "visitor_lookup__start_date": str((END - dt.timedelta(days=span_days)).date()),
        "visitor_lookup__backfill_limit_days": span_days + 1,
    }


def log(message: str) -> None:
    print(f"benchmark: {message}", file=sys.stderr, flush=True)


def new_events(history_file: Path, out: Path, count: int, seed: int, run: int = 1) -> Path:
    """`count` new events (random ids, unseen) loaded in the run-th 6 hours after the history; a tenth are
    late events of known cookies."""
    batch_end = END + dt.timedelta(hours=BATCH_HOURS * run)
    (generated,) = write_batches(out, count, 1, batch_end, BATCH_HOURS / 24, seed, False)
    known = pc.unique(pq.read_table(history_file, columns=["visitor_cookie_id"])["visitor_cookie_id"])
    rng = random.Random(seed)
    rows = pq.read_table(generated).to_pylist()
    for row in rng.sample(rows, count // 10):
        if row["landed"] is not None and row["visitor_cookie_id"]:
            row["visitor_cookie_id"] = known[rng.randrange(len(known))].as_py()
            row["landed"] -= dt.timedelta(days=rng.uniform(1, 5))
    fresh = out / f"new_events_{run}.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), fresh)
    generated.unlink()
    return fresh


def history_events(cache: Path, events: Path, size: int, days: int, seed: int) -> list[Path]:
    """The history's Parquet files in `events`, generated once per (size, days, seed) and kept in `cache`
    (beside histories generated before the ids were random UUIDs, whose folder names lack `-uuid`)."""
    kept = cache / f"{size}-{days}-{seed}-uuid"
    if not (kept / "complete").exists():
        shutil.rmtree(kept, ignore_errors=True)
        log(f"generating {size:,} events of history over {days} days")
        write_batches(kept, size, days, END, days, seed, True)
        (kept / "complete").touch()
    shutil.rmtree(events, ignore_errors=True)
    events.mkdir(parents=True)
    files = sorted(kept.glob("batch_*.parquet"))
    for file in files:
        # Each file written when its last event was loaded, long before the runs, as a loader writes a
        # source's files: a run checks only the files written since the previous run, and reads events
        # without loaded_at only from the files written since its lower limit.
        written = pc.max(pq.read_table(file, columns=["loaded_at"])["loaded_at"]).as_py()
        os.utime(file, (written.timestamp(), written.timestamp()))
        (events / file.name).symlink_to(file)
    return [events / file.name for file in files]


def thrift_sql(port: int, *statements: str) -> None:
    """Statements without results, on the Thrift Server at 127.0.0.1:port."""
    from pyhive import hive

    with contextlib.closing(hive.connect(host="127.0.0.1", port=port, username="dbt")) as connection:
        cursor = connection.cursor()
        for statement in statements:
            cursor.execute(statement)


def measured_steps(steps: dict[str, dict], incremental_runs: list[dict]) -> dict:
    """Wall seconds of each step, of each incremental run and their mean (as `incremental`: what a run costs
    run after run, compaction and expiry included), dbt's time per node of each, and the SQL statements,
    hooks and lookup-table scans each sent or made, as the JSON keeps them."""

    def of_runs(key: str) -> list:
        return [measured[key] for measured in incremental_runs]

    return {
        **{step: measured["wall"] for step, measured in steps.items()},
        "incremental": statistics.fmean(of_runs("wall")),
        "incremental_runs": of_runs("wall"),
        "nodes": {
            **{step: measured["nodes"] for step, measured in steps.items()},
            "incremental_runs": of_runs("nodes"),
        },
        "statements": {
            **{step: measured["statements"] for step, measured in steps.items()},
            "incremental": round(statistics.fmean(of_runs("statements"))),
            "incremental_runs": of_runs("statements"),
        },
        "hooks": {
            **{step: measured["hooks"] for step, measured in steps.items()},
            "incremental": {
                kind: max(hooks[kind] for hooks in of_runs("hooks")) for kind in of_runs("hooks")[0]
            },
        },
        "scans": {
            **{step: measured["scans"] for step, measured in steps.items() if "scans" in measured},
            "incremental_runs": [measured["scans"] for measured in incremental_runs if "scans" in measured],
        },
    }


def sent_statements(log: Path) -> tuple[int, dict[str, int]]:
    """The SQL statements a dbt process sent (each answered with a "SQL status" line in its debug log, its
    run_query calls and hooks included) and how many hooks of each kind ran, from dbt.log in `log`."""
    text = (log / "dbt.log").read_text()
    hooks = {kind: text.count(f"OK hook: visitor_lookup.{kind}.") for kind in ("on-run-start", "on-run-end")}
    return text.count("SQL status:"), hooks


class Bench:
    def __init__(self, root: Path, work: Path, span_days: int, extra_vars: dict, table_format: str) -> None:
        self.root = root
        self.work = work
        self.vars = {**run_vars(span_days), **extra_vars}
        self.table_format = table_format

    def dbt(
        self,
        label: str,
        schema: str,
        events: Path,
        *args: str,
        project: Path | None = None,
        thrift: int = 0,
        java_options: str = "",
        extra_vars: dict | None = None,
        select: str = "",
        scanned: dict[str, str] | None = None,
    ) -> dict:
        """One dbt command as a fresh process; its wall time, dbt's time per node, and how many times it
        scanned each of the `scanned` tables of its models' schema (from Spark's event log).

        thrift: a Thrift Server's port, to run on the thrift target (events: the view {schema}_web.pageviews).
        java_options: added to VISITOR_LOOKUP_JAVA_OPTIONS for this process.
        scanned: the tables (of the schema of the project's models) whose scans to count, by the name each
        count is reported under.
        extra_vars: dbt vars for this process only.
        select: the nodes to run (dbt's --select), when not all.
        """
        project = project or self.root
        target = self.work / "target" / f"{project.name}-{schema}"
        logfile = self.work / "logs" / f"{schema}-{label}.log"
        logfile.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "VISITOR_LOOKUP_SCHEMA": schema, "VISITOR_LOOKUP_EVENTS_PATH": str(events)}
        event_log = logfile.parent / f"{schema}-{label}-events"
        if scanned:
            shutil.rmtree(event_log, ignore_errors=True)
            java_options = f"{java_options} {event_log_options(event_log)}"
        if java_options:
            before = env.get("VISITOR_LOOKUP_JAVA_OPTIONS", "")
            env["VISITOR_LOOKUP_JAVA_OPTIONS"] = f"{before} {java_options}"
        run_vars = {**self.vars, **(extra_vars or {})}
        if thrift:
            env |= {
                "VISITOR_LOOKUP_TARGET": THRIFT_TARGETS[self.table_format],
                "VISITOR_LOOKUP_THRIFT_PORT": str(thrift),
            }
            run_vars["visitor_lookup__events_schema"] = f"{schema}_web"
        command = ["dbt", *args, *(("--select", select) if select else ()), "--vars", json.dumps(run_vars)]
        command += ["--project-dir", str(project)]
        dbt_log = logfile.parent / f"{schema}-{label}-dbt"
        command += ["--target-path", str(target), "--log-path", str(dbt_log)]
        started = time.monotonic()
        with logfile.open("w") as out:
            done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
        wall = time.monotonic() - started
        if done.returncode != 0:
            tail = "\n".join(logfile.read_text().splitlines()[-30:])
            sys.exit(f"benchmark: dbt {' '.join(args)} failed for {schema} ({logfile}):\n{tail}")
        results = json.loads((target / "run_results.json").read_text())["results"]
        nodes = {r["unique_id"].split(".", 2)[-1]: round(r["execution_time"], 2) for r in results}
        statements, hooks = sent_statements(dbt_log)
        measured = {"wall": wall, "nodes": nodes, "statements": statements, "hooks": hooks}
        if scanned:
            tables_schema = schema if project != self.root else models_schema(schema)
            scans = table_scans(event_log, tables_schema, scanned.values())
            measured["scans"] = {name: scans[table] for name, table in scanned.items()}
        log(f"{label} ({schema}): {wall:.1f} s, {statements} statements")
        return measured

    def build_then_runs(
        self,
        label: str,
        schema: str,
        events: Path,
        batches: list[Path],
        thrift: int = 0,
        java_options: str = "",
    ) -> tuple[dict, list[dict]]:
        """The full build (with java_options), then one incremental run per batch of new events dropped into
        `events`."""
        full = self.dbt(f"{label}full build", schema, events, "run", thrift=thrift, java_options=java_options)
        incremental_runs = []
        for run, fresh in enumerate(batches, start=1):
            shutil.copy(fresh, events / fresh.name)
            incremental_runs.append(
                self.dbt(
                    f"{label}incremental run {run}",
                    schema,
                    events,
                    "run",
                    thrift=thrift,
                    scanned=None if thrift else LOOKUP_TABLES,
                )
            )
        return full, incremental_runs

    def on_thrift(self, size: int, history_files: list[Path], batches: list[Path]) -> dict:
        """Full build and incremental runs on the thrift target; its tables exported as Parquet to check."""
        schema = f"thrift_{size}"
        events = self.work / schema / "events"
        events.mkdir(parents=True)
        for file in history_files:
            (events / file.name).symlink_to(file.resolve())
        cluster = Cluster(
            self.work / "cluster",
            thrift_port=free_port(),
            master_port=free_port(),
            table_format=self.table_format,
        )
        log("starting a standalone cluster and a Spark Thrift Server")
        with running(cluster):
            # A view, not a table: like the local target's source, it lists the folder anew at every query.
            thrift_sql(
                cluster.thrift_port,
                f"create database if not exists {schema}_web",
                f"create view {schema}_web.pageviews as select * from parquet.`{events}`",
            )
            full, incremental_runs = self.build_then_runs(
                "thrift ", schema, events, batches, cluster.thrift_port
            )
            exported = self.work / schema / "exported"
            thrift_sql(
                cluster.thrift_port,
                *(
                    f"insert overwrite directory '{exported / table}' using parquet "
                    f"select {columns} from {models_schema(schema)}.{table}"
                    for table, (_, columns) in COMPARED.items()
                ),
            )
        return {**measured_steps({"full": full}, incremental_runs), "exported": str(exported)}

    def history(self, size: int, days: int, new_count: int, seed: int, runs: int, thrift: bool) -> dict:
        schema = f"bench_{size}"
        events = self.work / schema / "events"
        history_files = history_events(self.work.parent / "cache", events, size, days, seed)
        incoming = self.work / schema / "incoming"
        batches = [
            new_events(history_files[-1], incoming, new_count, seed + run, run) for run in range(1, runs + 1)
        ]
        optimising = OPTIMISING_COMPILER if size >= OPTIMISING_FULL_BUILD_FROM else ""
        full, incremental_runs = self.build_then_runs("", schema, events, batches, java_options=optimising)
        test = self.dbt("dbt test", schema, events, "test")
        no_new_data = self.dbt("no new data", schema, events, "run")
        peer_schema = f"peer_{size}"
        peers = {
            "quick": self.dbt("peer full rebuild", peer_schema, events, "run", project=PEER_PROJECT),
            "optimising": self.dbt(
                "peer full rebuild, optimising compiler",
                f"{peer_schema}_optimising",
                events,
                "run",
                project=PEER_PROJECT,
                java_options=OPTIMISING_COMPILER,
            ),
        }
        floor_schema = f"floor_{size}"
        floor_vars = {
            "run_floor__file_format": self.table_format,
            "run_floor__events_path": str(events),
            # the first batch of new events, as the first incremental run read it
            "run_floor__loaded_after": f"{END:%Y-%m-%d %H:%M:%S}",
            "run_floor__loaded_until": f"{END + dt.timedelta(hours=BATCH_HOURS):%Y-%m-%d %H:%M:%S}",
        }
        one_merge = {"project": FLOOR_PROJECT, "extra_vars": floor_vars, "select": "one_merge"}
        exact_run = {"project": FLOOR_PROJECT, "extra_vars": floor_vars, "select": "exact_run"}
        self.dbt("floor: first dbt run", floor_schema, events, "run", **one_merge)
        self.dbt("floor: exact run, storing the history", floor_schema, events, "run", **exact_run)
        steps = {
            "full": full,
            "test": test,
            "no_new_data": no_new_data,
            "peer_full_rebuild": min(peers.values(), key=lambda measured: measured["wall"]),
            "run_floor": self.dbt("floor: dbt run", floor_schema, events, "run", **one_merge),
            "test_floor": self.dbt("floor: dbt test", floor_schema, events, "test", **one_merge),
            "exact_run_floor": self.dbt(
                "floor: exact run",
                floor_schema,
                events,
                "run",
                **exact_run,
                scanned=FLOOR_LOOKUP_TABLES,
            ),
            "exact_test_floor": self.dbt("floor: exact dbt test", floor_schema, events, "test", **exact_run),
            # the range after the batch, which holds no event: what a run with no new data must read
            # once it knows no file changed (ours then skips its lookback)
            "exact_no_new_data_floor": self.dbt(
                "floor: exact run, no new data",
                floor_schema,
                events,
                "run",
                project=FLOOR_PROJECT,
                extra_vars={**floor_vars, "run_floor__loaded_after": floor_vars["run_floor__loaded_until"]},
                select="exact_run_events",
            ),
        }
        on_thrift = self.on_thrift(size, history_files, batches) if thrift else None
        checked = subprocess.run(
            [
                *(sys.executable, "-m", "visitor_lookup.benchmark", "--check", schema, "--peer", peer_schema),
                # The check reads our tables in a session of their own format: a Delta table read through
                # Iceberg's session catalog comes back without its deletion vectors applied.
                *("--format", self.table_format),
                *("--floor-events", str(batches[0]), "--vars", json.dumps(self.vars)),
                *(("--thrift-export", on_thrift.pop("exported")) if on_thrift else ()),
            ],
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        )
        return {
            **measured_steps(steps, incremental_runs),
            "full_build_java_options": optimising,
            "peer_full_rebuild_by_compiler": {compiler: peer["wall"] for compiler, peer in peers.items()},
            **json.loads(checked.stdout.strip().splitlines()[-1]),
            **({"thrift": on_thrift} if on_thrift else {}),
        }
