"""The models' dbt unit tests (`unit_tests:` in the models' YAML), run by dbt on real Spark.

Each states one rule by example: the cookies a run touches, first_dates' and user_mapping's rows after
an incremental run (from the stored rows as the run read them), and the view visitor_lookup.
The plain-Python reference tests hold the same rules over random arrivals.
"""

from __future__ import annotations

import pytest

from .conftest import Scenario
from .test_lookup_properties import VARS, random_arrivals

pytestmark = pytest.mark.same_on_both_formats

UNIT_TESTS = {
    "base_cookie_changes_this_run_touches_the_cookies_of_unprocessed_rows_only",
    "first_dates_moves_recounts_and_deletes_only_the_touched_cookies",
    "user_mapping_rebuilds_each_touched_cookie_from_its_row_before_the_change",
    "visitor_lookup_ends_each_current_row_at_the_watermark_v1",  # dbt adds the model's version
}


def test_the_dbt_unit_tests_of_the_models_pass(scenario: Scenario) -> None:
    scenario.write_events(random_arrivals(seed=61, batches=1)[0])
    scenario.dbt("run", vars=VARS)  # the tables whose column types the fixtures take
    enabled = {**VARS, "visitor_lookup__unit_tests": True}
    result = scenario.dbt("test", "--select", "test_type:unit", vars=enabled)
    outcomes = {
        r.node.name: str(r.status) for r in result.result.results if r.node.resource_type == "unit_test"
    }
    assert outcomes == dict.fromkeys(UNIT_TESTS, "pass")
