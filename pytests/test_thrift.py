"""The thrift target on a real Spark cluster (standalone master, two workers, Thrift Server) on loopback.

The server runs in a session time zone west of UTC, as one started in a local zone would: every table and
limit must be what it is under UTC (spec §2). The tests' own queries ask for UTC on their connection.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from pyhive import hive

from visitor_lookup.cluster import Cluster, free_port, running

from .conftest import ROOT, TEST_JAVA_OPTIONS, TEST_SWITCHES, Scenario, table_format
from .reference import Raw, lookup_tables, normalise_id, processed_events
from .test_erasure import Requests
from .test_lookup_properties import VARS, random_arrivals
from .test_time_zones import ZONE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    local = Cluster(
        tmp_path_factory.mktemp("cluster"),
        thrift_port=free_port(),
        master_port=free_port(),
        table_format=table_format(),
        # Delta's VACUUM of less than 7 days allowed, as a team would: the pipeline's erasing run vacuums
        spark_conf=(
            *TEST_SWITCHES,
            ("spark.sql.session.timeZone", ZONE),
            ("spark.databricks.delta.retentionDurationCheck.enabled", "false"),
        ),
        java_options=TEST_JAVA_OPTIONS,
    )
    with running(local):
        yield local


class ThriftScenario(Scenario):
    """A scenario whose dbt target is the Thrift Server and whose events are a table of its format."""

    def __init__(self, name: str, workdir: Path, cluster: Cluster) -> None:
        super().__init__(name, workdir)
        self.port = cluster.thrift_port
        self.target = cluster.dbt_target
        self.events_schema = f"{self.target_schema}_web"
        self.sql(f"create database if not exists {self.events_schema}")
        self.sql(
            f"create table {self.events_schema}.pageviews (event_id string, visitor_cookie_id string, "
            f"user_id string, landed timestamp, loaded_at timestamp) using {table_format()}"
        )

    def write_events(self, events: Iterable[Raw]) -> Path:
        path = super().write_events(events)
        self.sql(f"insert into {self.events_schema}.pageviews select * from parquet.`{path}`")
        return path

    def dbt(self, *args: str, vars: dict | None = None, ok: bool = True):
        os.environ["VISITOR_LOOKUP_THRIFT_PORT"] = str(self.port)
        run_vars = {**(vars or {}), "visitor_lookup__events_schema": self.events_schema}
        return super().dbt(*args, "--target", self.target, vars=run_vars, ok=ok)

    def sql(self, query: str) -> list[tuple]:
        with hive.connect(host="127.0.0.1", port=self.port, username="dbt") as connection:
            cursor = connection.cursor()
            cursor.execute("set spark.sql.session.timeZone = UTC")
            cursor.execute(query.format(schema=self.schema))
            if not query.lstrip().lower().startswith(("select", "show", "describe")):
                return []  # statements have no result set to describe
            dates = [i for i, column in enumerate(cursor.description) if column[1] == "DATE_TYPE"]
            return [
                tuple(dt.date.fromisoformat(v) if i in dates and v else v for i, v in enumerate(row))
                for row in cursor.fetchall()
            ]


# On every Spark line (.ci/run): the Thrift Server, its sessions and its result sets are the line's own. The
# lock tests below are SQL over the lock table and processes of our own: the default line checks them.
@pytest.mark.every_spark_line
def test_pipeline_and_tests_through_the_thrift_server(cluster: Cluster, tmp_path: Path) -> None:
    scenario = ThriftScenario("thrift_pipeline", tmp_path, cluster)
    seen: list[Raw] = []
    requests = Requests()
    first, second = random_arrivals(seed=5, events=120, batches=2)
    scenario.write_events(first)
    seen += first
    scenario.dbt("run", vars=VARS)
    # the start date and the limits in UTC, the server's zone notwithstanding
    assert scenario.logged("Processing data between 2026-01-01 00:00:00.000000 and ")
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
    # An erasure through the Thrift Server: its run rewrites the lookup tables it took rows from
    # (compaction, an INSERT OVERWRITE on Iceberg and OPTIMIZE on Delta, whatever the files' count), and
    # then expires every older snapshot, run_lock's included (Iceberg's procedures over thrift), or vacuums
    # every kept table (Delta's VACUUM, its files deleted by the executors).
    user = next(normalise_id(event.user_id) for event in first if normalise_id(event.user_id))
    requests.add(scenario, "r-thrift", user=user)
    scenario.write_events(second)
    seen += second
    scenario.dbt("run", vars={**VARS, "visitor_lookup__snapshot_retention_days": 0})
    assert scenario.lookup_tables() == lookup_tables(processed_events(requests.remaining(seen)).values())
    compacted = " ".join(scenario.logged("Visitor lookup: compacted "))
    for name in ("user_mapping", "visitor_lookup_spans"):  # the tables the erased user's rows leave
        assert f"{scenario.schema}.{name}: " in compacted, name
    if table_format() == "iceberg":
        expired = " ".join(scenario.logged("Visitor lookup: expired "))
        for name in ("incremental_manifest", "processed_events", "user_mapping", "run_lock"):
            assert f"{scenario.schema}.{name} older than" in expired, name
            assert scenario.sql(f"select count(*) from spark_catalog.{{schema}}.{name}.snapshots") == [(1,)]
    else:
        vacuumed = " ".join(scenario.logged("Visitor lookup: vacuumed "))
        for name in ("incremental_manifest", "processed_events", "user_mapping", "run_lock"):
            assert f"{scenario.schema}.{name}, retaining 0 hours" in vacuumed, name
    # one row per run in the run history, written through the Thrift Server too
    runs = scenario.sql(
        "select run_number, status, events_read from {schema}.visitor_lookup_runs order by run_number"
    )
    assert [(number, status) for number, status, _ in runs] == [(1, "success"), (2, "success")]
    assert all(read > 0 for _, _, read in runs)
    scenario.dbt("test", vars=VARS)
    assert scenario.logged("Done. PASS=")
    # the runs' executors: one on each worker, each a JVM of its own, so every shuffle crossed them
    with urllib.request.urlopen(f"http://127.0.0.1:{cluster.master_port + 1}/json/", timeout=30) as page:
        workers = json.load(page)["workers"]
    assert [(worker["state"], worker["coresused"]) for worker in workers] == [("ALIVE", 1), ("ALIVE", 1)]


OWNER = """
import signal, sys, time
from pathlib import Path
# SIGTERM ignored, as an orchestrator's process may have it (a background job ignores SIGINT, and Dagster,
# done, gives SIGTERM SIGINT's action): the cluster must still end with this process
signal.signal(signal.SIGTERM, signal.SIG_IGN)
from visitor_lookup.cluster import Cluster, running
with running(Cluster(Path(sys.argv[1]), thrift_port=int(sys.argv[2]), master_port=int(sys.argv[3]))):
    print("ready", flush=True)
    time.sleep(600)
"""


def alive(pid: int) -> bool:
    """Running, not merely a zombie no one has reaped yet."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def processes_working_under(folder: Path) -> set[int]:
    """Processes whose working directory is inside the folder (the workers' executors)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if Path(os.readlink(entry / "cwd")).is_relative_to(folder):
                    found.add(int(entry.name))
    return found


@pytest.mark.same_on_both_formats
def test_a_killed_owner_leaves_no_cluster_process(tmp_path: Path) -> None:
    home = tmp_path / "owned"
    ports = [str(free_port()), str(free_port())]
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(home), *ports], stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == "ready"
        started = set(json.loads((home / "pids.json").read_text()).values())
        deadline = time.monotonic() + 60
        while len(executors := processes_working_under(home)) < 2 and time.monotonic() < deadline:
            time.sleep(1)
        assert len(executors) == 2, "the Thrift Server's executors, one on each worker, never started"
        owned = started | executors
        assert all(alive(pid) for pid in owned)

        owner.kill()  # SIGKILL: no finally block runs
        assert owner.wait(timeout=60) == -signal.SIGKILL

        deadline = time.monotonic() + 60
        while any(alive(pid) for pid in owned) and time.monotonic() < deadline:
            time.sleep(1)
        assert not [pid for pid in owned if alive(pid)]
    finally:
        owner.kill()


class Started:
    """A `dbt` process of a thrift scenario, started in the background, its output read as it comes."""

    def __init__(self, scenario: ThriftScenario, name: str, vars: dict) -> None:
        run_vars = {**VARS, **vars, "visitor_lookup__events_schema": scenario.events_schema}
        self.output: list[str] = []
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("dbt")),
                "run",
                "--target",
                scenario.target,
                "--project-dir",
                str(scenario.project_dir),
                "--profiles-dir",
                str(ROOT / "profiles"),
                "--target-path",
                str(scenario.target_dir.with_name(f"target_{name}")),
                "--vars",
                json.dumps(run_vars),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={
                **os.environ,
                "VISITOR_LOOKUP_THRIFT_PORT": str(scenario.port),
                "VISITOR_LOOKUP_SCHEMA": scenario.target_schema,
                "DBT_LOG_PATH": str(scenario.target_dir.with_name(f"logs_{name}")),
            },
        )

    def read_until(self, fragment: str) -> None:
        """Read the output up to the first line holding the fragment."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            if fragment in line:
                return
        raise AssertionError(f"no line with {fragment!r}:\n{''.join(self.output[-30:])}")

    def finish(self) -> int:
        assert self.process.stdout is not None
        self.output += self.process.stdout.readlines()
        return self.process.wait(timeout=600)

    def said(self, fragment: str) -> list[str]:
        return [line for line in self.output if fragment in line]


# One lock held, and what other runs do about it: one waits, one stops at once and leaves alone the folder of
# a table the holder is creating, a release by hand names the holder, and the waiting run then takes the
# lock, clears that folder and ends exact. All of it is SQL over the lock table, the same on either format.
@pytest.mark.same_on_both_formats
def test_a_held_lock_makes_runs_wait_or_stop_until_released(cluster: Cluster, tmp_path: Path) -> None:
    scenario = ThriftScenario("thrift_lock", tmp_path, cluster)
    first_batch, second_batch = random_arrivals(seed=7, events=200, batches=2)
    scenario.write_events(first_batch)
    scenario.dbt("run", vars=VARS)
    scenario.write_events(second_batch)

    # Another run holds the lock and is creating a per-run table: Spark has written its files, not yet its
    # metastore entry, so a run's listing does not have the table and its folder looks left behind.
    described = scenario.sql("describe schema extended {schema}")
    (location,) = [value for name, value in described if name == "Location"]
    folder = Path(location.removeprefix("file:")) / "base_events_this_run"
    scenario.sql("drop table {schema}.base_events_this_run")
    folder.mkdir(parents=True, exist_ok=True)
    being_written = folder / "part-00000-being-written.parquet"
    being_written.write_bytes(b"the other run's rows")
    scenario.sql(
        "insert into {schema}.run_lock select 'run', 'the-other-run', 'dbt run', current_timestamp(), "
        "current_timestamp() + interval 15 minutes"
    )

    waiting = Started(scenario, "waiting", {"visitor_lookup__lock_wait_seconds": 600})
    try:
        waiting.read_until("Visitor lookup: waiting for the run lock, held by dbt run the-other-run")
        scenario.dbt("run", vars=VARS, ok=False)
        (stopped,) = scenario.logged("Visitor lookup: another run holds the run lock (dbt run the-other-run")
        assert "this run stopped before changing anything" in stopped
        assert "dbt run-operation visitor_lookup_release_run_lock" in stopped
        assert not scenario.logged("START sql")
        assert being_written.read_bytes() == b"the other run's rows"

        release = ("run-operation", "visitor_lookup_release_run_lock")
        scenario.dbt(*release, "--args", "{holder: another-run}", vars=VARS)
        assert scenario.logged("Visitor lookup: the run lock is not held by another-run; nothing released")
        assert waiting.process.poll() is None
        scenario.dbt(*release, vars=VARS)
        assert scenario.logged("Visitor lookup: released the run lock of dbt run the-other-run, since ")
        assert waiting.finish() == 0
    finally:
        waiting.process.kill()

    assert waiting.said("Visitor lookup: run lock taken")
    assert waiting.said("Visitor lookup: run lock released")
    assert not being_written.exists()
    (duplicates,) = scenario.sql("select count(*) - count(distinct event_id) from {schema}.processed_events")
    assert duplicates == (0,)
    expected = processed_events(first_batch + second_batch)
    assert scenario.lookup_tables() == lookup_tables(expected.values())
    assert scenario.sql("select count(*) from {schema}.run_lock") == [(0,)]


# Checked in the Delta pass: it mostly waits out two leases.
@pytest.mark.same_on_both_formats(checked_on="delta")
def test_a_killed_run_holds_the_lock_only_until_its_lease_lapses(cluster: Cluster, tmp_path: Path) -> None:
    scenario = ThriftScenario("thrift_lock_lease", tmp_path, cluster)
    lease = {"visitor_lookup__lock_lease_minutes": 1}
    seed = int(os.environ.get("VISITOR_LOOKUP_KILL_SEED", time.time_ns() % 10_000))
    pause = random.Random(seed).uniform(0, 2)
    moments = [
        ("in on-run-start", "Visitor lookup: run lock taken", 0.0),
        ("in a merge", f"START sql action_merge model {scenario.schema}.processed_events", pause),
    ]
    seen: list[Raw] = []
    for (moment, fragment, delay), batch in zip(
        moments, random_arrivals(seed=8, events=100, batches=2), strict=True
    ):
        scenario.write_events(batch)
        seen += batch
        killed = Started(scenario, "killed", lease)
        try:
            killed.read_until(fragment)
            time.sleep(delay)
            killed.process.kill()
            killed.process.wait(timeout=30)
        finally:
            killed.process.kill()

        # The killed run's lease: a minute from when it took or last renewed the lock. Its end is then
        # brought to 20 s from now, which the next run still finds ahead (it starts in seconds), so the test
        # waits out 20 s instead of the minute.
        (lease_ok,) = scenario.sql(
            "select expires_at >= taken_at + interval 1 minute and expires_at > current_timestamp() "
            "and expires_at <= current_timestamp() + interval 1 minute from {schema}.run_lock"
        )
        assert lease_ok == (True,), moment
        scenario.sql("update {schema}.run_lock set expires_at = current_timestamp() + interval 20 seconds")
        # the next run waits out the lease, takes the lock over and repairs what the killed run left
        scenario.dbt("run", vars={**VARS, **lease, "visitor_lookup__lock_wait_seconds": 120})
        context = f"killed {moment} (+{delay:.2f} s, seed {seed})"
        assert scenario.logged("Visitor lookup: waiting for the run lock, held by dbt run "), context
        (took_over,) = scenario.logged("Visitor lookup: took over the run lock from dbt run ")
        assert "its lease lapsed, so that run stopped without releasing it" in took_over
        assert scenario.logged("Visitor lookup: run lock released"), context
        assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values()), context
        assert scenario.sql("select count(*) from {schema}.run_lock") == [(0,)]


# Checked in the Iceberg pass, which starts the cluster for the pipeline test anyway: the Delta pass and its
# lane are the longer chain (balance, docs/testing.md).
@pytest.mark.same_on_both_formats
def test_a_run_renews_its_lease_as_it_goes(cluster: Cluster, tmp_path: Path) -> None:
    scenario = ThriftScenario("thrift_lock_renewal", tmp_path, cluster)
    batch = random_arrivals(seed=10, events=60, batches=1)[0]
    scenario.write_events(batch)

    # a model that runs for longer than a third of the lease: the dbt process paused between two models
    run = Started(scenario, "renewing", {"visitor_lookup__lock_lease_minutes": 1})
    try:
        run.read_until(f"START sql scratch_table model {scenario.schema}.base_new_event_limits")
        run.process.send_signal(signal.SIGSTOP)
        time.sleep(25)
        run.process.send_signal(signal.SIGCONT)
        assert run.finish() == 0
    finally:
        run.process.kill()

    assert run.said("Visitor lookup: run lock renewed until ")
    assert run.said("Visitor lookup: run lock released")
    assert scenario.lookup_tables() == lookup_tables(processed_events(batch).values())
