"""spec §2: the tables, the run limits and the logs are the same whatever the Spark session's time zone.

The embedded session is switched to a zone west of UTC for a scenario's dbt runs (the zone is a runtime
setting of the one Spark of the suite, put back to UTC after the test); the Thrift Server's tests run a
whole cluster in such a zone (pytests/test_thrift.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from .conftest import Scenario, ts
from .reference import Raw, lookup_tables, processed_events
from .test_intake import assert_matches_reference, limits
from .test_late_events import TableScenario, install_host_project

ZONE = "America/New_York"
VARS = {
    "visitor_lookup__start_date": "2026-03-08",
    "visitor_lookup__backfill_limit_days": 30,
    "visitor_lookup__lookback_window_hours": 6,
}


@pytest.fixture
def session_zone() -> Iterator[str]:
    """The session time zone the profile gives dbt's Spark for the test's runs, then UTC again."""
    os.environ["VISITOR_LOOKUP_SESSION_TIME_ZONE"] = ZONE
    try:
        yield ZONE
    finally:
        del os.environ["VISITOR_LOOKUP_SESSION_TIME_ZONE"]
        SparkSession.builder.getOrCreate().conf.set("spark.sql.session.timeZone", "UTC")


def test_runs_in_a_session_west_of_utc_give_the_tables_of_utc(scenario: Scenario, session_zone: str) -> None:
    """Around the start of daylight saving time in New York (2026-03-08 07:00 UTC), with dates that differ
    between the zones: the start date, the days, the lookback and the files' times all in UTC."""
    first = [
        # loaded before the start date in UTC (but after it in New York): not read
        Raw("e0", "c0", "u0", ts("2026-03-07 23:00"), ts("2026-03-07 23:00")),
        # landed on 03-08 in UTC, 03-07 in New York: first_day and start_day 03-08
        Raw("a1", "c1", None, ts("2026-03-08 02:30"), ts("2026-03-08 02:31")),
        # in the hour New York's clocks skip
        Raw("a2", "c1", "u1", ts("2026-03-08 07:30"), ts("2026-03-08 07:30")),
        Raw("a3", "c2", "u2", ts("2026-03-08 12:00"), ts("2026-03-08 12:00")),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    assert limits(scenario)[:2] == (1, ts("2026-03-08"))
    assert scenario.logged("Processing data between 2026-03-08 00:00:00.000000 and ")
    assert_matches_reference(scenario, first[1:])
    assert scenario.lookup_tables() == lookup_tables(processed_events(first[1:]).values())

    second = [
        Raw("b1", "c1", "u3", ts("2026-03-08 13:00"), ts("2026-03-08 13:00")),
        # a slow loader's event, loaded an hour before the previous batch's last: inside the lookback
        Raw("s1", "c3", "u4", ts("2026-03-08 11:00"), ts("2026-03-08 11:00")),
        Raw("n1", "c4", None, ts("2026-03-08 13:00"), None),
        Raw("d1", "c5", "u5", ts("2026-03-08 14:00"), ts("2026-03-08 14:00")),
    ]
    scenario.write_events(second[:2])
    # timestamps without a zone, as many writers leave them: read as UTC
    naive = pa.timestamp("us")
    columns = {name: [getattr(event, name) for event in second[2:4]] for name in Raw._fields}
    types = {"landed": naive, "loaded_at": naive}
    table = pa.table(
        {name: pa.array(values, types.get(name, pa.string())) for name, values in columns.items()}
    )
    pq.write_table(table, scenario.events_dir / "naive.parquet")
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("Visitor lookup: Standard incremental run")
    seen = first[1:] + second
    assert_matches_reference(scenario, seen)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
    assert scenario.manifest() == dict.fromkeys(scenario.manifest(), ts("2026-03-08 14:00"))
    assert scenario.logged("processed through 2026-03-08 14:00:00.000000")
    scenario.dbt("test", vars=VARS)


@pytest.mark.same_on_both_formats(checked_on="delta")
def test_an_events_table_of_utc_wall_clock_times_in_a_session_west_of_utc(
    request: pytest.FixtureRequest, tmp_path: Path, session_zone: str
) -> None:
    """A table whose timestamps have no zone (timestamp_ntz) holds UTC wall-clock times: read as UTC, where
    Spark's cast would take the session's zone."""
    install_host_project()
    scenario = TableScenario(request.node.name, tmp_path, timestamp_type="timestamp_ntz")
    first = [
        Raw("e0", "c0", "u0", ts("2026-03-07 23:00"), ts("2026-03-07 23:00")),
        Raw("a1", "c1", None, ts("2026-03-08 02:30"), ts("2026-03-08 02:31")),
        Raw("a2", "c1", "u1", ts("2026-03-08 07:30"), ts("2026-03-08 07:30")),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("Processing data between 2026-03-08 00:00:00.000000 and ")
    second = [
        Raw("b1", "c2", "u2", ts("2026-03-08 09:00"), ts("2026-03-08 09:00")),
        # inside the lookback: loaded before the previous batch's last
        Raw("s1", "c3", "u3", ts("2026-03-08 06:00"), ts("2026-03-08 06:00")),
    ]
    scenario.write_events(second)
    scenario.dbt("run", vars=VARS)
    seen = first[1:] + second
    assert_matches_reference(scenario, seen)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
    assert scenario.manifest() == dict.fromkeys(scenario.manifest(), ts("2026-03-08 09:00"))
