"""spec §5: events that arrive long after they were loaded are not lost.

From a folder, a file written after the last run that completed is read whole, whatever the loaded_at of
its events; a table source has no file times, and a run reads a past loaded_at range again when told to
(visitor_lookup__read_again_from).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult

from .conftest import INCREMENTAL_MODELS, ROOT, Scenario, ts
from .reference import Raw, lookup_tables, processed_events
from .test_intake import VARS as INTAKE_VARS
from .test_intake import assert_matches_reference, limits, stored_events

# What is read is decided in the per-run tables (Parquet on both formats): one pass, the lighter one.
pytestmark = pytest.mark.same_on_both_formats(checked_on="delta")

HOST = ROOT / "integration_tests"
# a first run whose range reaches February
VARS = {**INTAKE_VARS, "visitor_lookup__backfill_limit_days": 60}


def assert_exact(scenario: Scenario, seen: list[Raw]) -> None:
    assert_matches_reference(scenario, seen)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())


def test_a_new_file_of_events_loaded_a_month_before_is_read_whole(scenario: Scenario) -> None:
    first = [
        Raw("a1", "c1", "u1", ts("2026-02-10 10:00"), ts("2026-02-10 10:00")),
        Raw("a2", "c2", "u2", ts("2026-02-10 11:00"), ts("2026-02-10 11:00")),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    scenario.write_events([Raw("b1", "c1", "u3", ts("2026-02-11 10:00"), ts("2026-02-11 10:00"))])
    scenario.dbt("run", vars=VARS)
    through = ts("2026-02-11 10:00")
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, through)

    # A day re-exported a month on: loaded 30 days before last_success, far behind the lookback.
    reexported = [
        Raw("r1", "c3", "u4", ts("2026-01-12 09:00"), ts("2026-01-12 10:00")),
        # an earlier copy of a stored event: it is the copy that counts now
        Raw("a1", "c1", "u5", ts("2026-01-12 09:30"), ts("2026-01-12 10:00")),
        Raw("r2", "c4", None, ts("2026-01-12 09:00"), None),
        Raw("r3", " ", "u4", ts("2026-01-12 09:00"), ts("2026-01-12 10:00")),
        # loaded before the start date: no run reads it, as no rebuild would
        Raw("r4", "c5", "u6", ts("2025-12-31 09:00"), ts("2025-12-31 10:00")),
    ]
    scenario.write_events(reexported)
    # The limits computed alone in between (the state inspected): the file is still new to the next run.
    scenario.dbt("run", "--select", "base_new_event_limits", vars=VARS)
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("1 events file(s) written after ")
    # and, the run before it not having completed, the lookback (b1 again)
    assert scenario.logged("read 5 events: 3 valid, 0 duplicate copies ignored, 2 quarantined")
    seen = [*first, Raw("b1", "c1", "u3", through, through), *reexported[:-1]]
    assert_exact(scenario, seen)
    assert stored_events(scenario)["a1"][2] == "u5"
    # the manifest never moves back
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, limits(scenario)[2])
    assert limits(scenario)[2] >= through

    # Read once: the next run finds the folder as this one did.
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("The events folder is as run 3 found it")
    assert scenario.logged("read 0 events")
    assert_exact(scenario, seen)


def test_a_file_added_with_an_older_time_is_named_and_read_again_on_request(scenario: Scenario) -> None:
    first = [Raw("a1", "c1", "u1", ts("2026-02-10 10:00"), ts("2026-02-10 10:00"))]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)

    # Copied in keeping its time, older than any file the last run listed: the folder's listing changed,
    # and the run says that such a file is read in its range only, and how to read the rest.
    old = [
        Raw("o1", "c2", "u2", ts("2026-01-20 10:00"), ts("2026-01-20 10:00")),
        Raw("o2", "c3", "u3", ts("2026-02-10 09:00"), ts("2026-02-10 09:00")),
    ]
    path = scenario.write_events(old)
    os.utime(path, (ts("2026-01-21 00:00").timestamp(), ts("2026-01-21 00:00").timestamp()))
    scenario.dbt("run", vars=VARS)
    (warning,) = scenario.logged("changed since run 1 listed the events folder, not only by removal")
    assert "is read only from 2026-02-10 04:00:00.000000 (the lookback)" in warning
    assert "visitor_lookup__read_again_from" in warning
    assert_exact(scenario, first + old[1:])

    scenario.dbt("run", vars={**VARS, "visitor_lookup__read_again_from": "2026-01-20"})
    assert scenario.logged("reading again what was loaded from 2026-01-20 00:00:00.000000")
    assert limits(scenario)[1] == ts("2026-01-20")
    assert_exact(scenario, first + old)

    # A file removed is no change of that kind: no warning.
    path.unlink()
    scenario.dbt("run", vars=VARS)
    assert not scenario.logged("not only by removal")
    assert_exact(scenario, first + old)


def test_after_a_run_that_found_the_folder_empty_every_file_is_new(scenario: Scenario) -> None:
    scenario.dbt("run", vars=VARS)
    assert limits(scenario)[0] == 1
    # the first files arrive with the times of the days they hold (a copy that keeps them)
    events = [Raw("a1", "c1", "u1", ts("2026-01-15 10:00"), ts("2026-01-15 10:00"))]
    path = scenario.write_events(events)
    os.utime(path, (ts("2026-01-15 10:05").timestamp(), ts("2026-01-15 10:05").timestamp()))
    scenario.dbt("run", vars=VARS)
    assert limits(scenario)[0] == 4
    assert scenario.logged("found it but for 1 events file(s) new (none was listed before)")
    assert_exact(scenario, events)


class TableScenario(Scenario):
    """The package in the host project, reading its events from a table of the embedded Spark, whose
    timestamps are zoned (timestamp) or hold UTC wall-clock times (timestamp_ntz)."""

    def __init__(self, name: str, workdir: Path, timestamp_type: str = "timestamp") -> None:
        super().__init__(name, workdir)
        self.project_dir = HOST
        self.schema = f"{self.target_schema}_lookup"  # visitor_lookup__schema below
        self.events_table = f"{self.target_schema}_web.pageviews"
        # the suite's Spark, started by dbt from the profile if no test has yet
        self.dbt("show", "--inline", "select 1 as one")
        self.sql(f"create database if not exists {self.target_schema}_web")
        self.sql(
            f"create table {self.events_table} (event_id string, visitor_cookie_id string, user_id string, "
            f"landed {timestamp_type}, loaded_at {timestamp_type}) using parquet"
        )

    def write_events(self, events: Iterable[Raw]) -> Path:
        path = super().write_events(events)
        # the zone that turns the file's instants into the table's wall-clock times, if it has them
        self.spark.conf.set("spark.sql.session.timeZone", "UTC")
        self.sql(f"insert into {self.events_table} select * from parquet.`{path}`")
        return path

    def dbt(self, *args: str, vars: dict | None = None, ok: bool = True) -> dbtRunnerResult:
        package_vars = {
            "visitor_lookup__events_schema": f"{self.target_schema}_web",
            "visitor_lookup__schema": "lookup",
        }
        return super().dbt(*args, vars={**(vars or {}), **package_vars}, ok=ok)


def install_host_project() -> None:
    installed = dbtRunner().invoke(
        ["deps", "--project-dir", str(HOST), "--profiles-dir", str(ROOT / "profiles")]
    )
    assert installed.success, installed.exception


def test_an_events_table_reads_a_past_range_again_when_told(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    install_host_project()
    scenario = TableScenario(request.node.name, tmp_path)
    first = [Raw("a1", "c1", "u1", ts("2026-02-10 10:00"), ts("2026-02-10 10:00"))]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)

    # Rows inserted now with a loaded_at a month old: a table has no file times, so a run sees them only
    # within its lookback.
    late = [
        Raw("l1", "c2", "u2", ts("2026-01-12 09:00"), ts("2026-01-12 10:00")),
        Raw("l2", "c1", "u3", ts("2026-02-10 08:00"), ts("2026-02-10 08:00")),
    ]
    scenario.write_events(late)
    scenario.dbt("run", vars=VARS)
    assert_exact(scenario, first + late[1:])

    var = "Visitor lookup: var visitor_lookup__read_again_from"
    for value, problem in [
        ("2025-12-31", f"{var} (2025-12-31 00:00:00.000000) is before visitor_lookup__start_date"),
        (
            "2026-02-30",
            f"{var} must be a date 'YYYY-MM-DD' or a timestamp 'YYYY-MM-DD HH:MM:SS' (UTC) that exists",
        ),
    ]:
        scenario.dbt("run", vars={**VARS, "visitor_lookup__read_again_from": value}, ok=False)
        assert scenario.logged(problem), value
        assert_exact(scenario, first + late[1:])

    scenario.dbt("run", vars={**VARS, "visitor_lookup__read_again_from": "2026-01-12 10:00:00"})
    assert limits(scenario)[1] == ts("2026-01-12 10:00")
    assert_exact(scenario, first + late)
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, limits(scenario)[2])
