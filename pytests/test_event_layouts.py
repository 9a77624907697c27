"""Events in a tracker's own layout: a preset, column expressions and a filter read them exactly (spec §3).

Snowplow's and Segment's layouts go through the random batches (test_lookup_properties), on both
formats. Here: GA4's export from a folder, RudderStack's `pages` from a table of the host project with
the vars over the preset, and a bad mapping stopping the run in one line before any model.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from .conftest import Scenario, ts
from .reference import Raw, lookup_tables, processed_events
from .test_intake import VARS, assert_matches_reference
from .test_late_events import TableScenario, install_host_project
from .trackers import ga4, ga4_page_views, page_calls

# The layout is read into the per-run tables (Parquet on both formats): each test in one pass.
MICROS_PER_SECOND = 1_000_000


def micros(text: str) -> int:
    return int((ts(text) - dt.datetime(1970, 1, 1)).total_seconds()) * MICROS_PER_SECOND


def ga4_row(name: str, at: str, pseudo: str | None, user: str | None, loaded: str, bundle: int = 1) -> dict:
    return {
        "event_name": name,
        "event_timestamp": micros(at),
        "event_bundle_sequence_id": bundle,
        "stream_id": "s1",
        "user_pseudo_id": pseudo,
        "user_id": user,
        "loaded_at": ts(loaded),
    }


@pytest.mark.same_on_both_formats(checked_on="delta")
def test_a_ga4_export_is_read_exactly_through_its_preset(scenario: Scenario) -> None:
    run_vars = {**VARS, "visitor_lookup__events_preset": "ga4"}
    first = [
        ga4_row("session_start", "2026-01-05 10:00", "p1", None, "2026-01-05 11:00"),
        ga4_row("page_view", "2026-01-05 10:00", "p1", None, "2026-01-05 11:00"),
        ga4_row("page_view", "2026-01-05 10:05", "p1", "ann", "2026-01-05 11:00"),
        # another event type of another user on the same cookie: not a page view, it decides nothing
        ga4_row("user_engagement", "2026-01-05 10:07", "p1", "bob", "2026-01-05 11:00"),
        ga4_row("page_view", "2026-01-05 10:10", "p2", None, "2026-01-05 11:00", bundle=2),
        # a blank pseudo id makes no cookie: quarantined
        ga4_row("page_view", "2026-01-05 10:11", " ", "cy", "2026-01-05 11:00"),
    ]
    scenario.write_table(ga4(first))
    # a type Spark does not know stops the run before any model, naming the folder and the var
    scenario.dbt(
        "run", vars={**run_vars, "visitor_lookup__event_file_columns": {"event_name": "text"}}, ok=False
    )
    assert scenario.logged(
        f"Visitor lookup: the events folder {scenario.events_dir} cannot be read with the columns"
    )
    assert scenario.logged(
        "var visitor_lookup__event_file_columns (or the preset's) names a type Spark does not know"
    )
    # Mapped by hand without the preset, the folder read with the contract's columns: the run stops before
    # any model, in one line naming the columns the mapping takes from the files and the var to declare them.
    by_hand = {
        "visitor_lookup__event_columns": {
            "event_id": "concat(user_pseudo_id, '-', event_timestamp)",
            "visitor_cookie_id": "user_pseudo_id",
            "landed": "timestamp_micros(event_timestamp)",
        },
        "visitor_lookup__event_filter": "event_name = 'page_view'",
    }
    scenario.dbt("run", vars={**VARS, **by_hand}, ok=False)
    (stopped,) = scenario.logged("is not read with the columns of its files the mapping names: ")
    assert (
        f"but the events folder {scenario.events_dir} is not read with the columns of its files the mapping "
        "names: event_timestamp bigint, event_name string, user_pseudo_id string; declare them in var "
        'visitor_lookup__event_file_columns, as {"event_timestamp": "bigint", "event_name": "string", '
        '"user_pseudo_id": "string"}.\n'
    ) in stopped, stopped
    assert not scenario.sql("show tables in {schema} like 'processed_events'")
    scenario.dbt("run", vars=run_vars)
    assert_exact(scenario, ga4_page_views(first))

    second = [
        # the export again with the same page view: one event, the copy loaded first counts
        ga4_row("page_view", "2026-01-05 10:05", "p1", "ann", "2026-01-05 13:00"),
        # a late row, loaded before the previous run's last one, inside the lookback
        ga4_row("page_view", "2026-01-05 10:20", "p2", "dee", "2026-01-05 10:30", bundle=3),
        ga4_row("page_view", "2026-01-05 12:00", "p1", "bob", "2026-01-05 13:00"),
    ]
    scenario.write_table(ga4(second))
    scenario.dbt("run", vars=run_vars)
    assert_exact(scenario, ga4_page_views(first + second))


def assert_exact(scenario: Scenario, views: list[Raw]) -> None:
    assert_matches_reference(scenario, views)
    assert scenario.lookup_tables() == lookup_tables(processed_events(views).values())


class PagesTableScenario(TableScenario):
    """The host project reading RudderStack's `pages` table."""

    def __init__(self, name: str, workdir: Path) -> None:
        super().__init__(name, workdir)
        self.sql(f"drop table {self.events_table}")
        self.sql(
            f"create table {self.events_table} (id string, anonymous_id string, user_id string, "
            "context_page_path string, received_at timestamp, `timestamp` timestamp, uuid_ts timestamp) "
            "using parquet"
        )

    def write_events(self, events: Iterable[Raw]) -> Path:
        path = self.events_dir / f"pages_{len(list(self.events_dir.iterdir())):03d}.parquet"
        pq.write_table(page_calls(list(events), seed=3), path)
        self.sql(f"insert into {self.events_table} select * from parquet.`{path}`")
        return path


@pytest.mark.same_on_both_formats
def test_a_rudderstack_pages_table_is_read_through_its_preset_and_the_vars_over_it(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    install_host_project()
    scenario = PagesTableScenario(request.node.name, tmp_path)
    preset = {**VARS, "visitor_lookup__events_preset": "rudderstack"}

    # Each bad mapping stops the run before any model, in one line naming the var; nothing is built.
    var = "Visitor lookup: var visitor_lookup__event"
    for vars, problem in [
        ({"visitor_lookup__events_preset": "mixpanel"}, f"{var}s_preset must be empty or one of snowplow,"),
        (
            {"visitor_lookup__event_columns": {"cookie": "anonymous_id"}},
            f"{var}_columns maps cookie, which is not a column of an event",
        ),
        (
            {"visitor_lookup__event_columns": {"visitor_cookie_id": "anonymous"}},
            f"{var}_columns maps visitor_cookie_id to anonymous, which Spark cannot analyse over",
        ),
        (
            {"visitor_lookup__event_columns": {"landed": "timestamp("}},
            f"{var}_columns maps landed to timestamp(, which Spark cannot analyse over",
        ),
        (
            {"visitor_lookup__event_columns": {"landed": "unix_micros(`timestamp`)"}},
            f"{var}_columns maps landed to unix_micros(`timestamp`), which gives bigint where it must give "
            "timestamp or timestamp_ntz",
        ),
        (
            {"visitor_lookup__event_filter": "context_page_path"},
            f"{var}_filter is context_page_path, which gives string where it must give boolean",
        ),
    ]:
        scenario.dbt("run", vars={**preset, **vars}, ok=False)
        assert scenario.logged(problem), (vars, scenario.log_lines[-5:])
    assert not scenario.sql("show tables in {schema} like 'processed_events'")

    at = ts("2026-01-05 10:00")
    minute = dt.timedelta(minutes=1)
    views = [
        Raw("r1", "a1", None, at, at + minute),
        Raw("r2", "a1", "ann", at + minute, at + 2 * minute),
        Raw("r2", "a1", "ann", at + minute, at + 3 * minute),
        Raw("r3", "a2", "bob", at, at + minute),
        Raw("r4", "\t", "bob", at, at + minute),
    ]
    scenario.write_events(views)
    # a page the filter below leaves out
    scenario.sql(
        f"insert into {scenario.events_table} values ('r5', 'a2', 'cy', '/admin', "
        "timestamp'2026-01-05 10:01:00', timestamp'2026-01-05 10:02:00', timestamp'2026-01-05 10:02:00')"
    )
    # the preset's load time, with the vars over single entries: a filter and the user id's column
    scenario.dbt(
        "run",
        vars={
            **preset,
            "visitor_lookup__event_filter": "context_page_path <> '/admin'",
            "visitor_lookup__event_columns": {"user_id": "upper(user_id)"},
        },
    )
    mapped = [view._replace(user_id=view.user_id.upper() if view.user_id else None) for view in views]
    assert_exact(scenario, mapped)


@pytest.mark.same_on_both_formats(checked_on="delta")
def test_times_given_as_text_that_are_not_times_are_quarantined_not_a_failed_run(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # A view over JSON gives its times as text, outside the contract. With ANSI SQL mode on (bin/test's
    # Delta pass, as on Databricks), a cast of a value that is not a time would fail the whole run.
    install_host_project()
    scenario = TableScenario(request.node.name, tmp_path, timestamp_type="string")
    scenario.sql(
        f"insert into {scenario.events_table} values "
        "('t1', 'c1', 'u1', '2026-01-05 10:00:00', '2026-01-05 10:01:00'), "
        "('t2', 'c2', null, 'yesterday', '2026-01-05 10:01:00'), "
        "('t3', 'c3', 'u3', '2026-01-05 10:00:00', '2026-13-05 10:01:00'), "
        "('t4', 'c3', null, '2026-01-05 10:02:00.5', '2026-01-05 10:03:00')"
    )
    scenario.dbt("run", vars=VARS)
    at = ts("2026-01-05 10:00")
    minute = dt.timedelta(minutes=1)
    assert_exact(
        scenario,
        [
            Raw("t1", "c1", "u1", at, at + minute),
            Raw("t2", "c2", None, None, at + minute),
            Raw("t3", "c3", "u3", at, None),
            Raw("t4", "c3", None, ts("2026-01-05 10:02:00.5"), at + 3 * minute),
        ],
    )


def test_this_pass_runs_dbt_with_the_ansi_mode_it_was_given(
    scenario: Scenario, pytestconfig: pytest.Config
) -> None:
    # What keeps --ansi honest: a cast that ANSI SQL mode refuses, sent through dbt.
    ansi = pytestconfig.getoption("--ansi")
    scenario.dbt("show", "--inline", "select cast('not a number' as int) as n", ok=not ansi)
    if ansi:
        assert scenario.logged("CAST_INVALID_INPUT")
