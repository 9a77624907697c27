"""The life around the runs: killed runs, folders left without their tables, vanished tables, what an
invocation may select, and what it leaves alone when it changes nothing."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from .conftest import INCREMENTAL_MODELS, ROOT, Scenario, table_format
from .reference import Raw, lookup_tables, processed_events
from .test_erasure import Requests
from .test_lookup_properties import VARS, random_arrivals

# Every table the project creates in its schema, by name: per-run, permanent, and kept by its hooks.
PER_RUN_TABLES = ("base_new_event_limits", "base_erased_events_this_run", "base_events_this_run")
PERMANENT_TABLES = (
    "incremental_manifest",
    "processed_events",
    "quarantined_events",
    "erased_cookies",
    "erasure_log",
    "first_dates",
    "user_mapping",
    "visitor_lookup_spans",
    "erasure_requests",
    "visitor_lookup_runs",
)

# Reads the three lookup tables in a process of its own (the embedded metastore opens in one process at
# a time) through the project's own Spark session, and prints them as JSON.
EXPORT = """
import json, sys
from dbt.cli.main import dbtRunner
from pyspark.sql import SparkSession
assert dbtRunner().invoke(["show", "--inline", "select 1 as up", "--project-dir", sys.argv[2]]).success
spark = SparkSession.builder.getOrCreate()
schema = sys.argv[1]
queries = {
    "first_dates": "select visitor_cookie_id, first_date, first_day, vcid_first_two from {}.first_dates",
    "user_mapping": "select visitor_cookie_id, user_id, valid_start_date, valid_end_date, is_current, "
    "vcid_first_two from {}.user_mapping",
    "visitor_lookup": "select visitor_cookie_id, user_id, valid_start_date, valid_end_date, is_current, "
    "start_day, vcid_first_two from {}.visitor_lookup",
    "duplicate_ids": "select count(*) - count(distinct event_id) from {}.processed_events",
}
tables = {
    name: [[None if v is None else str(v) for v in row] for row in spark.sql(query.format(schema)).collect()]
    for name, query in queries.items()
}
print("EXPORT " + json.dumps(tables))
"""


def built_with_a_batch_waiting(scenario: Scenario, seed: int) -> list[Raw]:
    """One batch run, a second one written and not run yet; every event written."""
    first, second = random_arrivals(seed=seed, batches=2)
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    scenario.write_events(second)
    return first + second


def as_text(rows: set[tuple]) -> set[tuple]:
    return {tuple(None if value is None else str(value) for value in row) for row in rows}


def schema_folder(scenario: Scenario) -> Path:
    """The folder of the scenario's schema in the suite's warehouse."""
    rows = scenario.sql("describe schema extended {schema}")
    (location,) = [row[1] for row in rows if row[0] == "Location"]
    return Path(location.removeprefix("file:"))


class OwnProcess:
    """dbt runs of a scenario, each in a process of its own (as an orchestrator starts them), on a warehouse
    of their own: a run can be killed like a lost machine, JVM and all."""

    def __init__(self, scenario: Scenario, workdir: Path) -> None:
        self.scenario = scenario
        self.workdir = workdir
        self.env = {
            **os.environ,
            "VISITOR_LOOKUP_WAREHOUSE_DIR": str(workdir / "warehouse"),
            "VISITOR_LOOKUP_SCHEMA": scenario.target_schema,
            "VISITOR_LOOKUP_EVENTS_PATH": str(scenario.events_dir),
            "DBT_LOG_PATH": str(workdir / "logs"),
            "DBT_PROFILES_DIR": str(ROOT / "profiles"),
        }

    def start(self, *args: str) -> subprocess.Popen[str]:
        command = [
            str(Path(sys.executable).with_name("dbt")),
            *args,
            "--project-dir",
            str(ROOT),
            "--target-path",
            str(self.workdir / "target"),
            "--vars",
            json.dumps(VARS),
        ]
        return subprocess.Popen(
            command,
            cwd=self.workdir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: the JVM dies with it
        )

    def run(self) -> str:
        process = self.start("run")
        output, _ = process.communicate(timeout=600)
        assert process.returncode == 0, output[-4000:]
        return output

    def kill_at(self, moment: str, fragment: str | None, delay: float) -> tuple[bool, str]:
        """Start a run and SIGKILL its whole process group `delay` seconds after the first output line holding
        `fragment` (after its start when None); whether it was still running then, and its output."""
        process = self.start("run")
        assert process.stdout is not None
        output: list[str] = []
        if fragment is not None:
            for line in process.stdout:
                output.append(line)
                if fragment in line:
                    break
        time.sleep(delay)
        running = process.poll() is None
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        output += process.stdout.readlines()
        assert fragment is None or any(fragment in line for line in output), f"{moment}: {''.join(output)}"
        return running, "".join(output)

    def export(self) -> dict:
        process = subprocess.run(
            [sys.executable, "-c", EXPORT, self.scenario.schema, str(ROOT)],
            cwd=self.workdir,
            env={**self.env, "DBT_LOG_PATH": str(self.workdir / "logs_export")},
            capture_output=True,
            text=True,
            timeout=600,
        )
        exported = [line for line in process.stdout.splitlines() if line.startswith("EXPORT ")]
        assert len(exported) == 1, process.stdout[-3000:] + process.stderr[-3000:]
        return json.loads(exported[0].removeprefix("EXPORT "))


@pytest.mark.slow
def test_a_run_killed_at_any_moment_is_repaired_by_the_next(scenario: Scenario, tmp_path: Path) -> None:
    """Runs SIGKILLed (JVM and all) while the JVM starts, in a hook, while a per-run table is replaced, in a
    merge and in on-run-end, one after the other: each run after a kill gets past what the killed one left to
    the moment it is killed in turn, the run after the last succeeds, and the tables end exact. (One run
    after all the kills, not one after each: every dbt process here starts a JVM of its own.) What a kill
    leaves of a JVM half started or of a per-run table (Parquet on both formats) does not depend on the
    table format: the Delta pass kills in the hook that creates the kept tables, a merge and on-run-end."""
    seed = int(os.environ.get("VISITOR_LOOKUP_KILL_SEED", time.time_ns() % 10_000))
    rng = random.Random(seed)
    processes = OwnProcess(scenario, tmp_path / "own")
    processes.workdir.mkdir()
    schema = scenario.schema
    moments = [
        ("JVM start", None, rng.uniform(1.0, 6.0)),
        ("on-run-start hook", "START hook: visitor_lookup.on-run-start", rng.uniform(0.0, 1.5)),
        (
            "per-run table",
            f"START sql scratch_table model {schema}.base_events_this_run",
            rng.uniform(0.0, 1.5),
        ),
        ("merge", f"START sql action_merge model {schema}.user_mapping", rng.uniform(0.0, 2.0)),
        ("on-run-end", "START hook: visitor_lookup.on-run-end", rng.uniform(0.0, 1.0)),
    ]
    if table_format() == "delta":
        moments = [moment for moment in moments if moment[0] not in ("JVM start", "per-run table")]
    seen: list[Raw] = []
    kills: list[str] = []
    for (moment, fragment, delay), batch in zip(
        moments, random_arrivals(seed=41, batches=len(moments)), strict=True
    ):
        scenario.write_events(batch)
        seen += batch
        running, _ = processes.kill_at(f"seed {seed}, after {kills}: {moment}", fragment, delay)
        kills.append(f"{moment} + {delay:.2f} s, running: {running}")
    repair = processes.run()
    assert "Completed successfully" in repair, f"seed {seed}, after {kills}"
    tables = processes.export()
    expected = lookup_tables(processed_events(seen).values())
    assert tables["duplicate_ids"] == [["0"]], f"seed {seed}"
    assert set(map(tuple, tables["first_dates"])) == as_text(expected.first_dates), f"seed {seed}"
    assert set(map(tuple, tables["user_mapping"])) == as_text(expected.user_mapping), f"seed {seed}"
    assert set(map(tuple, tables["visitor_lookup"])) == as_text(expected.visitor_lookup), f"seed {seed}"


def test_folders_left_without_their_tables_are_cleared(scenario: Scenario) -> None:
    """A run killed while it created or dropped a table leaves the folder without its metastore entry;
    Spark then refuses to create the table there, unless the project clears it first."""
    first, second = random_arrivals(seed=43, batches=2)
    scenario.dbt("show", "--inline", "select 1 as up")  # the suite's Spark starts with its first dbt call
    scenario.sql("create schema {schema}")
    folder = schema_folder(scenario)
    for name in PER_RUN_TABLES + PERMANENT_TABLES:  # a first build killed half-way, at every table
        (folder / name).mkdir()
        (folder / name / "part-00000-left-by-a-killed-run.parquet").write_bytes(b"not Parquet")
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    assert scenario.lookup_tables() == lookup_tables(processed_events(first).values())

    # killed between the drop of a per-run table and its new create: the folder stays, the entry is gone
    kept = scenario.table_version("base_new_event_limits")
    saved = folder.parent / f"{scenario.schema}_saved"
    shutil.copytree(folder / "base_new_event_limits", saved)
    scenario.sql("drop table {schema}.base_new_event_limits purge")
    shutil.copytree(saved, folder / "base_new_event_limits")
    # killed while it wrote a change set: a file that is not Parquet in the model's folder of change sets
    for name in INCREMENTAL_MODELS:
        (folder / f"{name}__dbt_changes").mkdir()
        (folder / f"{name}__dbt_changes" / "part-00000-killed.parquet").write_bytes(b"not Parquet")
    scenario.write_events(second)
    scenario.dbt("run", vars=VARS)
    assert scenario.table_version("base_new_event_limits") != kept
    assert scenario.lookup_tables() == lookup_tables(processed_events(first + second).values())
    # (first_dates and user_mapping merge per-run tables of their changes, and write no change set)
    for name in ("processed_events", "visitor_lookup_spans"):  # each merged rows in the second run
        changes = folder / f"{name}__dbt_changes"  # its change set, and what was in its way, went
        assert not [path for path in changes.rglob("*") if path.is_dir()], name
        assert scenario.sql(f"select count(*) from parquet.`{changes}`")[0][0] == 0, name


def test_a_vanished_table_stops_the_run_until_restored_or_rebuilt(scenario: Scenario) -> None:
    seen = built_with_a_batch_waiting(scenario, seed=47)
    scenario.sql("drop table {schema}.user_mapping purge")  # behind the project's back
    before = {name: scenario.table_version(name) for name in ("processed_events", "incremental_manifest")}

    scenario.dbt("run", vars=VARS, ok=False)

    (line,) = scenario.logged("user_mapping is missing")
    assert f"Visitor lookup: {scenario.schema}.user_mapping is missing" in line
    assert "Restore it" in line and "visitor_lookup__allow_refresh" in line
    assert not scenario.logged("START sql")
    assert {name: scenario.table_version(name) for name in before} == before
    assert not scenario.sql("show tables in {schema} like 'user_mapping'")

    scenario.dbt("run", "--full-refresh", vars={**VARS, "visitor_lookup__allow_refresh": True})
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())


@pytest.mark.same_on_both_formats
def test_models_of_the_incremental_set_without_the_intake_are_refused(scenario: Scenario) -> None:
    """One model per task, as astronomer-cosmos runs a project by default."""
    seen = built_with_a_batch_waiting(scenario, seed=53)
    manifest = scenario.manifest()

    scenario.dbt("run", "--select", "user_mapping", vars=VARS, ok=False)

    (line,) = scenario.logged("Visitor lookup: this invocation selects user_mapping")
    assert "dbt build --selector visitor_lookup_incremental" in line
    assert "START sql" not in " ".join(scenario.log_lines)
    assert scenario.manifest() == manifest
    scenario.dbt("build", "--selector", "visitor_lookup_incremental", vars=VARS)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())


@pytest.mark.same_on_both_formats
def test_an_inspect_only_run_writes_no_history_and_takes_no_run_number(scenario: Scenario) -> None:
    seen = built_with_a_batch_waiting(scenario, seed=59)

    scenario.dbt("run", "--select", "base_new_event_limits", vars=VARS)
    assert scenario.logged("Visitor lookup: Run number 2")
    scenario.dbt("run", "--select", "path:models/lookup/visitor_lookup.sql", vars=VARS)  # the view alone

    scenario.dbt("run", vars=VARS)
    runs = scenario.sql("select run_number, status from {schema}.visitor_lookup_runs order by started_at")
    assert [(row.run_number, row.status) for row in runs] == [(1, "success"), (2, "success")], runs
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())


@pytest.mark.same_on_both_formats
def test_a_failing_on_run_start_runs_no_model(scenario: Scenario) -> None:
    scenario.write_events(random_arrivals(seed=61, batches=1)[0])
    scenario.dbt("run", vars={**VARS, "visitor_lookup__lock_lease_minutes": 0}, ok=False)
    assert scenario.logged("Visitor lookup: var visitor_lookup__lock_lease_minutes must be a whole number")
    assert not scenario.logged("START sql")
    if scenario.sql("show schemas like '{schema}'"):  # dbt may stop before it creates the schema
        assert not scenario.sql("show tables in {schema}")


def test_a_full_refresh_keeps_the_erasure_log(scenario: Scenario) -> None:
    """The log proves to an auditor that a request was done, when, and by which run."""
    first, second = random_arrivals(seed=67, batches=2)
    requests = Requests()
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    user = next(event.user_id for event in first if event.user_id)
    requests.add(scenario, "r-audit", user=user)
    scenario.dbt("run", vars=VARS)
    log = scenario.table("erasure_log")
    assert [row.request_id for row in log] == ["r-audit"]

    scenario.write_events(second)
    scenario.dbt("run", "--full-refresh", vars={**VARS, "visitor_lookup__allow_refresh": True})

    assert scenario.table("erasure_log") == log
    assert not scenario.logged("Visitor lookup: erasing ")  # done stays done
    remaining = requests.remaining(first + second)
    assert scenario.lookup_tables() == lookup_tables(processed_events(remaining).values())
    assert set(INCREMENTAL_MODELS) <= set(scenario.manifest())


def test_the_table_format_is_the_session_catalog_s_whatever_the_target_s_name(
    scenario: Scenario, tmp_path: Path
) -> None:
    # a production target named after the other format: the tables follow the session's catalog
    format_ = table_format()
    other = "iceberg" if format_ == "delta" else "delta"
    profiles = yaml.safe_load((ROOT / "profiles" / "profiles.yml").read_text())
    outputs = profiles["visitor_lookup"]["outputs"]
    outputs[f"prod_{other}_backup"] = outputs[os.environ["VISITOR_LOOKUP_TARGET"]]
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "profiles.yml").write_text(yaml.safe_dump(profiles))
    scenario.profiles_dir = tmp_path / "profiles"
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    scenario.write_events([Raw("e1", "c1", "u1", now - dt.timedelta(hours=2), now - dt.timedelta(hours=1))])
    vars = {
        # the day before the event's: the event lands two hours ago, yesterday in the first hours of a day
        "visitor_lookup__start_date": str((now - dt.timedelta(days=1)).date()),
        "visitor_lookup__events_path": str(scenario.events_dir),
    }
    scenario.dbt("run", "--target", f"prod_{other}_backup", vars=vars)
    for name in ("first_dates", "processed_events", "incremental_manifest"):
        described = scenario.sql(f"describe table extended {{schema}}.{name}")
        assert {row.col_name: row.data_type for row in described}["Provider"] == format_, name
    assert [(row.visitor_cookie_id, row.user_id) for row in scenario.table("visitor_lookup")] == [
        ("c1", "u1")
    ]
