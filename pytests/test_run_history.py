"""The run history: one row per run in visitor_lookup_runs, failed runs included, whose counts equal what
the plain-Python reference says each run read and changed."""

from __future__ import annotations

import datetime as dt
import re

from .conftest import LOOKUP_TABLES, Scenario
from .reference import LookupTables, Raw, in_window, invalid_reason, lookup_tables, processed_events
from .test_lookup_properties import VARS, random_arrivals

CHANGES = ("inserted", "updated", "deleted")
Keyed = dict[tuple, tuple]


def keyed(tables: LookupTables) -> dict[str, Keyed]:
    """Each lookup table as its unique key (the prefix follows from the cookie) -> its other columns."""
    return {
        "first_dates": {(cookie,): (first, day) for cookie, first, day, _ in tables.first_dates},
        "user_mapping": {
            (cookie, start): (user, end, current)
            for cookie, user, start, end, current, _ in tables.user_mapping
        },
        # The table behind the view keeps a current span's end NULL; the view ends it at the watermark.
        "visitor_lookup_spans": {
            (cookie, start): (user, None if current else end, current, day)
            for cookie, user, start, end, current, day, _ in tables.visitor_lookup
        },
    }


def changes(before: Keyed | None, after: Keyed) -> dict[str, int | None]:
    """Rows inserted, updated and deleted; a table built anew (before is None): its rows, inserted."""
    if before is None:
        return {"inserted": len(after), "updated": None, "deleted": None}
    return {
        "inserted": len(after.keys() - before.keys()),
        "updated": sum(before[key] != after[key] for key in before.keys() & after.keys()),
        "deleted": len(before.keys() - after.keys()),
    }


def window_counts(
    events: list[Raw], lower: dt.datetime, upper: dt.datetime, added: list[Raw] | None = None
) -> dict[str, int]:
    """What a run over [lower, upper] reads of these events; with `added`, the events of the files new since
    the last run that completed, it reads those files whole and in the others only that range (spec §5)."""
    if added is None:
        read = [event for event in events if in_window(event, lower, upper)]
    else:
        start = dt.datetime.fromisoformat(VARS["visitor_lookup__start_date"])
        assert events[len(events) - len(added) :] == added, "the added files' events come last"
        kept = events[: len(events) - len(added)]
        read = [event for event in kept if event.loaded_at is not None and lower <= event.loaded_at <= upper]
        read += [event for event in added if in_window(event, start, upper)]
    valid = [event for event in read if invalid_reason(event) is None]
    distinct = len({event.event_id for event in valid})
    return {
        "events_read": len(read),
        "valid_events": distinct,
        "duplicate_copies": len(valid) - distinct,
        "quarantined_events": len(read) - len(valid),
    }


def touched_cookies(before: list[Raw], after: list[Raw]) -> int:
    """Cookies of the events a run stores anew, and of the copies those replace."""
    stored, now = processed_events(before), processed_events(after)
    cookies = {event.visitor_cookie_id for key, event in now.items() if stored.get(key) != event}
    cookies |= {event.visitor_cookie_id for key, event in stored.items() if now[key] != event}
    return len(cookies)


def logged_result(scenario: Scenario, model: str, result: str) -> bool:
    """Whether dbt's line for the model's result starts with `result` (dbt prints it in brackets)."""
    line = re.compile(rf"{scenario.schema}\.{model} [ .]*\[{re.escape(result)}")
    return any(line.search(re.sub(r"\x1b\[[0-9;]*m", "", text)) for text in scenario.log_lines)


class History:
    """The rows the runs so far must have written, built from the reference run by run."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.stored: dict[str, Keyed | None] = dict.fromkeys(LOOKUP_TABLES)
        self.expected: list[dict] = []

    def rows(self) -> list[dict]:
        return [
            row.asDict()
            for row in self.scenario.sql("select * from {schema}.visitor_lookup_runs order by started_at")
        ]

    def latest(self) -> dict:
        recorded = {row["invocation_id"] for row in self.expected}
        (row,) = [row for row in self.rows() if row["invocation_id"] not in recorded]
        return row

    def ran(
        self,
        before: list[Raw],
        seen: list[Raw],
        merged: tuple[str, ...],
        added: list[Raw] | None = None,
        **values: object,
    ) -> dict:
        """The row of the run just done, checked: `seen` are the events it could read, `before` those
        stored through the last run every model succeeded in (a run also touches the cookies of what
        runs that failed half-way stored), `merged` the lookup tables it merged, `added` the events of
        the files new since the last run that completed."""
        row = self.latest()
        expected = {**row, **values}
        if row["lower_limit"] is not None:
            expected |= window_counts(seen, row["lower_limit"], row["upper_limit"], added)
            expected["cookies_touched"] = touched_cookies(before, seen)
        reference = keyed(lookup_tables(processed_events(seen).values()))
        for name in LOOKUP_TABLES:
            counts = changes(self.stored[name], reference[name]) if name in merged else dict.fromkeys(CHANGES)
            expected |= {f"{name}_{change}": count for change, count in counts.items()}
            if name in merged:
                self.stored[name] = reference[name]
        assert row == expected
        assert row["started_at"] < row["ended_at"]
        if self.expected:
            assert self.expected[-1]["ended_at"] < row["started_at"]
        assert row["command"] == "dbt run"
        self.expected.append(row)
        return row


def test_every_run_gets_a_row_with_what_it_read_and_changed(scenario: Scenario) -> None:
    first, second, third = random_arrivals(seed=5, batches=3)
    # a new cookie, anonymous: the third run has a span to write, and no user to change
    latest = max((raw for raw in third if raw.loaded_at and raw.landed), key=lambda raw: raw.loaded_at)
    third = [*third, Raw("new-span", "new-cookie", None, latest.landed, latest.loaded_at)]
    expired = 0  # the default retention: nothing is due yet
    history = History(scenario)

    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    row = history.ran(
        [],
        first,
        LOOKUP_TABLES,
        run_number=1,
        state=1,
        state_name="first run",
        status="success",
        failed_nodes=[],
        compactions=0,
        snapshots_expired=expired,
    )
    assert logged_result(scenario, "first_dates", f"{row['first_dates_inserted']} inserted in ")

    # compaction after every merge: each lookup table's result and row say so
    scenario.write_events(second)
    scenario.dbt("run", vars={**VARS, "visitor_lookup__compact_at_files_per_partition": 1})
    compacted = [f"{scenario.schema}.{name}:" for name in LOOKUP_TABLES]
    compactions = len(
        [line for line in scenario.logged("Visitor lookup: compacted ") if line.split()[3] in compacted]
    )
    row = history.ran(
        first,
        first + second,
        LOOKUP_TABLES,
        added=second,
        run_number=2,
        state=4,
        state_name="standard",
        status="success",
        failed_nodes=[],
        compactions=compactions,
        snapshots_expired=expired,
    )
    assert compactions > 0
    assert logged_result(
        scenario,
        "user_mapping",
        f"{row['user_mapping_inserted']} inserted, {row['user_mapping_updated']} updated, "
        f"{row['user_mapping_deleted']} deleted, 1 compaction (",
    )

    # the spans' merge fails: first_dates and user_mapping are merged (this batch changes no user), the
    # spans, which have the new cookie's span to write, fail
    scenario.write_events(third)
    with scenario.table_replaced_by_incompatible_one("visitor_lookup_spans"):
        scenario.dbt("run", vars=VARS, ok=False)
    history.ran(
        first + second,
        first + second + third,
        ("first_dates", "user_mapping"),
        added=third,
        run_number=3,
        state=4,
        state_name="standard",
        status="failed",
        failed_nodes=["visitor_lookup_spans"],
        compactions=0,
        snapshots_expired=expired,
    )

    # the next run repairs what the failed one left; first_dates already holds it
    scenario.dbt("run", vars=VARS)
    history.ran(
        first + second,
        first + second + third,
        LOOKUP_TABLES,
        added=third,
        run_number=4,
        state=3,
        state_name="out of sync",
        status="success",
        failed_nodes=[],
        compactions=0,
        snapshots_expired=expired,
    )

    # a run stopped before any model (here by a bad var) changes nothing: dbt runs no on-run-end then
    scenario.dbt("run", vars={**VARS, "visitor_lookup__lock_lease_minutes": 0}, ok=False)
    assert history.rows() == history.expected

    # the analysis shows the runs, newest first, with how long each took
    scenario.dbt("show", "--select", "recent_runs", "--limit", "10", vars=VARS)
    shown = [line for text in scenario.log_lines for line in text.splitlines() if line.startswith("| ")]
    header, _rule, *rows = [[cell.strip() for cell in line.strip("| ").split(" | ")] for line in shown]
    columns = [dict(zip(header, row, strict=True)) for row in rows]
    assert header[:4] == ["run_number", "started_at", "seconds", "status"], header
    assert [(run["run_number"], run["status"]) for run in columns] == [
        ("4", "success"),
        ("3", "failed"),
        ("2", "success"),
        ("1", "success"),
    ]
    expected = [(row["ended_at"] - row["started_at"]).total_seconds() for row in reversed(history.expected)]
    assert [float(run["seconds"]) for run in columns] == [round(seconds, 1) for seconds in expected]
