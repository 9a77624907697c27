"""spec §4 on hand-made cases, each its own test, against the plain-Python reference.

All cases share one scenario (distinct cookies per case) so the five runs
serve every case: three arrival batches, a run with no new data, and a
--full-refresh. Every batch also carries a marker event loaded at noon of its
day, so each run's high-water mark, and the next run's window, are known.
"""

from __future__ import annotations

import datetime as dt

import pytest

from .conftest import LOOKUP_TABLES, Scenario, table_format, ts
from .reference import LookupTables, Raw, lookup_tables, processed_events

# The exact scenarios and the Thrift Server: run on every Spark line (.ci/run); and in the quick set.
pytestmark = [pytest.mark.every_spark_line, pytest.mark.quick]

VARS = {
    "visitor_lookup__start_date": "2026-01-01",
    "visitor_lookup__lookback_window_hours": 6,
}
LOADED = {1: ts("2026-01-05 10:00"), 2: ts("2026-01-06 10:00"), 3: ts("2026-01-07 10:00")}
US = dt.timedelta(microseconds=1)
LONG_ID = "k" * 20_000
ODD_COOKIES = (
    LONG_ID,
    "c\x00nul",
    "c'q\"`\\",
    "c\nin\r\nside",
    "\U0001f36a\U0001f36a",
    "\U0001f36a\U0001f36b",
    "epoch",
)


def ev(
    event_id: str, cookie: str, user: str | None, landed: str, batch: int, loaded: str | None = None
) -> Raw:
    return Raw(event_id, cookie, user, ts(landed), ts(loaded) if loaded else LOADED[batch])


# case name -> (cookies it owns, events per batch)
CASES: dict[str, tuple[tuple[str, ...], dict[int, list[Raw]]]] = {
    "anonymous_only": (
        ("anon",),
        {
            1: [
                ev("anon-1", "anon", None, "2026-01-03 10:00", 1),
                ev("anon-2", "anon", None, "2026-01-03 11:00", 1),
            ]
        },
    ),
    "anonymous_then_login": (
        ("login",),
        {
            1: [
                ev("login-1", "login", None, "2026-01-03 09:00", 1),
                ev("login-2", "login", "u1", "2026-01-03 10:00", 1),
                ev("login-3", "login", None, "2026-01-03 11:00", 1),
            ]
        },
    ),
    "a_to_b": (
        ("ab",),
        {1: [ev("ab-1", "ab", "A", "2026-01-03 10:00", 1), ev("ab-2", "ab", "B", "2026-01-03 11:00", 1)]},
    ),
    "a_b_a": (
        ("aba",),
        {
            1: [
                ev("aba-1", "aba", "A", "2026-01-03 10:00", 1),
                ev("aba-2", "aba", "B", "2026-01-03 11:00", 1),
                ev("aba-3", "aba", None, "2026-01-03 11:30", 1),
                ev("aba-4", "aba", "A", "2026-01-03 12:00", 1),
            ]
        },
    ),
    "same_user_returns_in_a_later_run": (
        ("ret",),
        {
            1: [ev("ret-1", "ret", "A", "2026-01-04 10:00", 1)],
            2: [ev("ret-2", "ret", "A", "2026-01-05 10:00", 2)],
        },
    ),
    "two_users_at_one_instant": (
        ("tie",),
        {
            1: [
                ev("tie-1", "tie", "A", "2026-01-03 10:00", 1),
                ev("tie-2", "tie", "B", "2026-01-03 10:00", 1),
            ],
            2: [ev("tie-0", "tie", "Z", "2026-01-03 10:00", 2)],
            3: [ev("tie-9", "tie", "C", "2026-01-03 10:00", 3)],
        },
    ),
    "two_events_one_microsecond_apart": (
        ("usec",),
        {
            1: [
                ev("usec-1", "usec", "A", "2026-01-03 10:00:00", 1),
                ev("usec-2", "usec", "B", "2026-01-03 10:00:00.000001", 1),
            ]
        },
    ),
    "duplicate_delivered_again_later": (
        ("dup",),
        {
            1: [ev("dup-1", "dup", "A", "2026-01-03 10:00", 1)],
            2: [
                ev("dup-1", "dup", "A", "2026-01-03 10:00", 2),
                ev("dup-1", "dup", "B", "2026-01-03 10:00", 2),
            ],
        },
    ),
    "late_anonymous_event_moves_first_date": (
        ("early",),
        {
            1: [ev("early-1", "early", "A", "2026-01-03 10:00", 1)],
            2: [ev("early-2", "early", None, "2026-01-01 08:00", 2)],
        },
    ),
    "late_other_user_splits_a_row_in_three": (
        ("split",),
        {
            1: [
                ev("split-1", "split", "A", "2026-01-03 10:00", 1),
                ev("split-3", "split", "A", "2026-01-03 14:00", 1),
            ],
            2: [ev("split-2", "split", "B", "2026-01-03 12:00", 2)],
        },
    ),
    "late_other_user_before_first_login": (
        ("before",),
        {
            1: [
                ev("before-1", "before", None, "2026-01-03 08:00", 1),
                ev("before-3", "before", "A", "2026-01-03 10:00", 1),
            ],
            2: [ev("before-2", "before", "B", "2026-01-03 09:00", 2)],
        },
    ),
    "anonymous_for_days_then_late_login": (
        ("days",),
        {
            1: [
                ev("days-1", "days", None, "2026-01-01 10:00", 1),
                ev("days-2", "days", None, "2026-01-03 10:00", 1),
            ],
            3: [ev("days-3", "days", "A", "2026-01-02 12:00", 3)],
        },
    ),
    "loaded_before_high_water_mark_inside_lookback": (
        ("lookback",),
        {
            1: [ev("lookback-1", "lookback", "A", "2026-01-04 09:00", 1)],
            # the first run read up to 2026-01-05 12:00; this one was loaded at 11:00 but arrives now
            2: [ev("lookback-2", "lookback", "B", "2026-01-05 10:30", 2, loaded="2026-01-05 11:00")],
        },
    ),
    "earlier_loaded_copy_moves_an_event_to_another_cookie": (
        ("moved-from", "moved-to"),
        {
            1: [ev("moved-1", "moved-from", "A", "2026-01-03 10:00", 1, loaded="2026-01-05 11:30")],
            2: [ev("moved-1", "moved-to", "B", "2026-01-03 09:00", 2, loaded="2026-01-05 11:00")],
        },
    ),
    # Ids as odd as a browser or a loader may send them, and a page view at the Unix epoch.
    "odd_ids": (
        ODD_COOKIES,
        {
            1: [
                ev("odd-long-cookie", LONG_ID, "u1", "2026-01-03 10:00", 1),
                ev("odd-long-user", "c\x00nul", LONG_ID, "2026-01-03 10:00", 1),
                ev(LONG_ID, "c\x00nul", "u\x00nul", "2026-01-03 11:00", 1),
                ev("odd-quotes", "c'q\"`\\", "u'q\"`\\", "2026-01-03 10:00", 1),
                ev("odd-line-breaks", "c\nin\r\nside", "u\nin side", "2026-01-03 10:00", 1),
                ev("odd-emoji", "\U0001f36a\U0001f36a", "\U0001f9d1\u200d\U0001f4bb", "2026-01-03 10:00", 1),
                ev("odd-emoji-too", "\U0001f36a\U0001f36b", None, "2026-01-03 10:00", 1),
                ev("odd-epoch", "epoch", "u-epoch", "1970-01-01 00:00", 1),
            ],
            2: [ev("odd-epoch-later", "epoch", "u-epoch-2", "2026-01-04 10:00", 2)],
        },
    ),
}


def marker(batch: int) -> Raw:
    noon = LOADED[batch].replace(hour=12)
    return Raw(f"marker-{batch}", "marker", None, noon, noon)


def restricted(tables: LookupTables, cookies: tuple[str, ...]) -> LookupTables:
    return LookupTables(*({row for row in table if row[0] in cookies} for table in tables))


@pytest.fixture(scope="module")
def runs(module_scenario: Scenario) -> list[tuple[LookupTables, LookupTables]]:
    """(tables, reference) after each of the five runs."""
    scenario = module_scenario
    seen: list[Raw] = []
    results = []

    def run(*args: str) -> None:
        scenario.dbt("run", *args, vars={**VARS, "visitor_lookup__allow_refresh": True})
        expected = lookup_tables(processed_events(seen).values())
        results.append((scenario.lookup_tables(), expected))

    for batch in (1, 2, 3):
        events = [marker(batch)] + [e for _, batches in CASES.values() for e in batches.get(batch, [])]
        scenario.write_events(events)
        seen += events
        run()
    run()  # no new data
    scenario.dbt("test", vars=VARS)
    run("--full-refresh")
    scenario.dbt("test", vars=VARS)
    return results


@pytest.mark.parametrize("case", list(CASES))
def test_case(runs: list[tuple[LookupTables, LookupTables]], case: str) -> None:
    cookies = CASES[case][0]
    for number, (tables, expected) in enumerate(runs, start=1):
        assert restricted(tables, cookies) == restricted(expected, cookies), f"after run {number}"


def test_whole_tables_and_the_rows_the_cases_promise(runs: list[tuple[LookupTables, LookupTables]]) -> None:
    for tables, expected in runs:
        assert tables == expected
    final = runs[-1][0]

    def rows(cookie: str) -> list[tuple]:
        return sorted(
            ((r[1], r[2], r[3]) for r in final.visitor_lookup if r[0] == cookie), key=lambda r: r[1]
        )

    watermark = ts("2026-01-07 12:00")
    assert rows("split") == [
        ("A", ts("2026-01-03 10:00"), ts("2026-01-03 12:00") - US),
        ("B", ts("2026-01-03 12:00"), ts("2026-01-03 14:00") - US),
        ("A", ts("2026-01-03 14:00"), watermark),
    ]
    assert rows("before") == [
        ("B", ts("2026-01-03 08:00"), ts("2026-01-03 10:00") - US),
        ("A", ts("2026-01-03 10:00"), watermark),
    ]
    assert rows("tie") == [("C", ts("2026-01-03 10:00"), watermark)]
    assert rows("usec") == [
        ("A", ts("2026-01-03 10:00"), ts("2026-01-03 10:00")),
        ("B", ts("2026-01-03 10:00") + US, watermark),
    ]
    assert rows("days") == [("A", ts("2026-01-01 10:00"), watermark)]
    assert rows("anon") == [(None, ts("2026-01-03 10:00"), watermark)]
    assert rows("moved-from") == []
    assert rows("moved-to") == [("B", ts("2026-01-03 09:00"), watermark)]
    assert len(rows("aba")) == 3


@pytest.mark.parametrize("table", LOOKUP_TABLES)
def test_by_default_merges_mark_rows_on_iceberg_and_rewrite_files_on_delta(
    runs: list[tuple[LookupTables, LookupTables]], module_scenario: Scenario, table: str
) -> None:
    # measured faster for each format (docs/performance.md); set when --full-refresh re-created the tables
    properties = dict(module_scenario.sql(f"show tblproperties {{schema}}.{table}"))
    if table_format() == "delta":
        assert properties["delta.enableDeletionVectors"] == "false", properties
    else:
        modes = {properties[f"write.{action}.mode"] for action in ("delete", "update", "merge")}
        assert modes == {"merge-on-read"}, properties
        assert properties["format-version"] == "3", properties  # deletion vectors, one per data file


@pytest.mark.iceberg_only
@pytest.mark.parametrize("table", ["processed_events", "first_dates", "user_mapping", "visitor_lookup_spans"])
def test_iceberg_tables_cap_parquet_dictionaries_and_row_groups(
    runs: list[tuple[LookupTables, LookupTables]], module_scenario: Scenario, table: str
) -> None:
    # nearly distinct ids give up on their dictionary after 64 KB, not 2 MB; row groups of 8 MB, not
    # 128 MB, skipped by their statistics within a file (docs/design.md, "Old versions")
    properties = dict(module_scenario.sql(f"show tblproperties {{schema}}.{table}"))
    assert properties["write.parquet.dict-size-bytes"] == "65536", properties
    assert properties["write.parquet.row-group-size-bytes"] == "8388608", properties
