"""spec §3 and §5 on real runs: quarantine, new files, overlapping windows, failures, gaps.

What is read, quarantined, kept once and when the state moves is decided in the per-run tables (Parquet
on both formats) and in SQL over the manifest; the stored events are merged the same way into either
format, and Delta's merges are checked in the Delta pass by test_lookup_cases and test_lookup_properties.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .conftest import INCREMENTAL_MODELS, Scenario, ts
from .reference import MICROSECOND, Raw, lookup_tables, processed_events, quarantined

pytestmark = pytest.mark.same_on_both_formats

VARS = {
    "visitor_lookup__start_date": "2026-01-01",
    "visitor_lookup__backfill_limit_days": 30,
    "visitor_lookup__lookback_window_hours": 6,
}


def stored_events(scenario: Scenario) -> dict[str, tuple]:
    rows = scenario.table("processed_events")
    assert len({row.event_id for row in rows}) == len(rows), "an event_id stored twice"
    return {
        row.event_id: (row.event_id, row.visitor_cookie_id, row.user_id, row.landed, row.loaded_at)
        for row in rows
    }


def stored_quarantine(scenario: Scenario) -> set[tuple[Raw, str]]:
    return {
        (Raw(r.event_id, r.visitor_cookie_id, r.user_id, r.landed, r.loaded_at), r.invalid_reason)
        for r in scenario.table("quarantined_events")
    }


def limits(scenario: Scenario) -> tuple[int, dt.datetime, dt.datetime]:
    (row,) = scenario.table("base_new_event_limits")
    return row.state, row.lower_limit, row.upper_limit


def assert_matches_reference(scenario: Scenario, seen: list[Raw]) -> None:
    assert stored_events(scenario) == {k: tuple(v) for k, v in processed_events(seen).items()}
    assert stored_quarantine(scenario) == quarantined(seen)


def test_every_invalid_kind_is_quarantined_with_its_reason(scenario: Scenario) -> None:
    at = ts("2026-01-05 10:00")
    minute = dt.timedelta(minutes=1)
    events = [
        Raw("v1", "c1", "u1", at, at + minute),
        Raw("v2", " c2\t", "  u2 ", at, at + minute),
        Raw("v3", "c3", " ", at, at + minute),
        Raw("v4", "C1", None, at, at + minute),
        Raw("v5", "c5", "u5", at + 10 * minute, at),
        # Every character the contract trims, and inside an id a space that stays.
        Raw("v6", "\n\x0b\f\rc6 6\t ", "\x0bu6\f\r\n", at, at + minute),
        # Whitespace beyond those six is part of the id.
        Raw("v7", "\u00a0c7", "u7\u2003", at, at + minute),
        Raw("bad-cookie-null", None, "u1", at, at + minute),
        Raw("bad-cookie-blank", " \t ", "u1", at, at + minute),
        Raw("bad-cookie-blank-line-breaks", "\r\n\x0b\f", "u1", at, at + minute),
        Raw(None, "c1", "u1", at, at + minute),
        Raw("bad-landed", "c1", "u1", None, at + minute),
        Raw("bad-loaded", "c1", "u1", at, None),
        Raw("bad-skew", "c1", "u1", at + 10 * minute + dt.timedelta(microseconds=1), at),
        Raw("bad-skew", "c1", "u1", at + 10 * minute + dt.timedelta(microseconds=1), at),
    ]
    path = scenario.write_events(events)

    scenario.dbt("run", vars=VARS)

    assert_matches_reference(scenario, events)
    reasons = {reason for _, reason in stored_quarantine(scenario)}
    assert reasons == {
        "visitor_cookie_id is null or blank",
        "event_id is null",
        "landed is null",
        "loaded_at is null",
        "landed is more than 10 minutes after loaded_at",
    }
    assert stored_events(scenario)["v2"][1:3] == ("c2", "u2")
    assert stored_events(scenario)["v3"][2] is None
    assert stored_events(scenario)["v6"][1:3] == ("c6 6", "u6")
    assert stored_events(scenario)["v7"][1:3] == ("\u00a0c7", "u7\u2003")
    assert scenario.logged("read 15 events: 7 valid, 0 duplicate copies ignored, 8 quarantined")

    # A second run, after the file was written again (the folder the first run listed changed), re-reads
    # the event without loaded_at and the lookback: nothing is doubled.
    os.utime(path)
    scenario.dbt("run", vars=VARS)
    assert not scenario.logged("The events folder is as run")
    assert scenario.logged("read 15 events: 7 valid, 0 duplicate copies ignored, 8 quarantined")
    assert_matches_reference(scenario, events)


def test_copies_loaded_at_one_instant_fall_to_landed_then_cookie_then_user(scenario: Scenario) -> None:
    loaded = ts("2026-01-05 10:30")
    first = [
        Raw("t1", "c1", "u1", ts("2026-01-05 10:05"), loaded),
        Raw("t1", "c2", "u2", ts("2026-01-05 10:01"), loaded),
        Raw("t2", "c4", None, ts("2026-01-05 10:00"), loaded),
        Raw("t2", "c3", "u3", ts("2026-01-05 10:00"), loaded),
        Raw("t3", "c5", "u5", ts("2026-01-05 10:00"), loaded),
        Raw("t3", "c5", None, ts("2026-01-05 10:00"), loaded),
        Raw("t4", "c6", "u6", ts("2026-01-05 10:10"), loaded),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)

    assert scenario.logged("read 7 events: 4 valid, 3 duplicate copies ignored, 0 quarantined")
    assert_matches_reference(scenario, first)
    assert {event_id: row[1:3] for event_id, row in stored_events(scenario).items()} == {
        "t1": ("c2", "u2"),
        "t2": ("c3", "u3"),
        "t3": ("c5", None),
        "t4": ("c6", "u6"),
    }

    # A copy of a stored event, loaded at the same instant but landed earlier, takes its place.
    second = [Raw("t4", "c7", "u7", ts("2026-01-05 10:05"), loaded)]
    scenario.write_events(second)
    scenario.dbt("run", vars=VARS)

    assert_matches_reference(scenario, first + second)
    assert stored_events(scenario)["t4"][1:4] == ("c7", "u7", ts("2026-01-05 10:05"))


@pytest.mark.iceberg_only
def test_stored_copies_are_read_right_when_the_table_has_delete_files(scenario: Scenario) -> None:
    # A run reads the stored copies of its events from the data files that hold their keys, directly.
    # Set to merge-on-read (by hand here: the project writes copy-on-write), an update leaves the
    # replaced row in its data file, deleted only by a delete file: such a table is read whole.
    first = [
        Raw("a1", "c1", "u1", ts("2026-01-05 06:00"), ts("2026-01-05 12:00")),
        Raw("a2", "c2", "u2", ts("2026-01-05 11:00"), ts("2026-01-05 11:00")),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    scenario.sql(
        "alter table {schema}.processed_events set tblproperties ('write.update.mode' = 'merge-on-read', "
        "'write.delete.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')"
    )
    # delivered late, loaded before the stored copy of a1: it takes its place
    second = [
        Raw("a1", "c1", "u1", ts("2026-01-05 06:00"), ts("2026-01-05 06:30")),
        Raw("b1", "c3", "u3", ts("2026-01-05 13:00"), ts("2026-01-05 13:00")),
    ]
    scenario.write_events(second)
    scenario.dbt("run", vars=VARS)
    assert scenario.sql("select count(*) as files from {schema}.processed_events.delete_files") == [(1,)]

    # Loaded after the copy that counts and before the replaced one, in a new file, which this run reads
    # whole: only the deleted row would let it in.
    third = [Raw("a1", "c4", "u4", ts("2026-01-05 06:00"), ts("2026-01-05 11:00"))]
    scenario.write_events(third)
    scenario.dbt("run", vars=VARS)

    assert scenario.logged("found it but for 1 events file(s) written after ")
    assert_matches_reference(scenario, first + second + third)
    assert stored_events(scenario)["a1"][1:] == ("c1", "u1", ts("2026-01-05 06:00"), ts("2026-01-05 06:30"))


def read_behind_iceberg(scenario: Scenario) -> bool:
    """Whether the last run read data files of processed_events as plain Parquet."""
    return any("from parquet.`" in line and "/processed_events/data/" in line for line in scenario.log_lines)


@pytest.mark.iceberg_only
def test_stored_copies_are_read_by_iceberg_when_its_files_are_not_the_table(scenario: Scenario) -> None:
    # The data files holding a stored copy's key are read as plain Parquet only while they are the table by
    # name: a name mapping (files without field ids), files written in another format or a schema changed
    # since the table's creation (Iceberg resolves columns by field id) sends the run through Iceberg's
    # reader. Each run re-delivers one event.
    at = ts("2026-01-05 06:00")
    seen = [Raw(f"a{n}", f"c{n}", f"u{n}", at, at + dt.timedelta(hours=n)) for n in range(1, 5)]
    scenario.write_events(seen)
    scenario.dbt("run", vars=VARS)

    def run_with_a_copy_of(event: Raw) -> bool:
        copy = event._replace(loaded_at=event.loaded_at + dt.timedelta(days=1))
        scenario.write_events([copy])
        seen.append(copy)
        scenario.dbt("run", vars=VARS)
        assert_matches_reference(scenario, seen)
        return read_behind_iceberg(scenario)

    scenario.sql(
        "alter table {schema}.processed_events set tblproperties "
        """('schema.name-mapping.default' = '[{{"field-id": 1, "names": ["event_id"]}}]')"""
    )
    assert not run_with_a_copy_of(seen[0])
    scenario.sql("alter table {schema}.processed_events unset tblproperties ('schema.name-mapping.default')")
    assert run_with_a_copy_of(seen[1])
    scenario.sql("alter table {schema}.processed_events set tblproperties ('write.format.default' = 'orc')")
    assert not run_with_a_copy_of(seen[2])
    scenario.sql("alter table {schema}.processed_events unset tblproperties ('write.format.default')")
    scenario.sql("alter table {schema}.processed_events add column note string")
    assert not run_with_a_copy_of(seen[3])


def test_new_file_is_seen_and_overlapping_windows_count_once(scenario: Scenario) -> None:
    first = [
        Raw("a1", "c1", None, ts("2026-01-05 09:55"), ts("2026-01-05 10:00")),
        Raw("a2", "c1", "u1", ts("2026-01-05 11:00"), ts("2026-01-05 11:00")),
        Raw("a3", "c2", "u2", ts("2026-01-05 11:59"), ts("2026-01-05 12:00")),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    assert limits(scenario) == (1, ts("2026-01-01"), ts("2026-01-31"))
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, ts("2026-01-05 12:00"))
    assert_matches_reference(scenario, first)

    second = [
        # new events
        Raw("b1", "c1", "u3", ts("2026-01-05 12:30"), ts("2026-01-05 13:00")),
        Raw("b2", "c3", None, ts("2026-01-05 12:45"), ts("2026-01-05 13:05")),
        # delivered again later: the stored copy (loaded earlier) stays
        Raw("a2", "c1", "u9", ts("2026-01-05 11:00"), ts("2026-01-05 13:30")),
        # loaded before the high-water mark, delivered only now, inside the lookback
        Raw("s1", "c4", "u4", ts("2026-01-05 08:00"), ts("2026-01-05 08:00")),
        # a copy of a3 loaded earlier than the stored one: it is the copy that counts
        Raw("a3", "c2", "u7", ts("2026-01-05 11:58"), ts("2026-01-05 11:58")),
        # loaded before the lookback window (a day re-exported): read with its file, which is new
        Raw("x1", "c5", "u5", ts("2026-01-05 05:00"), ts("2026-01-05 05:00")),
    ]
    scenario.write_events(second)
    scenario.dbt("run", vars=VARS)

    # Every file of the first run's listing as it was: the range starts after last_success, the new file
    # is read whole.
    assert limits(scenario) == (4, ts("2026-01-05 12:00") + MICROSECOND, ts("2026-02-04 12:00"))
    assert scenario.logged("Visitor lookup: Standard incremental run")
    assert scenario.logged("found it but for 1 events file(s) written after ")
    assert_matches_reference(scenario, first + second)
    assert stored_events(scenario)["a2"][2] == "u1"
    assert stored_events(scenario)["a3"][2] == "u7"
    assert stored_events(scenario)["x1"][2] == "u5"
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, ts("2026-01-05 13:30"))


def test_a_run_that_finds_the_events_folder_as_the_previous_run_did_reads_only_what_is_new(
    scenario: Scenario,
) -> None:
    """spec §5: a standard run that finds every file as the previous run, which completed, found it reads
    the events loaded after last_success only, and the lookback only in the files added since; a file
    added with an old time, or a previous run that did not complete, brings the lookback back."""
    first = [
        Raw("a1", "c1", "u1", ts("2026-01-05 10:00"), ts("2026-01-05 10:00")),
        Raw("q1", " ", "u1", ts("2026-01-05 09:00"), ts("2026-01-05 09:00")),
        Raw("n1", "c2", None, ts("2026-01-05 09:00"), None),
        # beyond the first run's backfill limit (30 days from the start date)
        Raw("b1", "c3", "u3", ts("2026-02-10 10:00"), ts("2026-02-10 10:00")),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    assert_matches_reference(scenario, first[:3])

    # Nothing changed in the folder: the range starts just after last_success, and what the lookback,
    # the quarantine and the events without loaded_at hold is not read again.
    scenario.dbt("run", vars=VARS)
    assert scenario.logged(
        "Visitor lookup: The events folder is as run 1 found it: reading only what was loaded after "
        "2026-01-05 10:00:00.000000, not the lookback again"
    )
    assert limits(scenario) == (
        4,
        ts("2026-01-05 10:00") + dt.timedelta(microseconds=1),
        ts("2026-02-04 10:00"),
    )
    assert scenario.logged("read 0 events: 0 valid")
    assert not scenario.logged("no events in this run's loaded_at range")
    assert scenario.logged(f"{scenario.schema}.processed_events: nothing to merge")
    assert scenario.logged(f"{scenario.schema}.quarantined_events: nothing to merge")
    assert_matches_reference(scenario, first[:3])
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, ts("2026-02-04 10:00"))

    # Still unchanged: the next range reaches the event beyond the backfill limit.
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("The events folder is as run 2 found it")
    assert_matches_reference(scenario, first)

    # A file copied in with an old modification time, so older than any check's: the folder's listing
    # differs, and the lookback is read again.
    late = [Raw("l1", "c4", "u4", ts("2026-02-10 06:00"), ts("2026-02-10 06:00"))]
    path = scenario.write_events(late)
    os.utime(path, (ts("2026-01-05 10:00").timestamp(), ts("2026-01-05 10:00").timestamp()))
    scenario.dbt("run", vars=VARS)
    assert not scenario.logged("The events folder is as run")
    assert limits(scenario)[:2] == (4, ts("2026-02-10 04:00"))
    assert_matches_reference(scenario, first + late)

    # The limits computed alone (the state inspected, or a run stopped after them): the run after it
    # finds a number the manifest has not confirmed, and reads the lookback.
    scenario.dbt("run", "--select", "base_new_event_limits", vars=VARS)
    scenario.dbt("run", vars=VARS)
    assert not scenario.logged("The events folder is as run")
    assert limits(scenario)[:2] == (4, ts("2026-03-12 04:00"))
    assert_matches_reference(scenario, first + late)

    # Files added since, each written after the previous run's listing: the lookback is read in them only.
    # An event the last run read is in the next lookback, in its file; a file added after it brings one
    # late event there, one after last_success, one without loaded_at and one loaded in the future.
    at = max(scenario.manifest().values()) + dt.timedelta(days=1)
    read = [Raw("r1", "c5", "u5", at, at)]
    scenario.write_events(read)
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("1 events file(s) written after ")
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, at)
    added = [
        Raw("g1", "c1", "u6", at - dt.timedelta(hours=2), at - dt.timedelta(hours=1)),
        Raw("g2", "c6", "u6", at + dt.timedelta(hours=1), at + dt.timedelta(hours=1)),
        Raw("g3", "c7", None, at + dt.timedelta(hours=1), None),
        Raw("g4", "c8", "u8", at + dt.timedelta(hours=1), ts("2099-01-01 00:00")),
    ]
    scenario.write_events(added)
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("found it but for 1 events file(s) written after ")
    assert scenario.logged(f"reading those whole, and what was loaded after {at}.000000 in every file")
    # r1 lies in the lookback and is not read again: its file is the previous run's.
    assert scenario.logged("read 4 events: 2 valid, 0 duplicate copies ignored, 2 quarantined")
    seen, now = first + late + read + added, dt.datetime.now(dt.UTC).replace(tzinfo=None)
    assert stored_events(scenario) == {k: tuple(v) for k, v in processed_events(seen, 10, now).items()}
    assert stored_quarantine(scenario) == quarantined(seen, 10, now)


def test_failed_model_keeps_its_manifest_entry_and_next_run_catches_up(scenario: Scenario) -> None:
    first = [
        Raw("a1", "c1", "u1", ts("2026-01-05 10:00"), ts("2026-01-05 10:00")),
        Raw("a2", None, "u1", ts("2026-01-05 10:00"), ts("2026-01-05 10:00")),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)

    second = [
        Raw("b1", "c1", "u2", ts("2026-01-06 10:00"), ts("2026-01-06 10:00")),
        Raw("b2", "c2", "u3", ts("2026-01-06 11:00"), None),
        Raw("b3", "  ", "u3", ts("2026-01-06 11:00"), ts("2026-01-06 11:00")),
    ]
    scenario.write_events(second)
    with scenario.table_replaced_by_incompatible_one("quarantined_events", "quarantine_key"):
        scenario.dbt("run", vars=VARS, ok=False)

    assert scenario.manifest() == {
        **dict.fromkeys(INCREMENTAL_MODELS, ts("2026-01-06 11:00")),
        "quarantined_events": ts("2026-01-05 10:00"),
    }
    assert scenario.logged("quarantined_events did not succeed")

    scenario.dbt("run", vars=VARS)

    assert scenario.logged("Visitor lookup: Incremental models out of sync")
    assert limits(scenario) == (3, ts("2026-01-05 04:00"), ts("2026-01-06 11:00"))
    assert_matches_reference(scenario, first + second)
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, ts("2026-01-06 11:00"))


def test_events_without_loaded_at_are_read_from_the_files_written_since_the_lower_limit(
    scenario: Scenario,
) -> None:
    """spec §5: from a folder, a run reads the events without loaded_at in the files written since its lower
    limit (less the clock-skew allowance), the file's time standing in for their loaded_at; a run that read
    them but failed to quarantine them leaves its manifest entry, so the next run reads the file again."""

    def dropped(events: list[Raw], written: dt.datetime) -> Path:
        """A file written as a loader writes one, just after its last event was loaded."""
        path = scenario.write_events(events)
        os.utime(path, (written.timestamp(), written.timestamp()))
        return path

    first = [
        Raw("a1", "c1", "u1", ts("2026-01-05 10:00"), ts("2026-01-05 10:00")),
        Raw("n1", "c2", None, ts("2026-01-05 10:00"), None),
    ]
    dropped(first, ts("2026-01-05 10:01"))
    scenario.dbt("run", vars=VARS)
    assert_matches_reference(scenario, first)

    second = [
        Raw("b1", "c1", "u2", ts("2026-01-06 10:00"), ts("2026-01-06 10:00")),
        Raw("n2", "c3", None, ts("2026-01-06 10:00"), None),
    ]
    second_file = dropped(second, ts("2026-01-06 10:01"))
    with scenario.table_replaced_by_incompatible_one("quarantined_events", "quarantine_key"):
        scenario.dbt("run", vars=VARS, ok=False)
    scenario.dbt("run", vars=VARS)
    assert limits(scenario) == (3, ts("2026-01-05 04:00"), ts("2026-01-06 10:00"))
    assert_matches_reference(scenario, first + second)

    third = [Raw("c1", "c1", None, ts("2026-01-07 10:00"), ts("2026-01-07 10:00"))]
    dropped(third, ts("2026-01-07 10:01"))
    # The second file written again: the folder the previous run listed changed, so the lookback is read.
    dropped_again = ts("2026-01-06 10:02").timestamp()
    os.utime(second_file, (dropped_again, dropped_again))
    scenario.dbt("run", vars=VARS)
    # The first file was written before this run's lower limit: n1 is not read again; n2 is.
    assert limits(scenario)[:2] == (4, ts("2026-01-06 04:00"))
    assert scenario.logged("read 3 events: 2 valid, 0 duplicate copies ignored, 1 quarantined")
    assert_matches_reference(scenario, first + second + third)


def test_empty_windows_move_the_state_past_a_gap(scenario: Scenario) -> None:
    run_vars = {**VARS, "visitor_lookup__backfill_limit_days": 20}
    early = [Raw("a1", "c1", "u1", ts("2026-01-02 10:00"), ts("2026-01-02 10:00"))]
    late = [Raw("b1", "c1", "u2", ts("2026-02-15 10:00"), ts("2026-02-15 10:00"))]
    scenario.write_events(early + late)

    # Each run after the first reads the file added since whole and every file after last_success, so
    # nothing but a new event keeps it from warning: twenty days without one are a gap too.
    expected_runs = [
        ((1, ts("2026-01-01"), ts("2026-01-21")), ts("2026-01-02 10:00"), False),
        ((4, ts("2026-01-02 10:00") + MICROSECOND, ts("2026-01-22 10:00")), ts("2026-01-22 10:00"), True),
        ((4, ts("2026-01-22 10:00") + MICROSECOND, ts("2026-02-11 10:00")), ts("2026-02-11 10:00"), True),
        ((4, ts("2026-02-11 10:00") + MICROSECOND, ts("2026-03-03 10:00")), ts("2026-02-15 10:00"), False),
    ]
    for window, last_success, warned in expected_runs:
        # a file without rows each time: the folder changes, so every run reads its range
        scenario.write_events([])
        scenario.dbt("run", vars=run_vars)
        assert limits(scenario) == window
        assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, last_success)
        assert bool(scenario.logged("no events in this run's loaded_at range")) == warned
    assert_matches_reference(scenario, early + late)


def landed_by_file(scenario: Scenario, name: str) -> list[list[dt.datetime]]:
    """Each data file's landed values (UTC, naive) in the order the file holds them, the files by their
    first value."""
    listed = scenario.sql(f"select distinct input_file_name() as file from {{schema}}.{name}")
    files = [pq.read_table(row.file.removeprefix("file:"), columns=["landed"]) for row in listed]
    values = [[landed.replace(tzinfo=None) for landed in file["landed"].to_pylist()] for file in files]
    return sorted((file for file in values if file), key=lambda landed: landed[0])


def test_full_refresh_starts_again_from_start_date(scenario: Scenario) -> None:
    # ids in the opposite order of landed: a build that writes in id order stores them backwards
    late_in_the_day = [
        Raw(f"o{n:02}", "c3", None, ts("2026-01-05 09:00") - dt.timedelta(minutes=n), ts("2026-01-05 10:00"))
        for n in range(20)
    ]
    first = [
        Raw("a1", "c1", "u1", ts("2026-01-05 10:00"), ts("2026-01-05 10:00")),
        Raw("a2", "c1", None, None, ts("2026-01-05 10:00")),
        *late_in_the_day,
    ]
    second = [Raw("b1", "c2", "u2", ts("2026-01-06 10:00"), ts("2026-01-06 10:00"))]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    scenario.write_events(second)
    scenario.dbt("run", vars=VARS)

    stored = stored_events(scenario)
    # refused unless allowed: it would rebuild everything from the raw events
    scenario.dbt("run", "--full-refresh", vars=VARS, ok=False)
    assert scenario.logged(
        "Visitor lookup: --full-refresh would drop and rebuild first_dates, processed_events, "
        "quarantined_events, user_mapping, visitor_lookup_spans, the manifest"
    )
    assert stored_events(scenario) == stored
    # a full refresh of what the incremental set does not hold needs no leave
    scenario.dbt("run", "--full-refresh", "--select", "base_new_event_limits", vars=VARS)

    scenario.dbt("run", "--full-refresh", vars={**VARS, "visitor_lookup__allow_refresh": True})

    assert scenario.logged("Visitor lookup: First run")
    assert limits(scenario) == (1, ts("2026-01-01"), ts("2026-01-31"))
    assert_matches_reference(scenario, first + second)
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, ts("2026-01-06 10:00"))
    # a full build stores the events in landed order, so that each file holds a stretch of time
    stored_in_order = [landed for file in landed_by_file(scenario, "processed_events") for landed in file]
    assert stored_in_order == sorted(event.landed for event in processed_events(first + second).values())


def write_as_writers_do(folder: Path, at: dt.datetime) -> list[Raw]:
    """Good files as other writers write them: times in milliseconds, as INT96, and a loader's extra
    column with the columns in its own order. Returns their events."""
    minute = dt.timedelta(minutes=1)
    millis = [Raw("m1", "c1", "u1", at, at + minute), Raw("m2", "c2", None, at + minute, at + 2 * minute)]
    int96 = [Raw("i1", "c1", "u2", at + 2 * minute, at + 3 * minute)]
    reordered = [Raw("r1", "c3", "u3", at + dt.timedelta(microseconds=5), at + minute)]

    def table(events: list[Raw], unit: str) -> pa.Table:
        zoned = pa.timestamp(unit, tz="UTC")
        types = pa.schema(
            [(name, zoned if name in ("landed", "loaded_at") else pa.string()) for name in Raw._fields]
        )
        return pa.Table.from_pylist([event._asdict() for event in events], schema=types)

    pq.write_table(table(millis, "ms"), folder / "millis.parquet", coerce_timestamps="ms")
    pq.write_table(table(int96, "us"), folder / "int96.parquet", use_deprecated_int96_timestamps=True)
    extra = table(reordered, "us").append_column("page_url", pa.array(["/"]))
    pq.write_table(
        extra.select(["page_url", "loaded_at", "user_id", "landed", "visitor_cookie_id", "event_id"]),
        folder / "reordered.parquet",
    )
    return millis + int96 + reordered


def bad_files(folder: Path) -> list[tuple[Path, str]]:
    """Files nobody meant to drop into the events folder, and what the run must say of each."""
    at = ts("2026-01-06 10:00")
    good = pa.Table.from_pylist([Raw("x1", "c9", "u9", at, at)._asdict()])
    numeric_user = folder / "numeric_user.parquet"
    pq.write_table(good.set_column(2, "user_id", pa.array([7])), numeric_user)
    no_loaded_at = folder / "no_loaded_at.parquet"
    pq.write_table(good.drop_columns(["loaded_at"]), no_loaded_at)
    numbers = folder / "epoch_numbers.parquet"
    pq.write_table(good.set_column(3, "landed", pa.array([1767693600000000])), numbers)
    # as pandas writes times by default: nanosecond timestamps
    nanoseconds = folder / "pandas_default.parquet"
    in_nanoseconds = [
        field.with_type(pa.timestamp("ns")) if field.name in ("landed", "loaded_at") else field
        for field in good.schema
    ]
    pq.write_table(good.cast(pa.schema(in_nanoseconds)), nanoseconds)
    truncated = folder / "truncated.parquet"
    pq.write_table(good, truncated)
    truncated.write_bytes(truncated.read_bytes()[:-200])
    text = folder / "export.csv"
    text.write_text("event_id,visitor_cookie_id\nx1,c9\n")
    return [
        (
            numeric_user,
            "has a column of another type (event_id, visitor_cookie_id, user_id: string; landed, loaded_at: "
            "timestamp)",
        ),
        *(
            (
                path,
                "stores a time (landed, loaded_at) as 64-bit numbers or nanosecond timestamps, which Spark "
                "reads only as numbers (write it again with microsecond timestamps, or map the numbers with "
                "visitor_lookup__event_columns and visitor_lookup__event_file_columns)",
            )
            for path in (numbers, nanoseconds)
        ),
        (no_loaded_at, "has no loaded_at in any of its 1 rows: the column is missing or empty"),
        (truncated, "is not a Parquet file, or was cut short"),
        (text, "is not a Parquet file, or was cut short"),
    ]


@pytest.mark.quick
def test_a_bad_file_stops_the_run_with_a_line_naming_it_and_changes_nothing(
    scenario: Scenario, tmp_path: Path
) -> None:
    at = ts("2026-01-05 10:00")
    first = [Raw("a1", "c1", "u1", at, at), Raw("a2", "c2", None, at, at)]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    before = (stored_events(scenario), scenario.lookup_tables(), scenario.manifest())

    later = [Raw("b1", "c1", "u2", at + dt.timedelta(days=1), at + dt.timedelta(days=1))]
    scenario.write_events(later)
    # Spark lists neither a zero-byte file nor rows in a Parquet file that has none: nothing to lose.
    (scenario.events_dir / "empty.parquet").touch()
    scenario.write_events([])
    set_aside = tmp_path / "set_aside"
    set_aside.mkdir()
    for path, problem in bad_files(set_aside):
        placed = scenario.events_dir / path.name
        path.rename(placed)
        scenario.dbt("run", vars=VARS, ok=False)
        assert scenario.logged(f"{placed.as_posix()} {problem}")
        assert not scenario.logged("at org.apache"), "a Java stack trace in the output"
        assert (stored_events(scenario), scenario.lookup_tables(), scenario.manifest()) == before
        placed.rename(path)

    # Written again the right way, the file's events are read like any other, and so are those of files
    # that other writers wrote their own way.
    fixed = [Raw("x1", "c9", "u9", at + dt.timedelta(days=1), at + dt.timedelta(days=1))]
    scenario.write_events(fixed)
    fixed += write_as_writers_do(scenario.events_dir, at + dt.timedelta(days=1, hours=1))
    scenario.dbt("run", vars=VARS)
    assert_matches_reference(scenario, first + later + fixed)
    assert scenario.lookup_tables() == lookup_tables(processed_events(first + later + fixed).values())


def test_an_event_loaded_in_the_future_is_held_until_a_run_reaches_its_loaded_at(scenario: Scenario) -> None:
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    run_vars = {
        **VARS,
        "visitor_lookup__start_date": str((now - dt.timedelta(days=1)).date()),
        "visitor_lookup__max_clock_skew_minutes": 0,
    }
    hour = dt.timedelta(hours=1)
    real = Raw("r1", "c1", "u1", now - hour, now - hour)
    # A loader's clock decades ahead, and one a little ahead: the second comes due during the test.
    far = Raw("f1", "c2", "u2", now - hour, ts("2099-01-01 00:00"))
    soon = Raw("s1", "c1", "u3", now - hour / 2, now + dt.timedelta(seconds=45))
    seen = [real, far, soon]
    scenario.write_events(seen)

    scenario.dbt("run", vars=run_vars)
    first_run_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    assert first_run_at < soon.loaded_at, "the first run took too long for this test"
    assert (
        stored_quarantine(scenario)
        == quarantined(seen, 0, now)
        == {
            (far, "loaded_at is more than 0 minutes in the future"),
            (soon, "loaded_at is more than 0 minutes in the future"),
        }
    )
    assert stored_events(scenario) == {k: tuple(v) for k, v in processed_events(seen, 0, now).items()}
    # The manifest stays with the real events.
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, real.loaded_at)

    time.sleep((soon.loaded_at - dt.datetime.now(dt.UTC).replace(tzinfo=None)).total_seconds() + 1)
    scenario.dbt("run", vars=run_vars)
    later = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    assert (
        stored_quarantine(scenario)
        == quarantined(seen, 0, later)
        == {(far, "loaded_at is more than 0 minutes in the future")}
    )
    assert stored_events(scenario) == {k: tuple(v) for k, v in processed_events(seen, 0, later).items()}
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen, 0, later).values())
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, soon.loaded_at)
