"""What a standard run writes and reads, and the invariant tests failing on broken tables.

What a run writes and reads depends on the format: both passes check it. The invariant tests, the docs
and the analyses are SQL over the tables, the same whatever their format: checked in the Iceberg pass.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunnerResult

from visitor_lookup.generate import write_batches

from .conftest import LOOKUP_TABLES, Scenario, table_format, ts
from .reference import Raw

END = dt.datetime(2026, 1, 10, tzinfo=dt.UTC)
# merge-on-read on both formats (Delta's default is copy-on-write): what a run writes is only what it changes
VARS = {"visitor_lookup__start_date": "2026-01-01", "visitor_lookup__lookup_write_mode": "merge-on-read"}


@pytest.fixture(scope="module")
def history(module_scenario: Scenario, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    """A history over every partition, then a standard run that brings two cookies."""
    scenario = module_scenario
    (batch,) = write_batches(tmp_path_factory.mktemp("incoming"), 6_000, 1, END, 5, 5, False)
    batch.rename(scenario.events_dir / batch.name)
    scenario.dbt("run", vars=VARS)
    cookie = scenario.sql("select visitor_cookie_id from {schema}.user_mapping limit 1")[0][0]
    scenario.write_events(
        [
            Raw("late-1", cookie, "late-user", ts("2026-01-07 10:00"), ts("2026-01-10 00:00")),
            Raw("new-1", "zz-new-cookie", None, ts("2026-01-09 23:00"), ts("2026-01-10 00:00")),
        ]
    )
    scenario.dbt("run", vars=VARS)
    return scenario


def latest_summary(scenario: Scenario, table: str) -> dict[str, str]:
    (row,) = scenario.sql(
        f"select summary from spark_catalog.{{schema}}.{table}.snapshots "
        f"where snapshot_id = {scenario.current_version(table)}"
    )
    return dict(row.summary)


@pytest.mark.parametrize("table", LOOKUP_TABLES)
def test_a_standard_run_writes_only_the_rows_it_changes(history: Scenario, table: str) -> None:
    if table_format() == "delta":
        # the commits after the build (version 0): the standard run's merge and append
        runs = [dict(row.operationMetrics) for row in history.sql(f"describe history {{schema}}.{table}")]
        written = [{key: int(value) for key, value in metrics.items()} for metrics in runs[:-1]]
        assert written, runs
        # deletion vectors: nothing rewritten, no unchanged row copied
        assert all(m.get("numTargetFilesRemoved", 0) == m.get("numTargetRowsCopied", 0) == 0 for m in written)
        assert all(m.get("numFiles", m.get("numTargetFilesAdded", 0)) <= 1 for m in written), runs
        assert sum(m["numOutputRows"] for m in written) <= 6, runs  # the two cookies' rows
        return
    summary = latest_summary(history, table)
    assert int(summary.get("deleted-data-files", "0")) == 0  # merge-on-read: nothing rewritten
    assert int(summary.get("added-data-files", "0")) <= 1  # unpartitioned: one file for the changes
    assert int(summary.get("added-records", "0")) <= 6  # the two cookies' rows, not the history's


def test_a_standard_run_reads_stored_events_only_from_the_earliest_change(history: Scenario) -> None:
    rebuild = "compiled/**/lookup/base_user_mapping_changes_this_run.sql"
    compiled = next(Path(history.target_dir).glob(rebuild)).read_text()
    plan = "\n".join(
        row[0] for row in history.sql("explain formatted " + compiled.replace("{", "{{").replace("}", "}}"))
    )
    # the details of each scan of processed_events: Iceberg's "filters=landed >= …", Delta's (Parquet's)
    # "PushedFilters: [… GreaterThanOrEqual(landed,…)"
    scans = [
        block
        for block in plan.split("\n\n")
        if re.match(r"\(\d+\) (Batch)?Scan [^\n]*\bprocessed_events\b", block.strip())
    ]
    assert scans and all("landed >=" in scan or "GreaterThanOrEqual(landed," in scan for scan in scans), plan


BREAKAGES = {
    "start lag": (
        "update {schema}.visitor_lookup_spans set valid_start_date = valid_start_date + interval 1 second "
        "where is_current and visitor_cookie_id = '{cookie}'"
    ),
    "one current row": (
        "update {schema}.visitor_lookup_spans set is_current = true where visitor_cookie_id = '{cookie}'"
    ),
    "distinct starts": (
        "insert into {schema}.visitor_lookup_spans select visitor_cookie_id, 'someone else', "
        "valid_start_date, valid_end_date, false, start_day, vcid_first_two "
        "from {schema}.visitor_lookup_spans where visitor_cookie_id = '{cookie}' and not is_current"
    ),
    "no negative span": (
        "update {schema}.visitor_lookup_spans set valid_end_date = valid_start_date - interval 1 second "
        "where visitor_cookie_id = '{cookie}' and not is_current"
    ),
    # the view's columns must not be NULL either (the same test)
    "start_day is null": (
        "update {schema}.visitor_lookup_spans set start_day = null where visitor_cookie_id = '{cookie}'"
    ),
}


def cookie_with_history(scenario: Scenario, touched_by_the_last_run: bool) -> str:
    """A cookie with several spans, among (or outside) those the last run changed."""
    (row,) = scenario.sql(
        "select visitor_cookie_id from {schema}.visitor_lookup_spans where visitor_cookie_id "
        f"{'in' if touched_by_the_last_run else 'not in'} "
        "(select visitor_cookie_id from {schema}.base_cookie_changes_this_run) "
        "group by visitor_cookie_id having count(*) >= 2 order by visitor_cookie_id limit 1"
    )
    return row.visitor_cookie_id


@pytest.mark.same_on_both_formats
@pytest.mark.quick
@pytest.mark.parametrize("invariant", list(BREAKAGES))
def test_each_invariant_fails_on_a_broken_table(history: Scenario, invariant: str) -> None:
    """The default test scope reads the cookies the last run changed: a break among them fails. The table
    visitor_lookup_spans has no tests of its own: the view visitor_lookup over it fails them."""
    cookie = cookie_with_history(history, touched_by_the_last_run=True)
    with history.broken("visitor_lookup_spans", BREAKAGES[invariant].replace("{cookie}", cookie)):
        result = history.dbt("test", "--select", "visitor_lookup", vars=VARS, ok=False)
        assert invariant in history.broken_invariants(result, "visitor_lookup_v1")


@pytest.mark.same_on_both_formats
@pytest.mark.parametrize("invariant", list(BREAKAGES))
def test_a_break_outside_the_last_runs_cookies_fails_only_the_full_check(
    history: Scenario, invariant: str
) -> None:
    cookie = cookie_with_history(history, touched_by_the_last_run=False)
    with history.broken("visitor_lookup_spans", BREAKAGES[invariant].replace("{cookie}", cookie)):
        history.dbt("test", "--select", "visitor_lookup", vars=VARS)
        result = history.dbt(
            "test",
            "--select",
            "visitor_lookup",
            vars={**VARS, "visitor_lookup__test_scope": "all"},
            ok=False,
        )
        assert invariant in history.broken_invariants(result, "visitor_lookup_v1")


AGREES = "agrees_with_first_dates_and_user_mapping_visitor_lookup_"
MISSING, UNEXPECTED = "missing from visitor_lookup", "unexpected in visitor_lookup"
# How a touched cookie's rows break the lookup's agreement with first_dates and user_mapping: (the table
# broken, how, then the failing rows expected, from the cookie's rows in visitor_lookup before the break
# as (problem, user_id, valid_start_date, is_current)).
LOOKUP_BREAKAGES = {
    "its rows missing": (
        "visitor_lookup_spans",
        "delete from {schema}.visitor_lookup_spans where {key}",
        lambda rows: [(MISSING, r.user_id, r.valid_start_date, r.is_current) for r in rows],
    ),
    "no current row": (
        "visitor_lookup_spans",
        "update {schema}.visitor_lookup_spans set is_current = false where {key}",
        lambda rows: [
            (MISSING, rows[-1].user_id, rows[-1].valid_start_date, True),
            (UNEXPECTED, rows[-1].user_id, rows[-1].valid_start_date, False),
        ],
    ),
    "first row not at its first date": (
        "visitor_lookup_spans",
        "update {schema}.visitor_lookup_spans set valid_start_date = valid_start_date - interval 1 second "
        "where {key} and valid_start_date = timestamp'{first_start}'",
        lambda rows: [
            (MISSING, rows[0].user_id, rows[0].valid_start_date, rows[0].is_current),
            (
                UNEXPECTED,
                rows[0].user_id,
                rows[0].valid_start_date - dt.timedelta(seconds=1),
                rows[0].is_current,
            ),
        ],
    ),
    "not in first_dates": (
        "first_dates",
        "delete from {schema}.first_dates where {key}",
        lambda rows: [(UNEXPECTED, r.user_id, r.valid_start_date, r.is_current) for r in rows],
    ),
    "its user lost": (
        "visitor_lookup_spans",
        "update {schema}.visitor_lookup_spans set user_id = null where {key} and is_current",
        lambda rows: [
            (MISSING, rows[-1].user_id, rows[-1].valid_start_date, True),
            (UNEXPECTED, None, rows[-1].valid_start_date, True),
        ],
    ),
    "a user it never had": (
        "user_mapping",
        "delete from {schema}.user_mapping where {key} and is_current",
        lambda rows: [(UNEXPECTED, rows[-1].user_id, rows[-1].valid_start_date, True)],
    ),
}


@pytest.mark.same_on_both_formats
@pytest.mark.parametrize("breakage", list(LOOKUP_BREAKAGES))
def test_the_lookup_test_names_each_row_of_a_touched_cookie_that_breaks_its_definition(
    history: Scenario, breakage: str
) -> None:
    """A touched cookie whose rows are missing or not all there, without a current row, whose first row
    does not start at its first date, not in first_dates, or whose users are not user_mapping's fails
    agrees_with_first_dates_and_user_mapping: its rows are the rows on one side only, each saying which."""
    cookie = cookie_with_history(history, touched_by_the_last_run=True)
    rows = history.sql(
        "select user_id, valid_start_date, is_current from {schema}.visitor_lookup "
        f"where visitor_cookie_id = '{cookie}' order by valid_start_date"
    )
    table, breaking, expected = LOOKUP_BREAKAGES[breakage]
    key = f"visitor_cookie_id = '{cookie}'"
    with history.broken(
        table, breaking.replace("{key}", key).replace("{first_start}", str(rows[0].valid_start_date))
    ):
        result = history.dbt("test", "--select", "visitor_lookup", vars=VARS, ok=False)
        failing = history.failing_rows(result, AGREES)
        assert {row.visitor_cookie_id for row in failing} == {cookie}
        found = [(row.problem, row.user_id, row.valid_start_date, row.is_current) for row in failing]
        assert sorted(found, key=str) == sorted(expected(rows), key=str)


# How one row of first_dates breaks its key, and the failing row expected (key, rows with it, NULL columns).
FIRST_DATES_BREAKAGES = {
    "a second row": (
        "insert into {schema}.first_dates select * from {schema}.first_dates where {key}",
        lambda cookie: (cookie, 2, ""),
    ),
    "a NULL": (
        "update {schema}.first_dates set first_day = null where {key}",
        lambda cookie: (cookie, 1, "first_day is null"),
    ),
}


@pytest.mark.same_on_both_formats
@pytest.mark.parametrize("breakage", list(FIRST_DATES_BREAKAGES))
def test_the_key_test_of_first_dates_names_a_cookie_stored_twice_or_with_a_null(
    history: Scenario, breakage: str
) -> None:
    cookie = cookie_with_history(history, touched_by_the_last_run=True)
    breaking, expected = FIRST_DATES_BREAKAGES[breakage]
    with history.broken("first_dates", breaking.replace("{key}", f"visitor_cookie_id = '{cookie}'")):
        result = history.dbt("test", "--select", "first_dates", vars=VARS, ok=False)
        failing = history.failing_rows(result, "primary_key_first_dates_")
        assert [(row.key_value, row.rows_with_key, row.null_columns) for row in failing] == [expected(cookie)]


# For each table of the run's state: a statement that stores one key twice and one with a NULL where the
# key test requires a value ({key}: a key the table holds, where the statement needs one), and the rows the
# test then names (key, rows with it, NULL columns).
STATE_TABLE_BREAKAGES = {
    "quarantined_events": (
        "insert into {schema}.quarantined_events "
        "select quarantine_key, event_id, visitor_cookie_id, user_id, landed, loaded_at, invalid_reason, "
        "first_quarantined_at from {schema}.quarantined_events where quarantine_key = '{key}' "
        "union all "
        "select 'a-key-without-reason', event_id, visitor_cookie_id, user_id, landed, loaded_at, null, "
        "first_quarantined_at from {schema}.quarantined_events where quarantine_key = '{key}'",
        lambda key: [(key, 2, ""), ("a-key-without-reason", 1, "invalid_reason is null")],
    ),
    "erasure_log": (
        "insert into {schema}.erasure_log values "
        "('a-request-done-twice', timestamp'2026-01-09 00:00', timestamp'2026-01-10 00:00', 2, 1, 0), "
        "('a-request-done-twice', timestamp'2026-01-09 00:00', timestamp'2026-01-10 00:00', 2, 1, 0), "
        "('a-request-without-run', timestamp'2026-01-09 00:00', timestamp'2026-01-10 00:00', null, 1, 0)",
        lambda key: [("a-request-done-twice", 2, ""), ("a-request-without-run", 1, "run_number is null")],
    ),
    "incremental_manifest": (
        "insert into {schema}.incremental_manifest "
        "select model, case when model = 'user_mapping' then null else last_success end, last_run_number "
        "from {schema}.incremental_manifest where model in ('first_dates', 'user_mapping')",
        lambda key: [("first_dates", 2, ""), ("user_mapping", 2, "last_success is null")],
    ),
}


@pytest.mark.same_on_both_formats
@pytest.mark.parametrize("table", list(STATE_TABLE_BREAKAGES))
def test_the_key_test_of_each_state_table_names_a_key_stored_twice_or_with_a_null(
    history: Scenario, table: str
) -> None:
    """The key test of the quarantine, the erasure log and the manifest names each key stored twice and each
    key whose row lacks a value the table requires."""
    (stored,) = history.sql("select min(quarantine_key) as key from {schema}.quarantined_events")
    assert stored.key, "the history quarantines some events"
    breaking, expected = STATE_TABLE_BREAKAGES[table]
    with history.broken(table, breaking.replace("{key}", stored.key)):
        result = history.dbt("test", "--select", table, vars=VARS, ok=False)
        failing = history.failing_rows(result, f"primary_key_{table}_")
        found = sorted((row.key_value, row.rows_with_key, row.null_columns) for row in failing)
        assert found == expected(stored.key)


COPIED_COLUMNS = (
    "event_id, visitor_cookie_id, user_id, landed, loaded_at, vcid_first_two, "
    "replaced_visitor_cookie_id, replaced_landed, event_key"
)
# How one row (its event id in {event_id}) breaks the key test of processed_events, and the failing row it
# then names (key, rows with it, NULL columns).
PROCESSED_EVENTS_BREAKAGES = {
    # landed emptied
    "null": (
        "update {schema}.processed_events set landed = null where event_id = '{event_id}'",
        lambda event_id: (event_id, 1, "landed is null"),
    ),
    # a second row with the id, as if an earlier run had stored it
    "twice": (
        f"insert into {{schema}}.processed_events ({COPIED_COLUMNS}, run_number) "
        f"select {COPIED_COLUMNS}, 0 from {{schema}}.processed_events where event_id = '{{event_id}}'",
        lambda event_id: (event_id, 2, ""),
    ),
}


@pytest.mark.same_on_both_formats
@pytest.mark.parametrize("breakage", list(PROCESSED_EVENTS_BREAKAGES))
@pytest.mark.parametrize("stored_by_the_latest_run", [True, False])
def test_the_key_test_of_processed_events_reads_the_latest_runs_event_ids(
    history: Scenario, breakage: str, stored_by_the_latest_run: bool
) -> None:
    """The key test of processed_events reads the rows of the event ids the latest run stored, older rows
    with those ids too; with visitor_lookup__test_scope 'all' every row."""
    breaking, expected = PROCESSED_EVENTS_BREAKAGES[breakage]
    run = "= (select max(run_number)" if stored_by_the_latest_run else "< (select max(run_number)"
    (event,) = history.sql(
        f"select event_id from {{schema}}.processed_events where run_number {run} "
        "from {schema}.processed_events) order by event_id limit 1"
    )
    selected = ["--select", "processed_events,test_name:primary_key"]

    def named(result: dbtRunnerResult) -> list[tuple]:
        failing = history.failing_rows(result, "primary_key_processed_events_")
        return [(row.key_value, row.rows_with_key, row.null_columns) for row in failing]

    with history.broken("processed_events", breaking.replace("{event_id}", event.event_id)):
        scoped = history.dbt("test", *selected, vars=VARS, ok=not stored_by_the_latest_run)
        full = history.dbt("test", *selected, vars={**VARS, "visitor_lookup__test_scope": "all"}, ok=False)
        assert named(scoped) == ([expected(event.event_id)] if stored_by_the_latest_run else [])
        assert named(full) == [expected(event.event_id)]


@pytest.mark.same_on_both_formats
def test_a_stored_event_loaded_after_the_processed_through_point_fails_its_check(history: Scenario) -> None:
    """processed_events holds no event loaded after the point the incremental set has processed through
    (the manifest's, or the latest run's upper limit): one that is fails the check, which names it."""
    (point,) = history.sql(
        "select greatest((select max(last_success) from {schema}.incremental_manifest), "
        "(select max(upper_limit) from {schema}.base_new_event_limits)) as processed_through"
    )
    later = point.processed_through + dt.timedelta(seconds=1)
    loaded_later = (
        f"insert into {{schema}}.processed_events ({COPIED_COLUMNS}, run_number) "
        f"select 'loaded-later', visitor_cookie_id, user_id, landed, timestamp'{later}', vcid_first_two, "
        "replaced_visitor_cookie_id, replaced_landed, xxhash64('loaded-later'), run_number "
        "from {schema}.processed_events limit 1"
    )
    test = "assert_processed_events_within_manifest"
    with history.broken("processed_events", loaded_later):
        result = history.dbt("test", "--select", test, vars=VARS, ok=False)
        rows = history.failing_rows(result, test)
        assert [(row.event_id, row.loaded_at, row.processed_through) for row in rows] == [
            ("loaded-later", later, point.processed_through)
        ]


@pytest.mark.same_on_both_formats
def test_docs_generate_documents_every_model_and_column(history: Scenario) -> None:
    history.write_json = True
    history.dbt("docs", "generate", vars=VARS)
    manifest = json.loads((history.target_dir / "manifest.json").read_text())
    models = [n for n in manifest["nodes"].values() if n["resource_type"] == "model"]
    assert {m["name"] for m in models} >= {"first_dates", "user_mapping", "visitor_lookup"}
    catalog = json.loads((history.target_dir / "catalog.json").read_text())
    for model in models:
        assert model["description"], model["name"]
        built = catalog["nodes"][model["unique_id"]]["columns"]
        documented = {name.lower() for name, column in model["columns"].items() if column["description"]}
        assert {name.lower() for name in built} <= documented, model["name"]


@pytest.mark.same_on_both_formats
def test_every_macro_is_documented_with_its_arguments(history: Scenario) -> None:
    history.write_json = True
    history.dbt("parse", vars=VARS)
    manifest = json.loads((history.target_dir / "manifest.json").read_text())
    macros = [m for m in manifest["macros"].values() if m["package_name"] == "visitor_lookup"]
    assert len(macros) > 40
    for macro in macros:
        if macro["name"].startswith("materialization_"):
            assert macro["description"], macro["name"]  # a materialization takes no arguments
            continue
        assert macro["description"], macro["name"]
        (signature,) = re.findall(r"{%-?\s*(?:macro|test)\s+\w+\((.*?)\)\s*-?%}", macro["macro_sql"], re.S)
        arguments = [part.split("=")[0].strip() for part in signature.split(",") if part.strip()]
        documented = {argument["name"]: argument["description"] for argument in macro["arguments"]}
        assert set(documented) == set(arguments) and all(documented.values()), macro["name"]


@pytest.mark.same_on_both_formats
def test_attribution_analyses(history: Scenario) -> None:
    history.dbt("compile", "--select", "analysis", vars=VARS)

    def analysis(name: str) -> list:
        sql = next(Path(history.target_dir).glob(f"compiled/**/analyses/{name}.sql")).read_text()
        return history.sql(sql.replace("{", "{{").replace("}", "}}"))

    events = {
        row.event_id: (row.visitor_cookie_id, row.user_id, row.landed)
        for row in history.table("processed_events")
    }
    lookup: dict[str, list] = {}
    for row in history.table("visitor_lookup"):
        lookup.setdefault(row.visitor_cookie_id, []).append(row)
    expected = {}
    for event_id, (cookie, user, landed) in events.items():
        spans = [s for s in lookup[cookie] if s.valid_start_date <= landed <= s.valid_end_date]
        assert len(spans) == 1  # the lookup covers every processed page view exactly once
        expected[event_id] = (user, spans[0].user_id, user or spans[0].user_id)

    backfilled = analysis("attribution_backfilled_page_views")
    assert {
        r.event_id: (r.event_user_id, r.lookup_user_id, r.attributed_user_id) for r in backfilled
    } == expected
    (share,) = analysis("attribution_share_gained")
    with_event = sum(1 for u, _, _ in expected.values() if u)
    with_attributed = sum(1 for _, _, a in expected.values() if a)
    assert (share.page_views, share.with_event_user, share.with_attributed_user) == (
        len(expected),
        with_event,
        with_attributed,
    )
    assert with_attributed > with_event


@pytest.mark.same_on_both_formats
def test_every_break_above_was_undone(history: Scenario) -> None:
    """Each test above puts the table it broke back at its version before the break: every test passes
    again over every row (one check here, not one after each break)."""
    result = history.dbt("test", vars={**VARS, "visitor_lookup__test_scope": "all"})
    assert {str(r.status) for r in result.result.results if r.node.resource_type == "test"} == {"pass"}
