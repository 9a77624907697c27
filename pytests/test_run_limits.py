"""spec §5: the four states from a real manifest, their exact limits, and their logs.

The limits are SQL over the manifest, the same whatever format the tables have: checked in the Iceberg pass.
"""

from __future__ import annotations

import datetime as dt

import pytest

from .conftest import INCREMENTAL_MODELS, Scenario, ts
from .reference import Raw, run_limits

pytestmark = pytest.mark.same_on_both_formats

VARS = {
    "visitor_lookup__start_date": "2026-01-01",
    "visitor_lookup__backfill_limit_days": 30,
    "visitor_lookup__lookback_window_hours": 6,
}
OTHER_TABLES = (
    "incremental_manifest",
    "base_events_this_run",
    "base_cookie_changes_this_run",
    "base_stored_lookup_rows_this_run",
    "base_first_date_changes_this_run",
    "base_user_mapping_changes_this_run",
    "processed_events",
    "quarantined_events",
    "first_dates",
    "user_mapping",
    "visitor_lookup_spans",
)


def _text(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")


def build(scenario: Scenario) -> Scenario:
    scenario.write_events([Raw("e1", "c1", "u1", ts("2026-01-05 10:00"), ts("2026-01-05 10:01"))])
    scenario.dbt("run", vars=VARS)
    return scenario


@pytest.fixture(scope="module")
def built(module_scenario: Scenario) -> Scenario:
    """One build shared by the tests that only set the manifest and run the limits, or fail on a bad
    var: each checks that nothing else changed, so they can follow one another on the same tables."""
    return build(module_scenario)


def _all(at: str, **lagging: str) -> dict[str, dt.datetime]:
    """Every incremental model at `at`, but those named in `lagging`."""
    return {model: ts(lagging.get(model, at)) for model in INCREMENTAL_MODELS}


@pytest.mark.parametrize(
    ("manifest", "state", "message"),
    [
        ({}, 1, "Visitor lookup: First run: no incremental model in the manifest"),
        (
            {"processed_events": ts("2026-01-20 00:00")},
            2,
            "Visitor lookup: New incremental model (first_dates, quarantined_events, user_mapping, "
            "visitor_lookup_spans): backfilling",
        ),
        (
            _all("2026-01-20 00:00", user_mapping="2026-01-10 00:00"),
            3,
            "Visitor lookup: Incremental models out of sync: catching up from 2026-01-10 00:00:00.000000",
        ),
        (_all("2026-01-20 00:00"), 4, "Visitor lookup: Standard incremental run"),
        (
            _all("2026-03-20 00:00", processed_events="2025-12-01 00:00"),
            3,
            "Visitor lookup: Incremental models out of sync",
        ),
    ],
    ids=["first-run", "new-model", "out-of-sync", "standard", "out-of-sync-backfill-bound"],
)
def test_state_and_limits(built: Scenario, manifest: dict, state: int, message: str) -> None:
    built.set_manifest(manifest)
    untouched = {name: built.table_version(name) for name in OTHER_TABLES}

    before = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    built.dbt("run", "--select", "base_new_event_limits", vars=VARS)

    expected = run_limits(manifest, INCREMENTAL_MODELS, ts("2026-01-01"), before, 30, 6)
    (row,) = built.table("base_new_event_limits")
    assert (row.state, row.lower_limit, row.upper_limit) == expected
    assert built.logged(message)
    assert built.logged(
        f"Visitor lookup: Processing data between {_text(expected.lower)} and {_text(expected.upper)}"
    )
    assert {name: built.table_version(name) for name in OTHER_TABLES} == untouched
    assert built.manifest() == manifest


def test_standard_run_is_bounded_by_now(built: Scenario) -> None:
    recent = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0) - dt.timedelta(days=2)
    built.set_manifest({m: recent for m in INCREMENTAL_MODELS})

    before = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    built.dbt("run", "--select", "base_new_event_limits", vars=VARS)
    after = dt.datetime.now(dt.UTC).replace(tzinfo=None)

    (row,) = built.table("base_new_event_limits")
    assert row.state == 4
    assert row.lower_limit == recent - dt.timedelta(hours=6)
    assert before <= row.upper_limit <= after


@pytest.mark.parametrize(
    ("bad_vars", "named"),
    [
        ({"visitor_lookup__backfill_limit_days": "thirty"}, "visitor_lookup__backfill_limit_days"),
        ({"visitor_lookup__backfill_limit_days": 0}, "visitor_lookup__backfill_limit_days"),
        ({"visitor_lookup__lookback_window_hours": -1}, "visitor_lookup__lookback_window_hours"),
        ({"visitor_lookup__start_date": "yesterday"}, "visitor_lookup__start_date"),
        ({"visitor_lookup__start_date": "2026-02-30"}, "visitor_lookup__start_date"),
        ({"visitor_lookup__max_clock_skew_minutes": 1.5}, "visitor_lookup__max_clock_skew_minutes"),
        ({"visitor_lookup__partition_prefix_length": 0}, "visitor_lookup__partition_prefix_length"),
        ({"visitor_lookup__partition_prefix_length": 1}, "visitor_lookup__partition_prefix_length is 1, but"),
        ({"visitor_lookup__lookup_write_mode": "fast"}, "visitor_lookup__lookup_write_mode"),
        ({"visitor_lookup__test_scope": "recent"}, "visitor_lookup__test_scope"),
        ({"visitor_lookup__partition_lookup_tables": "yes"}, "visitor_lookup__partition_lookup_tables"),
        ({"visitor_lookup__allow_refresh": "yes"}, "visitor_lookup__allow_refresh"),
        ({"visitor_lookup__file_format": "parquet"}, "visitor_lookup__file_format"),
        ({"visitor_lookup__schema": "a-b"}, "visitor_lookup__schema"),
        ({"visitor_lookup__erasure_requests_schema": "a.b"}, "visitor_lookup__erasure_requests_schema"),
        (
            {"visitor_lookup__compact_at_files_per_partition": -1},
            "visitor_lookup__compact_at_files_per_partition",
        ),
        ({"visitor_lookup__lock_lease_minutes": 0}, "visitor_lookup__lock_lease_minutes"),
        ({"visitor_lookup__lock_wait_seconds": "ten"}, "visitor_lookup__lock_wait_seconds"),
        ({"visitor_lookup__snapshot_retention_days": -1}, "visitor_lookup__snapshot_retention_days"),
        ({"visitor_lookup__snapshot_retention_days": "a week"}, "visitor_lookup__snapshot_retention_days"),
    ],
)
def test_bad_var_fails_the_run_naming_it(built: Scenario, bad_vars: dict, named: str) -> None:
    manifest = built.manifest()
    built.dbt("run", vars={**VARS, **bad_vars}, ok=False)
    assert any(f"var {named}" in line for line in built.log_lines), built.log_lines[-10:]
    assert built.manifest() == manifest


@pytest.mark.parametrize(
    ("bad_vars", "named"),
    [
        ({"visitor_lookup__file_format": "parquet"}, "visitor_lookup__file_format"),
        ({"visitor_lookup__lookup_write_mode": "fast"}, "visitor_lookup__lookup_write_mode"),
        ({"visitor_lookup__test_scope": "recent"}, "visitor_lookup__test_scope"),
        ({"visitor_lookup__backfill_limit_days": 0}, "visitor_lookup__backfill_limit_days"),
    ],
)
def test_bad_var_fails_dbt_test_naming_it(built: Scenario, bad_vars: dict, named: str) -> None:
    """dbt test sends no statement before its tests, and still refuses a var that is set wrong."""
    built.dbt("test", vars={**VARS, **bad_vars}, ok=False)
    assert any(f"var {named}" in line for line in built.log_lines), built.log_lines[-10:]


def test_a_new_prefix_length_takes_a_full_refresh(scenario: Scenario) -> None:
    built = build(scenario)
    shorter = {**VARS, "visitor_lookup__partition_prefix_length": 1}
    built.dbt("run", "--full-refresh", vars={**shorter, "visitor_lookup__allow_refresh": True})
    keys = {(row.visitor_cookie_id, row.vcid_first_two) for row in built.table("first_dates")}
    assert keys == {("c1", "c")}
    built.dbt("run", vars=shorter)
