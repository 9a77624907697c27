"""Page views written in the warehouse layouts of the trackers teams use, and what each preset reads of them.

A tracker's rows carry the five columns of an event under its own names, among columns the pipeline does
not read, and beside events that are not page views. Each writer returns the Arrow table a tracker's loader
would write for these page views, and `page_views` is what the reference takes as the events: the page views
as the preset maps them, worked out here in Python, apart from the SQL.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random

import pyarrow as pa

from .reference import Raw, normalise_id

UTC = dt.UTC
MICROS = pa.timestamp("us", tz="UTC")


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    return value.replace(tzinfo=UTC) if value is not None else None


def snowplow(events: list[Raw], seed: int) -> pa.Table:
    """atomic.events: page views among page pings (whose users must not count); derived_tstamp
    missing on some rows, where collector_tstamp stands in for it."""
    rng = random.Random(seed)
    rows = []
    for event in events:
        derived = rng.random() < 0.8
        rows.append(
            {
                "app_id": "site",
                "event_id": event.event_id,
                "event_name": "page_view",
                "domain_userid": event.visitor_cookie_id,
                "user_id": event.user_id,
                # the collector's clock is not the event's: a wrong choice of timestamp shows
                "collector_tstamp": event.landed + dt.timedelta(seconds=7 if derived else 0),
                "derived_tstamp": event.landed if derived else None,
                "load_tstamp": event.loaded_at,
                "page_urlpath": "/",
            }
        )
        if rng.random() < 0.3:
            ping = {"event_id": f"pp-{event.event_id}", "event_name": "page_ping", "user_id": "pinger"}
            rows.append({**rows[-1], **ping})
    return pa.Table.from_pylist(
        [
            {**row, **{k: _utc(row[k]) for k in ("collector_tstamp", "derived_tstamp", "load_tstamp")}}
            for row in rows
        ],
        schema=pa.schema(
            [
                ("app_id", pa.string()),
                ("event_id", pa.string()),
                ("event_name", pa.string()),
                ("domain_userid", pa.string()),
                ("user_id", pa.string()),
                ("collector_tstamp", MICROS),
                ("derived_tstamp", MICROS),
                ("load_tstamp", MICROS),
                ("page_urlpath", pa.string()),
            ]
        ),
    )


def page_calls(events: list[Raw], seed: int) -> pa.Table:
    """Segment's and RudderStack's `pages`: received_at (the collector's) is not the load time, uuid_ts is."""
    rng = random.Random(seed)
    rows = [
        {
            "id": event.event_id,
            "anonymous_id": event.visitor_cookie_id,
            "user_id": event.user_id,
            "context_page_path": "/",
            "received_at": _utc(event.loaded_at - dt.timedelta(minutes=rng.randrange(1, 90)))
            if event.loaded_at
            else None,
            "timestamp": _utc(event.landed),
            "uuid_ts": _utc(event.loaded_at),
        }
        for event in events
    ]
    return pa.Table.from_pylist(
        rows,
        schema=pa.schema(
            [
                ("id", pa.string()),
                ("anonymous_id", pa.string()),
                ("user_id", pa.string()),
                ("context_page_path", pa.string()),
                ("received_at", MICROS),
                ("timestamp", MICROS),
                ("uuid_ts", MICROS),
            ]
        ),
    )


def ga4(rows: list[dict]) -> pa.Table:
    """The daily export's columns the preset reads, among others (event_params nested, event_date)."""
    value = pa.struct([("string_value", pa.string())])
    params = pa.list_(pa.struct([("key", pa.string()), ("value", value)]))
    return pa.Table.from_pylist(
        [
            {
                "event_date": row["event_timestamp"] // 86_400_000_000,
                "event_params": [{"key": "page_location", "value": {"string_value": "/"}}],
                "batch_event_index": row.get("batch_event_index", 1),
                **row,
                "loaded_at": _utc(row["loaded_at"]),
            }
            for row in rows
        ],
        schema=pa.schema(
            [
                ("event_date", pa.int64()),
                ("event_timestamp", pa.int64()),
                ("event_name", pa.string()),
                ("event_params", params),
                ("event_bundle_sequence_id", pa.int64()),
                ("batch_event_index", pa.int64()),
                ("stream_id", pa.string()),
                ("user_pseudo_id", pa.string()),
                ("user_id", pa.string()),
                ("loaded_at", MICROS),
            ]
        ),
    )


def ga4_page_views(rows: list[dict]) -> list[Raw]:
    """The page views of GA4 rows as the preset maps them: an id from the columns that identify an event,
    the cookie from the pseudo id and the stream (none when the pseudo id is blank)."""
    epoch = dt.datetime(1970, 1, 1)
    views = []
    for row in rows:
        if row["event_name"] != "page_view":
            continue
        parts = [
            row["stream_id"],
            row["user_pseudo_id"],
            str(row["event_timestamp"]),
            row["event_name"],
            str(row["event_bundle_sequence_id"]),
            str(row.get("batch_event_index", 1)),
        ]
        event_id = hashlib.md5("|".join(part or "" for part in parts).encode()).hexdigest()
        pseudo = normalise_id(row["user_pseudo_id"])
        cookie = f"{pseudo}.{row['stream_id']}" if pseudo is not None else None
        landed = epoch + dt.timedelta(microseconds=row["event_timestamp"])
        views.append(Raw(event_id, cookie, row["user_id"], landed, row["loaded_at"]))
    return views


WRITERS = {"snowplow": snowplow, "segment": page_calls, "rudderstack": page_calls}
