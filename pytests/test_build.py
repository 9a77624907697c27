"""`dbt build` on every run, as orchestrators run it: exact after every batch, repaired after a failure,
and failing when an invariant breaks.

How dbt orders models and tests in a build is the same whatever format the tables have, so these run in
one pass, the Delta pass: it has fewer tests than the Iceberg pass, and the two run side by side.
"""

from __future__ import annotations

import pytest
from dbt.cli.main import dbtRunnerResult

from .conftest import Scenario, ts
from .reference import Raw, lookup_tables, processed_events
from .test_lookup_properties import VARS, random_arrivals

pytestmark = pytest.mark.same_on_both_formats(checked_on="delta")


def statuses(result: dbtRunnerResult) -> dict[str, str]:
    return {r.node.name: str(r.status) for r in result.result.results}


def test_builds_equal_the_reference_after_every_batch_skip_nothing_and_repair_a_failed_one(
    scenario: Scenario,
) -> None:
    # three batches: exactness over many is test_lookup_properties' (dbt run); here, that a build's tests
    # between its models change nothing and skip nothing, and that the build after a failed one repairs it
    arrivals = random_arrivals(seed=23, batches=3)
    seen: list[Raw] = []

    def build_exactly() -> None:
        result = scenario.dbt("build", vars=VARS)
        assert set(statuses(result).values()) <= {"success", "pass"}, statuses(result)
        assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())

    scenario.write_events(arrivals[0])
    seen += arrivals[0]
    build_exactly()

    scenario.write_events(arrivals[1])
    seen += arrivals[1]
    with scenario.table_replaced_by_incompatible_one("user_mapping"):
        failed = statuses(scenario.dbt("build", vars=VARS, ok=False))
    assert failed["user_mapping"] == "error" and failed["visitor_lookup_spans"] == "skipped"
    build_exactly()
    assert scenario.logged("Visitor lookup: Incremental models out of sync")

    scenario.write_events(arrivals[2])
    seen += arrivals[2]
    build_exactly()

    build_exactly()  # no new data
    assert scenario.logged("Visitor lookup: Standard incremental run")

    scenario.dbt("build", "--full-refresh", vars={**VARS, "visitor_lookup__allow_refresh": True})
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())


def test_a_broken_invariant_fails_the_build(scenario: Scenario) -> None:
    scenario.write_events(
        [
            Raw("a1", "c1", "ann", ts("2026-01-03 10:00"), ts("2026-01-05 10:00")),
            Raw("a2", "c1", "bob", ts("2026-01-03 12:00"), ts("2026-01-05 10:00")),
            Raw("a3", "c1", "ann", ts("2026-01-03 14:00"), ts("2026-01-05 10:00")),
        ]
    )
    scenario.dbt("build", vars=VARS)
    # c1's first row now ends before it starts; the next run rebuilds c1 only
    # from its current row on, so the broken row stays and the scoped tests read it
    scenario.sql(
        "update {schema}.user_mapping set valid_end_date = valid_start_date - interval 1 second "
        "where visitor_cookie_id = 'c1' and valid_start_date = timestamp'2026-01-03 10:00:00'"
    )
    scenario.write_events([Raw("b1", "c1", "cy", ts("2026-01-04 10:00"), ts("2026-01-06 10:00"))])

    result = scenario.dbt("build", vars=VARS, ok=False)

    assert "no negative span" in scenario.broken_invariants(result, "user_mapping"), statuses(result)


def test_the_incremental_selector_holds_the_set_and_what_it_reads(scenario: Scenario) -> None:
    result = scenario.dbt("ls", "--selector", "visitor_lookup_incremental", "--resource-type", "model")
    # the published view is version 1 of visitor_lookup: its name ends in .v1
    assert {name.removesuffix(".v1").rsplit(".", 1)[-1] for name in result.result} == {
        "incremental_manifest",
        "base_new_event_limits",
        "base_events_this_run",
        "base_new_events_this_run",
        "processed_events",
        "quarantined_events",
        "base_cookie_changes_this_run",
        "base_stored_lookup_rows_this_run",
        "base_first_date_changes_this_run",
        "base_user_mapping_changes_this_run",
        "base_erased_events_this_run",
        "erased_cookies",
        "erasure_log",
        "first_dates",
        "user_mapping",
        "visitor_lookup_spans",
        "visitor_lookup",
    }


def test_dbt_retry_finishes_a_failed_run_and_advances_the_manifest(scenario: Scenario) -> None:
    scenario.write_json = True  # dbt retry reads the failed run's run_results.json
    first, second = random_arrivals(seed=29, batches=2)
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    scenario.write_events(second)
    with scenario.table_replaced_by_incompatible_one("user_mapping"):
        failed = statuses(scenario.dbt("run", vars=VARS, ok=False))
    assert failed["user_mapping"] == "error" and failed["visitor_lookup_spans"] == "skipped"
    behind = scenario.manifest()
    assert behind["user_mapping"] < behind["first_dates"]

    retried = scenario.dbt("retry")

    models = {r.node.name: str(r.status) for r in retried.result.results if r.node.resource_type == "model"}
    assert models == dict.fromkeys(("user_mapping", "visitor_lookup_spans", "visitor_lookup"), "success")
    assert len(set(scenario.manifest().values())) == 1  # every model processed through the same instant
    assert scenario.manifest()["first_dates"] == behind["first_dates"]
    assert scenario.lookup_tables() == lookup_tables(processed_events(first + second).values())
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("Visitor lookup: Standard incremental run")
    assert scenario.lookup_tables() == lookup_tables(processed_events(first + second).values())
