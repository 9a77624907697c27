"""Plain-Python reference of the contract (docs/specification.md, spec §3 and §5), written apart from the SQL.

Events are tuples (event_id, visitor_cookie_id, user_id, landed, loaded_at)
with naive UTC datetimes, exactly as written to Parquet.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import NamedTuple

WHITESPACE = " \t\n\x0b\f\r"


class Raw(NamedTuple):
    event_id: str | None
    visitor_cookie_id: str | None
    user_id: str | None
    landed: dt.datetime | None
    loaded_at: dt.datetime | None


class Clean(NamedTuple):
    event_id: str
    visitor_cookie_id: str
    user_id: str | None
    landed: dt.datetime
    loaded_at: dt.datetime


def normalise_id(value: str | None) -> str | None:
    if value is None:
        return None
    stripped = value.strip(WHITESPACE)
    return stripped or None


def invalid_reason(event: Raw, max_skew_minutes: int = 10, now: dt.datetime | None = None) -> str | None:
    """Why the event is invalid when read at `now` (any time after its loaded_at when None)."""
    if normalise_id(event.visitor_cookie_id) is None:
        return "visitor_cookie_id is null or blank"
    if event.event_id is None:
        return "event_id is null"
    if event.landed is None:
        return "landed is null"
    if event.loaded_at is None:
        return "loaded_at is null"
    if event.landed > event.loaded_at + dt.timedelta(minutes=max_skew_minutes):
        return f"landed is more than {max_skew_minutes} minutes after loaded_at"
    if now is not None and event.loaded_at > now + dt.timedelta(minutes=max_skew_minutes):
        return f"loaded_at is more than {max_skew_minutes} minutes in the future"
    return None


def in_window(event: Raw, lower: dt.datetime, upper: dt.datetime) -> bool:
    return event.loaded_at is None or lower <= event.loaded_at <= upper


def clean(event: Raw) -> Clean:
    assert event.event_id and event.landed and event.loaded_at
    cookie = normalise_id(event.visitor_cookie_id)
    assert cookie is not None
    return Clean(event.event_id, cookie, normalise_id(event.user_id), event.landed, event.loaded_at)


def _precedence(event: Clean) -> tuple:
    return (event.loaded_at, event.landed, event.visitor_cookie_id, event.user_id or "")


def processed_events(
    events: Iterable[Raw], max_skew_minutes: int = 10, now: dt.datetime | None = None
) -> dict[str, Clean]:
    """The valid events, one per event_id: the copy with the smallest loaded_at."""
    kept: dict[str, Clean] = {}
    for event in events:
        if invalid_reason(event, max_skew_minutes, now) is not None:
            continue
        candidate = clean(event)
        current = kept.get(candidate.event_id)
        if current is None or _precedence(candidate) < _precedence(current):
            kept[candidate.event_id] = candidate
    return kept


def quarantined(
    events: Iterable[Raw], max_skew_minutes: int = 10, now: dt.datetime | None = None
) -> set[tuple[Raw, str]]:
    """Each distinct invalid received row with its reason."""
    return {
        (event, reason)
        for event in events
        if (reason := invalid_reason(event, max_skew_minutes, now)) is not None
    }


class Limits(NamedTuple):
    state: int
    lower: dt.datetime
    upper: dt.datetime


def run_limits(
    manifest: dict[str, dt.datetime],
    models: Iterable[str],
    start: dt.datetime,
    now: dt.datetime,
    backfill_days: int,
    lookback_hours: int,
) -> Limits:
    """spec §5, the four states."""
    backfill = dt.timedelta(days=backfill_days)
    lookback = dt.timedelta(hours=lookback_hours)
    stamps = [manifest[m] for m in models if m in manifest]
    if not stamps:
        return Limits(1, start, min(now, start + backfill))
    low, high = min(stamps), max(stamps)
    if len(stamps) < len(list(models)):
        return Limits(2, start, min(high, start + backfill))
    if low < high:
        return Limits(3, low - lookback, min(high, low + backfill))
    return Limits(4, high - lookback, min(now, high + backfill))


MICROSECOND = dt.timedelta(microseconds=1)


class LookupTables(NamedTuple):
    first_dates: set[tuple]  # (cookie, first_date, first_day, prefix)
    user_mapping: set[tuple]  # (cookie, user, start, end, is_current, prefix)
    visitor_lookup: set[tuple]  # (cookie, user, start, end, is_current, start_day, prefix)


def lookup_tables(events: Iterable[Clean], prefix_length: int = 2) -> LookupTables:
    """spec §4 for a set of valid, deduplicated events."""
    by_cookie: dict[str, list[Clean]] = {}
    for event in events:
        by_cookie.setdefault(event.visitor_cookie_id, []).append(event)
    if not by_cookie:
        return LookupTables(set(), set(), set())
    watermark = max(e.landed for evs in by_cookie.values() for e in evs)
    first_dates, user_mapping, visitor_lookup = set(), set(), set()
    for cookie, cookie_events in by_cookie.items():
        prefix = cookie[:prefix_length]
        first = min(e.landed for e in cookie_events)
        first_dates.add((cookie, first, first.date(), prefix))

        deciding_event: dict[dt.datetime, Clean] = {}
        for event in cookie_events:
            if event.user_id is None:
                continue
            current = deciding_event.get(event.landed)
            if current is None or event.event_id > current.event_id:
                deciding_event[event.landed] = event
        starts: list[tuple[dt.datetime, str]] = []
        for instant in sorted(deciding_event):
            user = deciding_event[instant].user_id
            assert user is not None
            if not starts or starts[-1][1] != user:
                starts.append((instant, user))

        if not starts:
            visitor_lookup.add((cookie, None, first, watermark, True, first.date(), prefix))
            continue
        for position, (start, user) in enumerate(starts):
            is_current = position == len(starts) - 1
            end = None if is_current else starts[position + 1][0] - MICROSECOND
            user_mapping.add((cookie, user, start, end, is_current, prefix))
            lookup_start = first if position == 0 else start
            lookup_end = watermark if is_current else end
            visitor_lookup.add(
                (cookie, user, lookup_start, lookup_end, is_current, lookup_start.date(), prefix)
            )
    return LookupTables(first_dates, user_mapping, visitor_lookup)
