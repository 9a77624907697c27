"""One embedded Spark (started by the first dbt call) serves the whole suite.

Each test is a scenario with its own schema (its own directory under the
suite's warehouse) and its own events folder; dbt runs in-process through
dbtRunner and its log lines are captured for assertions.

The tables' format is a property of that one Spark (its catalog and SQL
extension), so a pytest run covers one format: `--table-format delta`
(the default, target local) or `iceberg` (target local_iceberg); bin/test
runs the suite once per format. Tests marked `same_on_both_formats` check what
does not depend on the format (SQL over the manifest, intake into the
per-run Parquet tables, dbt's ordering, the invariant tests' SQL) and run in
the Iceberg pass, or in the Delta pass where the marker says
`checked_on="delta"` (so that the two passes, run side by side, end about
together); the Delta pass also keeps what Delta does its own way: merges,
compaction, erasure, expiry, the run history, the host project and the
Thrift Server.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import takewhile
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dbt.adapters.spark.connections import SparkCredentials
from dbt.cli.main import dbtRunner, dbtRunnerResult
from pyspark.sql import Row, SparkSession

from visitor_lookup.cluster import LOCAL_TARGETS
from visitor_lookup.generate import SCHEMA
from visitor_lookup.spark_home import install_log_config

from .reference import LookupTables, Raw

ROOT = Path(__file__).resolve().parents[1]
# Spark's switches for its own tests, for the embedded session and the thrift cluster's application:
# plans and expressions interpreted, no Java generated and compiled for them; no adaptive planning between
# a query's stages, and task binaries broadcast uncompressed. A test's queries read a few rows, and
# compiling code, planning again and compressing cost more than running them (docs/performance.md). What a
# query returns does not depend on them; the benchmark runs Spark as users do.
TEST_SWITCHES = (
    ("spark.sql.codegen.wholeStage", "false"),
    ("spark.sql.codegen.factoryMode", "NO_CODEGEN"),
    ("spark.sql.adaptive.enabled", "false"),
    ("spark.broadcast.compress", "false"),
)
# The JVM options the profile gives the embedded session (profiles.yml says why: the parallel collector,
# quick compilation only), for the thrift cluster's driver and executors, where the suite's short queries
# paid Java's optimising compiler and G1 as the embedded session did: the Thrift Server's pipeline and lock
# tests took under three quarters of the time (docs/testing.md).
TEST_JAVA_OPTIONS = "-XX:+UseParallelGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
# What dbt reads of the project (profiles/ aside): a copy of these is the project.
PROJECT_FILES = ("models", "macros", "tests", "analyses", "dbt_project.yml", "selectors.yml")
INCREMENTAL_MODELS = (
    "processed_events",
    "quarantined_events",
    "first_dates",
    "user_mapping",
    "visitor_lookup_spans",
)
# The incremental models that hold the lookup's history.
LOOKUP_TABLES = ("first_dates", "user_mapping", "visitor_lookup_spans")

os.environ["TZ"] = "UTC"
time.tzset()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--table-format",
        choices=sorted(LOCAL_TARGETS),
        default="delta",
        help="the format the models write in this run (one embedded Spark per run, so one format)",
    )
    parser.addoption(
        "--ansi",
        action="store_true",
        help="run Spark with ANSI SQL mode on, as Spark 4 and Databricks SQL warehouses do by default",
    )


def pytest_configure(config: pytest.Config) -> None:
    os.environ["VISITOR_LOOKUP_TARGET"] = LOCAL_TARGETS[config.getoption("--table-format")]
    if config.getoption("--ansi"):
        keep_ansi_mode_on()


def keep_ansi_mode_on() -> None:
    """Let ANSI SQL mode stay on in the sessions dbt-spark opens, embedded or through the Thrift Server.

    dbt-spark sets `spark.sql.ansi.enabled=false` last in its credentials, over whatever a profile says,
    so no profile can turn ANSI on; dbt-databricks leaves the warehouse's default (on). This undoes that
    one line, after dbt-spark's own checks, so that every statement the project sends runs as there.
    """
    post_init = SparkCredentials.__post_init__

    def post_init_with_ansi(self: SparkCredentials) -> None:
        post_init(self)
        self.server_side_parameters["spark.sql.ansi.enabled"] = "true"

    SparkCredentials.__post_init__ = post_init_with_ansi


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    pass_format = config.getoption("--table-format")
    for item in items:
        same = item.get_closest_marker("same_on_both_formats")
        checked_on = same.kwargs.get("checked_on", "iceberg") if same else pass_format
        if checked_on not in LOCAL_TARGETS:
            # A misspelt format would skip the test in both passes, and nothing would say so.
            formats = sorted(LOCAL_TARGETS)
            raise pytest.UsageError(f"{item.nodeid}: checked_on={checked_on!r}, not one of {formats}")
        if checked_on != pass_format:
            reason = f"same on both formats: checked in the {checked_on} pass"
            item.add_marker(pytest.mark.skip(reason=reason))
        if pass_format == "delta" and item.get_closest_marker("iceberg_only"):
            item.add_marker(pytest.mark.skip(reason="what only Iceberg tables do"))
        lane = item.get_closest_marker("every_spark_line")
        lane_format = lane.kwargs.get("on", pass_format) if lane else pass_format
        if os.environ.get("VISITOR_LOOKUP_SPARK") and lane_format != pass_format:
            item.add_marker(pytest.mark.skip(reason=f"on this Spark line, checked in the {lane_format} pass"))


def table_format() -> str:
    """The format of this run's tables: iceberg or delta."""
    return "delta" if os.environ["VISITOR_LOOKUP_TARGET"] == LOCAL_TARGETS["delta"] else "iceberg"


def ts(text: str) -> dt.datetime:
    """A naive UTC datetime from 'YYYY-MM-DD HH:MM[:SS[.ffffff]]'."""
    return dt.datetime.fromisoformat(text)


class Scenario:
    """A schema, an events folder, and dbt invocations against them."""

    def __init__(self, name: str, workdir: Path) -> None:
        # A name too long for a schema keeps a hash of all of it: two tests, or two cases of one, whose
        # names differ only past the cut must not share a schema.
        schema = re.sub(r"[^a-z0-9]+", "_", name.lower())
        if len(schema) > 60:
            schema = f"{schema[:51]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
        self.target_schema = "t_" + schema
        # Where the models are: dbt's default custom schema of visitor_lookup__schema's default.
        self.schema = f"{self.target_schema}_visitor_lookup"
        self.events_dir = workdir / "events"
        self.events_dir.mkdir(parents=True)
        self.target_dir = workdir / "target"
        self.project_dir = ROOT
        self.profiles_dir = ROOT / "profiles"
        self.log_lines: list[str] = []
        # dbt's JSON artifacts (manifest.json, run_results.json, graph.gpickle) are written only for the
        # tests that read them or `dbt retry`: writing them cost a third of an invocation's Python time.
        self.write_json = False
        self._files = 0

    # -- input ---------------------------------------------------------------
    def write_events(self, events: Iterable[Raw]) -> Path:
        """Drop one Parquet file with these events into the events folder."""
        rows = list(events)
        columns = list(zip(*rows, strict=True)) if rows else [[] for _ in SCHEMA.names]
        return self.write_table(pa.table(dict(zip(SCHEMA.names, columns, strict=True)), schema=SCHEMA))

    def write_table(self, table: pa.Table) -> Path:
        """Drop one Parquet file with these rows, in any layout, into the events folder."""
        self._files += 1
        path = self.events_dir / f"file_{self._files:03d}.parquet"
        pq.write_table(table, path)
        return path

    # -- dbt -----------------------------------------------------------------
    def dbt(self, *args: str, vars: dict | None = None, ok: bool = True) -> dbtRunnerResult:
        os.environ["VISITOR_LOOKUP_SCHEMA"] = self.target_schema
        os.environ["VISITOR_LOOKUP_EVENTS_PATH"] = str(self.events_dir)
        self.log_lines = []
        command = [
            *args,
            "--project-dir",
            str(self.project_dir),
            "--profiles-dir",
            str(self.profiles_dir),
            "--target-path",
            str(self.target_dir),
        ]
        if vars:
            command += ["--vars", json.dumps(vars, default=str)]
        if not self.write_json:
            command.append("--no-write-json")
        runner = dbtRunner(callbacks=[lambda event: self.log_lines.append(event.info.msg)])
        with self._parse_kept_per_vars(vars):
            result = runner.invoke(command)
        if result.success != ok:
            tail = "\n".join(self.log_lines[-40:])
            raise AssertionError(f"dbt {' '.join(args)} success={result.success}, wanted {ok}:\n{tail}")
        return result

    @contextmanager
    def _parse_kept_per_vars(self, vars: dict | None) -> Iterator[None]:
        """Give dbt the parse it saved for these vars, and keep the one it saves under them.

        dbt keeps one parse per target folder and parses the whole project again (seconds) whenever
        the --vars differ from the last invocation's; a scenario that alternates between a few sets
        of vars parses once per set instead. dbt still checks the parse it is given against the
        project and the profile, as it checks its own.
        """
        current = self.target_dir / "partial_parse.msgpack"
        key = hashlib.sha256(json.dumps(vars or {}, sort_keys=True, default=str).encode()).hexdigest()[:16]
        kept = self.target_dir / "parses" / f"{key}.msgpack"
        current.unlink(missing_ok=True)
        if kept.exists():
            shutil.copyfile(kept, current)
        try:
            yield
        finally:
            if current.exists():
                kept.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(current, kept)

    def logged(self, fragment: str) -> list[str]:
        return [line for line in self.log_lines if fragment in line]

    # -- output --------------------------------------------------------------
    @property
    def spark(self) -> SparkSession:
        return SparkSession.builder.getOrCreate()

    def sql(self, query: str) -> list[Row]:
        return self.spark.sql(query.format(schema=self.schema)).collect()

    def failing_rows(self, result: dbtRunnerResult, test: str) -> list[Row]:
        """The rows of the failed tests whose names start with `test` (none if they passed): their compiled
        queries, run again."""
        rows: list[Row] = []
        for r in result.result.results:
            if r.status == "fail" and r.node.name.startswith(test):
                rows += self.sql(r.node.compiled_code.replace("{", "{{").replace("}", "}}"))
        return rows

    def broken_invariants(self, result: dbtRunnerResult, model: str) -> set[str]:
        """The invariants that the failed scd_invariants test of `model` names in its rows."""
        rows = self.failing_rows(result, f"scd_invariants_{model}_visitor_cookie_id")
        return {name for row in rows for name in row.broken_invariants.split(", ")}

    def table(self, name: str) -> list[Row]:
        return self.sql(f"select * from {{schema}}.{name}")

    def lookup_tables(self) -> LookupTables:
        """The three tables as sets of tuples shaped like the reference's."""
        return LookupTables(
            {
                tuple(row)
                for row in self.sql(
                    "select visitor_cookie_id, first_date, first_day, vcid_first_two "
                    "from {schema}.first_dates"
                )
            },
            {
                tuple(row)
                for row in self.sql(
                    "select visitor_cookie_id, user_id, valid_start_date, valid_end_date, is_current, "
                    "vcid_first_two from {schema}.user_mapping"
                )
            },
            {
                tuple(row)
                for row in self.sql(
                    "select visitor_cookie_id, user_id, valid_start_date, valid_end_date, is_current, "
                    "start_day, vcid_first_two from {schema}.visitor_lookup"
                )
            },
        )

    def manifest(self) -> dict[str, dt.datetime]:
        return {row.model: row.last_success for row in self.table("incremental_manifest")}

    def set_manifest(self, entries: dict[str, dt.datetime]) -> None:
        self.sql("delete from {schema}.incremental_manifest")
        for model, last_success in entries.items():
            self.sql(
                "insert into {schema}.incremental_manifest "
                f"values ('{model}', timestamp'{last_success}', null)"
            )

    @contextmanager
    def table_replaced_by_incompatible_one(self, name: str, column: str = "vcid_first_two") -> Iterator[None]:
        """Someone changed a column's type under us: merges into the table fail until the block ends.

        The copy keeps the rows and the other columns, so a read of those (the stored rows of the
        touched cookies, read before any merge) gives what the table would have.
        """
        self.sql(f"alter table {{schema}}.{name} rename to {{schema}}.{name}_saved")
        described = self.sql(f"describe table {{schema}}.{name}_saved")  # columns, then a blank or "#" row
        listed = takewhile(lambda row: row.col_name and not row.col_name.startswith("#"), described)
        columns = [row.col_name for row in listed]
        chosen = ", ".join(f"cast(null as int) as {c}" if c == column else c for c in columns)
        saved = f"{{schema}}.{name}_saved"
        self.sql(f"create table {{schema}}.{name} using {table_format()} as select {chosen} from {saved}")
        try:
            yield
        finally:
            self.sql(f"drop table {{schema}}.{name}")
            self.sql(f"alter table {{schema}}.{name}_saved rename to {{schema}}.{name}")

    def current_version(self, name: str) -> int:
        """The table's current Iceberg snapshot id or Delta version, for restore_version."""
        if table_format() == "delta":
            (row,) = self.sql(f"describe history {{schema}}.{name} limit 1")
            return row.version
        (row,) = self.sql(f"select snapshot_id from spark_catalog.{{schema}}.{name}.refs where name = 'main'")
        return row.snapshot_id

    def restore_version(self, name: str, version: int) -> None:
        """Put the table back as it was at that version (time travel, a new commit)."""
        if table_format() == "delta":
            self.sql(f"restore table {{schema}}.{name} to version as of {version}")
        else:
            self.sql(f"call spark_catalog.system.rollback_to_snapshot('{{schema}}.{name}', {version})")

    @contextmanager
    def broken(self, name: str, statement: str) -> Iterator[None]:
        """The table as `statement` changes it for the block, then back at the version it had before."""
        before = self.current_version(name)
        self.sql(statement)
        try:
            yield
        finally:
            self.restore_version(name, before)

    def is_partitioned(self, name: str) -> bool:
        if table_format() == "delta":
            (detail,) = self.sql(f"describe detail {{schema}}.{name}")
            return bool(detail.partitionColumns)
        (row,) = self.sql(f"select count(*) as partitions from {{schema}}.{name}.partitions")
        return row.partitions > 1

    def delta_live_files(self, name: str) -> dict[Path, bool]:
        """A Delta table's live data files, from its log, each with whether a deletion vector marks rows of
        it."""
        (detail,) = self.sql(f"describe detail {{schema}}.{name}")
        actions = (
            self.spark.read.schema(
                "add struct<path: string, deletionVector: struct<storageType: string>>, "
                "remove struct<path: string>"
            )
            .json(f"{detail.location}/_delta_log/*.json")
            .selectExpr(
                "cast(regexp_extract(input_file_name(), '([0-9]+)[.]json$', 1) as bigint) as version",
                "coalesce(add.path, remove.path) as path",
                "add is not null as added",
                "add.deletionVector is not null as with_deletes",
            )
            .where("path is not null")
            .collect()
        )
        live: dict[str, bool] = {}  # in commit order; in one commit a remove comes before its add
        for action in sorted(actions, key=lambda action: (action.version, action.added)):
            if action.added:
                live[action.path] = action.with_deletes
            else:
                live.pop(action.path, None)
        location = Path(unquote(detail.location.removeprefix("file:")))
        return {location / unquote(path): with_deletes for path, with_deletes in live.items()}

    def live_data_files(self, name: str) -> list[Path]:
        """The data files a table's current version reads (Iceberg's metadata, Delta's log)."""
        if table_format() == "delta":
            return list(self.delta_live_files(name))
        rows = self.sql(f"select file_path from spark_catalog.{{schema}}.{name}.files where content = 0")
        return [Path(unquote(row.file_path.removeprefix("file:"))) for row in rows]

    def data_files_and_deletes(self, name: str) -> tuple[int, int]:
        """A table's live data files, and its files of deleted rows: Iceberg's delete files, or the
        data files that carry a Delta deletion vector."""
        if table_format() == "delta":
            live = self.delta_live_files(name)
            return len(live), sum(live.values())
        (row,) = self.sql(
            f"select count_if(content = 0) as files, count_if(content != 0) as deletes"
            f" from spark_catalog.{{schema}}.{name}.files"
        )
        return row.files, row.deletes

    def table_version(self, name: str) -> tuple:
        """Changes with any write to the table, or a drop and re-create: its Iceberg snapshots or Delta
        commits, or for a Parquet table (the per-run tables) its creation time and data files."""
        described = self.sql(f"describe table extended {{schema}}.{name}")
        details = {row.col_name: row.data_type for row in described}
        if details.get("Provider") == "iceberg":
            query = f"select snapshot_id from spark_catalog.{{schema}}.{name}.snapshots"
            return ("iceberg", frozenset(row.snapshot_id for row in self.sql(query)))
        if details.get("Provider") == "delta":
            commits = self.sql(f"describe history {{schema}}.{name}")
            return ("delta", frozenset((row.version, row.timestamp) for row in commits))
        files = self.sql(f"select distinct input_file_name() as file from {{schema}}.{name}")
        return (details.get("Provider"), details.get("Created Time"), frozenset(row.file for row in files))


@pytest.fixture(scope="session", autouse=True)
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    install_log_config()
    path = tmp_path_factory.mktemp("warehouse")
    os.environ["VISITOR_LOOKUP_WAREHOUSE_DIR"] = str(path)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("VISITOR_LOOKUP_DRIVER_MEMORY", "3g")
    # One task per shuffle: a test shuffles a few rows (measured with the switches above: performance.md).
    os.environ.setdefault("VISITOR_LOOKUP_SHUFFLE_PARTITIONS", "1")
    switches = " ".join(f"--conf {key}={value}" for key, value in TEST_SWITCHES)
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", f"{switches} pyspark-shell")
    yield path


@pytest.fixture
def scenario(request: pytest.FixtureRequest, tmp_path: Path) -> Scenario:
    return Scenario(request.node.name, tmp_path)


@pytest.fixture
def delta_retention_check_off(scenario: Scenario) -> Iterator[Callable[[], None]]:
    """Turns off Delta's check that VACUUM keeps at least 7 days in the session dbt shares, as a team would
    to keep less, and back on after the test. Call it once dbt has opened the session: one opened here
    first would lack the profile's settings."""
    turned_off = []

    def turn_off() -> None:
        scenario.sql("set spark.databricks.delta.retentionDurationCheck.enabled=false")
        turned_off.append(True)

    yield turn_off
    if turned_off:
        scenario.sql("set spark.databricks.delta.retentionDurationCheck.enabled=true")


@pytest.fixture(scope="module")
def module_scenario(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    """One scenario shared by the tests of a module (their cases use distinct cookies)."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    return Scenario(name, tmp_path_factory.mktemp(name))
