"""Erasure on request (spec §7): after the run that follows a request, every table equals the contract
applied to the copies no request names, and no such copy ever comes back."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from .conftest import LOOKUP_TABLES, Scenario, table_format, ts
from .reference import Raw, lookup_tables, normalise_id, processed_events, quarantined
from .test_lookup_properties import VARS, random_arrivals
from .test_storage import KEPT, folder

REFRESH = {**VARS, "visitor_lookup__allow_refresh": True}
SCRATCH_TABLES = (
    "base_new_event_limits",
    "base_erased_events_this_run",
    "base_events_this_run",
    "base_cookie_changes_this_run",
    "base_stored_lookup_rows_this_run",
    "base_first_date_changes_this_run",
    "base_user_mapping_changes_this_run",
)


class Requests:
    """The ids asked to be erased so far, as the reference applies them."""

    def __init__(self) -> None:
        self.users: set[str] = set()
        self.cookies: set[str] = set()

    def add(
        self, scenario: Scenario, request_id: str, user: str | None = None, cookie: str | None = None
    ) -> None:
        args = {"request_id": request_id, "user_id": user, "visitor_cookie_id": cookie}
        scenario.dbt("run-operation", "visitor_lookup_request_erasure", "--args", json.dumps(args), vars=VARS)
        self.users |= {user} if user else set()
        self.cookies |= {cookie} if cookie else set()

    def remaining(self, events: Iterable[Raw]) -> list[Raw]:
        """The copies no request names (ids compared as the contract cleans them)."""
        return [
            event
            for event in events
            if normalise_id(event.user_id) not in self.users
            and normalise_id(event.visitor_cookie_id) not in self.cookies
        ]


def assert_exact(scenario: Scenario, seen: list[Raw], requests: Requests) -> None:
    remaining = requests.remaining(seen)
    stored = processed_events(remaining)
    assert scenario.lookup_tables() == lookup_tables(stored.values())
    rows = scenario.sql(
        "select event_id, visitor_cookie_id, user_id, landed, loaded_at from {schema}.processed_events"
    )
    assert {row.event_id: tuple(row) for row in rows} == {key: tuple(event) for key, event in stored.items()}
    rows = scenario.sql(
        "select event_id, visitor_cookie_id, user_id, landed, loaded_at, invalid_reason "
        "from {schema}.quarantined_events"
    )
    assert {(Raw(*row[:5]), row.invalid_reason) for row in rows} == quarantined(remaining)


def scratch_tables_created(scenario: Scenario) -> dict[str, str]:
    """When each per-run table was created: a run that overwrites it in place leaves that as it was."""
    return {
        table: next(
            row.data_type
            for row in scenario.sql(f"describe table extended {{schema}}.{table}")
            if row.col_name == "Created Time"
        )
        for table in SCRATCH_TABLES
    }


def erasure_log(scenario: Scenario) -> dict[str, tuple]:
    rows = scenario.sql(
        "select request_id, run_number, events_erased, quarantined_erased from {schema}.erasure_log"
    )
    return {row.request_id: (row.run_number, row.events_erased, row.quarantined_erased) for row in rows}


def erasure_history(scenario: Scenario) -> dict[int, tuple]:
    rows = scenario.sql(
        "select run_number, erasure_requests_done, events_erased, quarantined_erased "
        "from {schema}.visitor_lookup_runs where status = 'success'"
    )
    return {row.run_number: tuple(row)[1:] for row in rows}


@pytest.mark.quick
def test_hand_made_erasures_are_exact_and_never_come_back(scenario: Scenario) -> None:
    first = [
        # ann on two cookies; c2 shared with bob
        Raw("a1", "c1", None, ts("2026-01-03 09:00"), ts("2026-01-05 10:00")),
        Raw("a2", "c1", "ann", ts("2026-01-03 10:00"), ts("2026-01-05 10:00")),
        Raw("a3", "c2", "bob", ts("2026-01-03 11:00"), ts("2026-01-05 10:00")),
        Raw("a4", "c2", " ann ", ts("2026-01-03 12:00"), ts("2026-01-05 10:00")),
        Raw("a5", "c2", "bob", ts("2026-01-03 13:00"), ts("2026-01-05 10:00")),
        # an event whose counting copy is ann's; a later copy says bob
        Raw("a6", "c3", "ann", ts("2026-01-03 08:00"), ts("2026-01-05 10:00")),
        Raw("a6", "c3", "bob", ts("2026-01-03 08:30"), ts("2026-01-05 11:00")),
        # c4: only ann's events, its first date goes with them
        Raw("a7", "c4", "ann", ts("2026-01-02 08:00"), ts("2026-01-05 10:00")),
        # invalid rows carrying ann (landed far after loaded_at) and c5
        Raw("q1", "c1", "ann", ts("2026-01-09 08:00"), ts("2026-01-05 10:00")),
        Raw("q2", "c5", None, None, ts("2026-01-05 10:00")),
        Raw("a8", "c5", None, ts("2026-01-03 07:00"), ts("2026-01-05 10:00")),
        # a copy of a7 on c6, loaded later: it counts once ann's copy is gone
        Raw("a7", "c6", None, ts("2026-01-02 08:00"), ts("2026-01-05 12:00")),
    ]
    requests = Requests()
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    assert_exact(scenario, first, requests)
    created = scratch_tables_created(scenario)

    requests.add(scenario, "r-ann", user="ann")
    scenario.dbt("run", vars=VARS)
    assert_exact(scenario, first, requests)
    assert erasure_log(scenario) == {"r-ann": (2, 4, 1)}  # a2 a4 a6 a7, and q1
    assert erasure_history(scenario) == {1: (0, 0, 0), 2: (1, 4, 1)}
    assert scenario.logged("Visitor lookup: erasing 1 request(s): 4 processed events and 1 quarantined rows")

    # ann comes back, a late copy of an erased event says ann again; c5 and c2 (bob's too) are asked to go
    second = [
        Raw("b1", "c1", "ann", ts("2026-01-06 09:00"), ts("2026-01-06 10:00")),
        Raw("b2", "c7", "ann", ts("2026-01-06 09:00"), ts("2026-01-06 10:00")),
        Raw("a2", "c1", "ann", ts("2026-01-03 10:00"), ts("2026-01-05 09:00")),
        Raw("b3", "c5", "cy", ts("2026-01-06 09:30"), ts("2026-01-06 10:00")),
    ]
    requests.add(scenario, "r-c5", cookie="c5")
    requests.add(scenario, "r-c2", cookie="c2")
    scenario.write_events(second)
    scenario.dbt("run", vars=VARS)
    seen = first + second
    assert_exact(scenario, seen, requests)
    # r-c5: a8 (b3 never entered) and q2; r-c2: bob's a3 and a5
    assert erasure_log(scenario) == {"r-ann": (2, 4, 1), "r-c5": (3, 1, 1), "r-c2": (3, 2, 0)}
    assert not scenario.sql("select * from {schema}.visitor_lookup where visitor_cookie_id in ('c2', 'c5')")

    # runs with nothing to erase, then a rebuild from every raw event: nothing erased comes back
    scenario.dbt("run", vars=VARS)
    assert_exact(scenario, seen, requests)
    # the first run's query, the erasing runs' and this one's differ; the per-run tables' columns do not
    assert scratch_tables_created(scenario) == created
    scenario.dbt("run", "--full-refresh", vars=REFRESH)
    assert_exact(scenario, seen, requests)
    scenario.dbt("test", vars={**VARS, "visitor_lookup__test_scope": "all"})


@pytest.mark.slow
# which copies a request names is SQL over the stored rows; how Delta deletes them, the hand-made case shows
@pytest.mark.same_on_both_formats
def test_random_erasures_equal_the_reference_after_every_run(scenario: Scenario) -> None:
    batches = random_arrivals(seed=41, batches=5)
    requests = Requests()
    seen: list[Raw] = []
    for number, batch in enumerate(batches):
        if number == 2:
            requests.add(scenario, "r1", user="bob")
            requests.add(scenario, "r2", cookie="a3")
        if number == 3:
            requests.add(scenario, "r3", user="dee", cookie="b5")
        scenario.write_events(batch)
        seen += batch
        scenario.dbt("run", vars=VARS)
        assert_exact(scenario, seen, requests)
    assert set(erasure_log(scenario)) == {"r1", "r2", "r3"}
    scenario.dbt("test", vars={**VARS, "visitor_lookup__test_scope": "all"})


def strings_in_parquet(path: Path) -> set[str]:
    """Every string value of a Parquet file, and its columns' min and max statistics."""
    file = pq.ParquetFile(path)
    values = {
        str(value) for column in file.read().columns for value in column.to_pylist() if value is not None
    }
    for group in range(file.metadata.num_row_groups):
        for index in range(file.metadata.num_columns):
            stats = file.metadata.row_group(group).column(index).statistics
            if stats is not None and stats.has_min_max:
                values |= {str(stats.min), str(stats.max)}
    return values


ERASED_USER, ERASED_COOKIE = "zz-erased-user", "zz-erased-cookie"
# Two batches: the erased user on the erased cookie and on one that is kept, then a replaced copy (e6 replaces
# e3's, so processed_events remembers the kept cookie) and an event without a cookie.
ERASED_EVENTS = (
    [
        Raw("e1", ERASED_COOKIE, None, ts("2026-01-03 09:00"), ts("2026-01-05 10:00")),
        Raw("e2", ERASED_COOKIE, ERASED_USER, ts("2026-01-03 10:00"), ts("2026-01-05 10:00")),
        Raw("e3", "kept", ERASED_USER, ts("2026-01-03 11:00"), ts("2026-01-05 10:00")),
    ],
    [
        Raw("e4", "kept", "stays", ts("2026-01-03 12:00"), ts("2026-01-05 10:00")),
        Raw("e5", " ", ERASED_USER, ts("2026-01-03 12:00"), ts("2026-01-05 10:00")),
        Raw("e6", "kept", ERASED_USER, ts("2026-01-03 09:00"), ts("2026-01-05 09:00")),
    ],
)


def stored_before_the_erasure(scenario: Scenario, run_vars: dict) -> list[Raw]:
    """ERASED_EVENTS' two batches, each stored by a run."""
    for batch in ERASED_EVENTS:
        scenario.write_events(batch)
        scenario.dbt("run", vars=run_vars)
    return [event for batch in ERASED_EVENTS for event in batch]


def test_an_erasure_leaves_no_erased_id_in_a_live_file_nor_after_the_retention_on_disk(
    scenario: Scenario, delta_retention_check_off: Callable[[], None]
) -> None:
    # merge-on-read only marks a merge's deleted rows: the erasing run's compaction must rewrite every
    # file that holds one, whatever its size (on Delta the table is rewritten whole: OPTIMIZE leaves a file
    # alone in its bin as it is); the next run's expiry or VACUUM then deletes the older files
    run_vars = {
        **VARS,
        "visitor_lookup__lookup_write_mode": "merge-on-read",
        "visitor_lookup__snapshot_retention_days": 0,
    }
    user, cookie = ERASED_USER, ERASED_COOKIE
    events = stored_before_the_erasure(scenario, run_vars)
    if table_format() == "delta":
        # Delta's check on: its 7 days kept, so due every 16.8 hours, not on the second run
        assert scenario.logged("Visitor lookup: vacuumed ") == []
        delta_retention_check_off()
    requests = Requests()
    requests.add(scenario, "r-user", user=user)
    requests.add(scenario, "r-cookie", cookie=cookie)
    scenario.dbt("run", vars=run_vars)
    assert_exact(scenario, events, requests)
    assert "1 compaction" in " ".join(scenario.logged("visitor_lookup_spans"))
    compacted = scenario.logged("Visitor lookup: compacted ")
    assert len(compacted) == len(LOOKUP_TABLES), compacted
    if table_format() == "delta":
        assert all("(erased rows), rewritten whole: " in line for line in compacted), compacted
    for name in LOOKUP_TABLES:
        live = scenario.live_data_files(name)
        assert live, name
        assert {str(path) for path in live if {user, cookie} & strings_in_parquet(path)} == set()
        assert scenario.data_files_and_deletes(name)[1] == 0, name  # no row left marked deleted

    scenario.dbt("run", vars=run_vars)  # the next run: erased_cookies and the per-run tables let go
    assert_exact(scenario, events, requests)
    if table_format() == "delta":
        vacuumed = scenario.logged("Visitor lookup: vacuumed ")
        assert all("retaining 0 hours" in line for line in vacuumed), vacuumed
        names = {line.split(", retaining")[0].rsplit(".", 1)[1] for line in vacuumed}
        assert names == {*KEPT, "erased_cookies", "erasure_log", "visitor_lookup_runs"}
        for name in KEPT:  # on disk, the data files of the current version only
            on_disk = {
                path for path in folder(scenario, name).rglob("*.parquet") if "_delta_log" not in path.parts
            }
            assert on_disk == set(scenario.live_data_files(name)), name

    tables = [
        table.name
        for table in scenario.spark.catalog.listTables(scenario.schema)
        if not table.isTemporary and table.tableType != "VIEW"
    ]
    assert "erasure_requests" in tables
    files = [
        path
        for name in tables
        if name != "erasure_requests"  # the requests themselves: the ids to keep out for ever
        for path in folder(scenario, name).rglob("*.parquet")
    ]
    assert len(files) > 10
    leaks = {str(path) for path in files if {user, cookie} & strings_in_parquet(path)}
    assert leaks == set()


@pytest.mark.same_on_both_formats
def test_bad_requests_are_refused_and_change_nothing(scenario: Scenario) -> None:
    events = [Raw("e1", "c1", "ann", ts("2026-01-03 09:00"), ts("2026-01-05 10:00"))]
    args = json.dumps({"user_id": " ", "visitor_cookie_id": None})
    scenario.dbt("run-operation", "visitor_lookup_request_erasure", "--args", args, vars=VARS, ok=False)
    assert scenario.logged("an erasure request names a user_id or a visitor_cookie_id, got neither")
    # a request before the first run: the first run does it
    requests = Requests()
    requests.add(scenario, "r-nobody", user="nobody")
    scenario.write_events(events)
    scenario.dbt("run", vars=VARS)
    assert_exact(scenario, events, requests)
    assert erasure_log(scenario) == {"r-nobody": (1, 0, 0)}

    scenario.sql("insert into {schema}.erasure_requests values ('r-empty', ' ', null, current_timestamp())")
    versions = {name: scenario.table_version(name) for name in ("processed_events", "first_dates")}
    scenario.dbt("run", vars=VARS, ok=False)
    assert scenario.logged("erasure request(s) r-empty in ")
    assert {name: scenario.table_version(name) for name in versions} == versions

    scenario.sql("delete from {schema}.erasure_requests where request_id = 'r-empty'")
    requests.add(scenario, "r-ann", user="ann")
    scenario.dbt("run", vars=VARS)
    assert_exact(scenario, events, requests)
    assert erasure_history(scenario) == {1: (1, 0, 0), 2: (1, 1, 0)}
