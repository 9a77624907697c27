"""Write realistic page-view Parquet files, one file per arrival batch.

The events cover the ``--days`` before ``--end`` (default: now, UTC). Event
and cookie ids are random UUIDs (version 4), as Snowplow's trackers send
them: no order of theirs follows time, so nothing that prunes by minimum
and maximum gains from them. Each cookie starts anonymous; some log in,
some switch users (shared devices), some go back to an earlier user.
Around them: late events (landed days before they were loaded),
re-delivered duplicates, stragglers (loaded inside one batch's range but
delivered with the next file, which the lookback window must catch), padded
and blank ids, and a few invalid rows of every kind.

Batch ``k`` holds the events whose ``loaded_at`` falls in the k-th slice of
the span, so dropping the files one by one into the events folder replays
arrival order.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import shutil
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("visitor_cookie_id", pa.string()),
        ("user_id", pa.string()),
        ("landed", pa.timestamp("us", tz="UTC")),
        ("loaded_at", pa.timestamp("us", tz="UTC")),
    ]
)

Event = tuple[str | None, str | None, str | None, dt.datetime | None, dt.datetime | None]


@dataclass(frozen=True)
class Mix:
    """Shares of each kind of event, as probabilities per generated event."""

    logged_in_cookie: float = 0.45
    user_switch: float = 0.12
    late: float = 0.02
    duplicate: float = 0.01
    straggler: float = 0.005
    invalid: float = 0.002
    padded_id: float = 0.01


def random_id(rng: random.Random) -> str:
    """A random UUID (version 4), drawn from rng so that a seed gives the same ids."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _timeline(
    rng: random.Random, start: dt.datetime, span: dt.timedelta, mix: Mix, users_pool: int
) -> list[tuple[dt.datetime, str | None]]:
    """Who is logged in on one cookie over time: [(from, user or None)]."""
    phases: list[tuple[dt.datetime, str | None]] = [(start, None)]
    if rng.random() < mix.logged_in_cookie:
        users = [f"u{rng.randrange(users_pool):07d}"]
        if rng.random() < mix.user_switch:
            users.append(f"u{rng.randrange(users_pool):07d}")
            if rng.random() < 0.3:
                users.append(users[0])
        for user in users:
            phases.append((phases[-1][0] + span * rng.random() / len(users), user))
    return phases


def _invalid(rng: random.Random, event: Event, skew: dt.timedelta) -> Event:
    event_id, cookie, user, landed, loaded_at = event
    kind = rng.randrange(6)
    if kind == 0:
        return (event_id, None, user, landed, loaded_at)
    if kind == 1:
        return (event_id, "   ", user, landed, loaded_at)
    if kind == 2:
        return (None, cookie, user, landed, loaded_at)
    if kind == 3:
        return (event_id, cookie, user, None, loaded_at)
    if kind == 4:
        return (event_id, cookie, user, landed, None)
    assert loaded_at is not None
    return (event_id, cookie, user, loaded_at + skew + dt.timedelta(minutes=5), loaded_at)


def generate(
    events: int, end: dt.datetime, days: float, seed: int, mix: Mix = Mix()
) -> Iterator[tuple[Event, bool]]:
    """Yield (event, is_straggler) for ``events`` page views, in no particular order."""
    rng = random.Random(seed)
    span = dt.timedelta(days=days)
    start = end - span
    users_pool = max(2, events // 25)  # small enough that users come back on other devices
    made = 0
    while made < events:
        cookie = random_id(rng)
        first = start + span * rng.random()
        lifetime = min(end - first, dt.timedelta(days=rng.expovariate(1 / 1.5)))
        phases = _timeline(rng, first, lifetime, mix, users_pool)
        for _ in range(min(events - made, 1 + int(rng.expovariate(1 / 7)))):
            landed = first + lifetime * rng.random()
            user = next(u for t, u in reversed(phases) if t <= landed)
            if user is not None and rng.random() < 0.35:
                user = None  # a page view of a logged-in visitor without the id
            if user is not None and rng.random() < mix.padded_id:
                user = f" {user} "
            elif user is None and rng.random() < mix.padded_id:
                user = ""
            delay = dt.timedelta(seconds=rng.expovariate(1 / 90))
            if rng.random() < mix.late:
                delay += dt.timedelta(days=rng.uniform(1, 4))
            loaded_at = min(landed + delay, end)
            event: Event = (random_id(rng), cookie, user, landed, loaded_at)
            if rng.random() < mix.invalid:
                event = _invalid(rng, event, dt.timedelta(minutes=10))
            made += 1
            yield event, rng.random() < mix.straggler
            if rng.random() < mix.duplicate and loaded_at < end:
                redelivered = min(loaded_at + dt.timedelta(hours=rng.uniform(0, 30)), end)
                yield (event[0], event[1], event[2], event[3], redelivered), False


# Events held in memory before each batch's share goes to a part file: a history of 100 M events held
# whole would need more memory than the machine has.
HELD_EVENTS = 2_000_000


def _events_table(rows: list[Event]) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in SCHEMA.names]
    return pa.table(dict(zip(SCHEMA.names, columns, strict=True)), schema=SCHEMA)


def write_batches(
    out: Path, events: int, batches: int, end: dt.datetime, days: float, seed: int, progress: bool
) -> list[Path]:
    """Write ``batches`` Parquet files under ``out``; return their paths in arrival order."""
    start = end - dt.timedelta(days=days)
    slice_seconds = (end - start).total_seconds() / batches
    buckets: list[list[Event]] = [[] for _ in range(batches)]
    out.mkdir(parents=True, exist_ok=True)
    parts_folder = out / "parts"
    parts: list[list[Path]] = [[] for _ in range(batches)]
    held = 0
    step = max(1, events // 20)
    for count, (event, straggler) in enumerate(generate(events, end, days, seed), start=1):
        loaded_at = event[4]
        if loaded_at is None:
            index = count % batches
        else:
            index = min(batches - 1, int((loaded_at - start).total_seconds() // slice_seconds))
            if straggler:
                index = min(batches - 1, index + 1)
        buckets[index].append(event)
        held += 1
        if held == HELD_EVENTS:
            parts_folder.mkdir(exist_ok=True)
            for number, rows in enumerate(buckets):
                if rows:
                    part = parts_folder / f"batch_{number + 1:04d}_{len(parts[number]):04d}.parquet"
                    pq.write_table(_events_table(rows), part)
                    parts[number].append(part)
                    rows.clear()
            held = 0
        if progress and count % step == 0:
            print(f"generated {count:,} / ~{events:,} events", file=sys.stderr, flush=True)
    paths = []
    for index, rows in enumerate(buckets, start=1):
        path = out / f"batch_{index:04d}.parquet"
        # the parts in the order they were written, then the rest: the rows in the order they were made
        table = pa.concat_tables([*map(pq.read_table, parts[index - 1]), _events_table(rows)])
        pq.write_table(table.combine_chunks(), path)
        paths.append(path)
        if progress:
            print(f"wrote {path} ({table.num_rows:,} rows)", file=sys.stderr, flush=True)
    shutil.rmtree(parts_folder, ignore_errors=True)
    return paths


def _utc(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text)
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/incoming"), help="folder to write")
    parser.add_argument("--events", type=int, default=20_000, help="page views to generate")
    parser.add_argument("--batches", type=int, default=5, help="arrival batches (files)")
    parser.add_argument("--days", type=float, default=7.0, help="days of history before --end")
    parser.add_argument("--end", type=_utc, default=None, help="last instant, ISO (default: now)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--progress", action="store_true", help="report progress on stderr")
    args = parser.parse_args(argv)
    if args.events < 1 or args.batches < 1 or args.days <= 0:
        parser.error("--events and --batches must be at least 1 and --days positive")
    end = args.end or dt.datetime.now(dt.UTC).replace(microsecond=0)
    for path in write_batches(args.out, args.events, args.batches, end, args.days, args.seed, args.progress):
        print(path)


if __name__ == "__main__":
    main()
