"""The property that matters most: incremental equals a rebuild, whatever the batching or failures."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import random

import pytest

from .conftest import INCREMENTAL_MODELS, LOOKUP_TABLES, Scenario, table_format, ts
from .reference import Raw, lookup_tables, processed_events
from .trackers import WRITERS

VARS = {
    "visitor_lookup__start_date": "2026-01-01",
    "visitor_lookup__lookback_window_hours": 24,
}


def random_arrivals(seed: int, events: int = 160, batches: int = 4) -> list[list[Raw]]:
    """Random page views in arrival batches: late, duplicated, conflicting, straggling, invalid."""
    rng = random.Random(seed)
    start = ts("2026-01-03 00:00")
    cookies = [f"{rng.choice('ab')}{n}" for n in range(14)]
    users = ["ann", "bob", "cy", "dee"]
    rows: list[Raw] = []
    for number in range(events):
        landed = start + dt.timedelta(minutes=rng.randrange(3 * 24 * 60))
        if rng.random() < 0.05:
            landed += dt.timedelta(microseconds=rng.choice([1, 2]))
        delay = dt.timedelta(minutes=rng.randrange(1, 30))
        if rng.random() < 0.15:
            delay += dt.timedelta(days=rng.uniform(1, 3))  # late: landed long before it loaded
        user = rng.choice(users) if rng.random() < 0.4 else None
        rows.append(Raw(f"e{number:04d}", rng.choice(cookies), user, landed, landed + delay))
    for original in rng.sample(rows, 20):  # copies: identical or not, loaded later or earlier
        shift = dt.timedelta(minutes=rng.choice([-50, -20, 30, 300]))
        user = original.user_id if rng.random() < 0.5 else rng.choice(users)
        cookie = original.visitor_cookie_id if rng.random() < 0.7 else rng.choice(cookies)
        assert original.loaded_at is not None
        rows.append(
            original._replace(visitor_cookie_id=cookie, user_id=user, loaded_at=original.loaded_at + shift)
        )
    for original in rng.sample(rows, 8):  # invalid ones
        rows.append(original._replace(event_id=f"bad-{original.event_id}", visitor_cookie_id=" "))
    rows.sort(key=lambda r: r.loaded_at or start)
    cuts = sorted(rng.sample(range(1, len(rows)), batches - 1))
    arrivals = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)], strict=True)]
    for earlier, later in itertools.pairwise(arrivals):  # stragglers, inside the lookback
        high_water = max(r.loaded_at for r in earlier if r.loaded_at)
        for row in [r for r in earlier if r.loaded_at and r.loaded_at > high_water - dt.timedelta(hours=1)][
            :2
        ]:
            if row.loaded_at != high_water:
                earlier.remove(row)
                later.append(row)
    return arrivals


@pytest.mark.slow
# The format's default write mode, every lookup table compacted once a merge leaves it more than one file;
# and merge-on-read (on Delta, deletion vectors) with partitions, compacted at the default count. The page
# views come in a tracker's layout, through its preset (pytests/trackers.py).
# On every Spark line (.ci/run): random batches are where a line's SQL or format version could part from the
# reference. On the other line each format runs one of the two, so that each format and each case runs
# there: merge-on-read on Delta, whose deletion vectors are the line's Delta version's own. The repairs
# below run the same statements as any run; what they add is the project's logic.
@pytest.mark.parametrize(
    ("seed", "partitioned", "write_mode", "compact_at", "preset"),
    [
        pytest.param(
            11,
            False,
            "",
            1,
            "snowplow",
            marks=[pytest.mark.quick, pytest.mark.every_spark_line(on="iceberg")],
        ),
        pytest.param(
            29, True, "merge-on-read", None, "segment", marks=pytest.mark.every_spark_line(on="delta")
        ),
    ],
)
def test_random_batches_equal_the_reference_after_every_run(
    scenario: Scenario, seed: int, partitioned: bool, write_mode: str, compact_at: int | None, preset: str
) -> None:
    run_vars = {
        **VARS,
        "visitor_lookup__partition_lookup_tables": partitioned,
        "visitor_lookup__lookup_write_mode": write_mode,
        "visitor_lookup__events_preset": preset,
    }
    if compact_at is not None:
        run_vars["visitor_lookup__compact_at_files_per_partition"] = compact_at
    arrivals = random_arrivals(seed)
    seen: list[Raw] = []
    compacted: list[str] = []
    for number, batch in enumerate(arrivals):
        scenario.write_table(WRITERS[preset](batch, seed=seed + number))
        seen += batch
        scenario.dbt("run", vars=run_vars)
        assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
        if table_format() == "delta":
            # Delta's compaction check (DESCRIBE DETAIL) follows a merge, not the build: only merges fragment
            checks = scenario.logged(f"describe detail {scenario.schema}.")
            assert bool(checks) == (number > 0), (number, checks)
        compacted += scenario.logged("Visitor lookup: compacted ")
        for name in LOOKUP_TABLES:
            data_files, deletes = scenario.data_files_and_deletes(name)
            if compact_at == 1:
                assert (data_files, deletes) == (1, 0), name  # unpartitioned: one file
            # deletion vectors (Iceberg's format 3, Delta's): one per data file at most, whatever the merges
            assert deletes <= data_files, name
    assert scenario.is_partitioned("user_mapping") == partitioned
    if compact_at == 1:
        compacted_tables = {
            name for name in LOOKUP_TABLES for line in compacted if f"{scenario.schema}.{name}: " in line
        }
        # Merge-on-read (Iceberg's default) leaves a delete file with every change; copy-on-write (Delta's)
        # rewrites the table's one file, so only appended inserts fragment it, and in these batches
        # first_dates gets no new cookie after the first run.
        expected = (
            set(LOOKUP_TABLES) if table_format() == "iceberg" else {"user_mapping", "visitor_lookup_spans"}
        )
        assert compacted_tables == expected, compacted
    scenario.dbt("test", vars={**run_vars, "visitor_lookup__test_scope": "all"})
    incremental = scenario.lookup_tables()

    # the same events in a single batch give the same tables
    scenario.target_schema += "_one_batch"
    scenario.schema = f"{scenario.target_schema}_visitor_lookup"
    scenario.events_dir = scenario.events_dir.with_name("events_one_batch")
    scenario.events_dir.mkdir()
    scenario.write_table(WRITERS[preset]([row for batch in arrivals for row in batch], seed=seed))
    scenario.dbt("run", vars=run_vars)
    assert scenario.lookup_tables() == incremental


def test_failure_after_first_dates_is_repaired_by_the_next_run(scenario: Scenario) -> None:
    first = [
        Raw("a1", "c1", "ann", ts("2026-01-03 10:00"), ts("2026-01-05 10:00")),
        Raw("a2", "c1", "bob", ts("2026-01-03 14:00"), ts("2026-01-05 10:00")),
        Raw("a3", "c2", None, ts("2026-01-03 10:00"), ts("2026-01-05 10:00")),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)

    second = [
        Raw("b1", "c1", "cy", ts("2026-01-03 12:00"), ts("2026-01-06 10:00")),
        Raw("b2", "c1", None, ts("2026-01-02 09:00"), ts("2026-01-06 10:00")),
        Raw("b3", "c2", "dee", ts("2026-01-04 09:00"), ts("2026-01-06 10:00")),
    ]
    scenario.write_events(second)
    # user_mapping's merge fails: first_dates merges, user_mapping and what follows do not
    with scenario.table_replaced_by_incompatible_one("user_mapping"):
        scenario.dbt("run", vars=VARS, ok=False)
    assert scenario.manifest() == {
        **dict.fromkeys(INCREMENTAL_MODELS, ts("2026-01-06 10:00")),
        "user_mapping": ts("2026-01-05 10:00"),
        "visitor_lookup_spans": ts("2026-01-05 10:00"),
    }

    scenario.dbt("run", vars=VARS)

    assert scenario.logged("Visitor lookup: Incremental models out of sync")
    assert scenario.lookup_tables() == lookup_tables(processed_events(first + second).values())
    assert scenario.manifest() == dict.fromkeys(INCREMENTAL_MODELS, ts("2026-01-06 10:00"))
    scenario.dbt("test", vars=VARS)


def test_a_run_that_died_before_on_run_end_is_repaired_and_rereads_touch_nothing(scenario: Scenario) -> None:
    first = [
        Raw("a1", "c1", "ann", ts("2026-01-03 10:00"), ts("2026-01-05 10:00")),
        Raw("a2", "c2", None, ts("2026-01-03 11:00"), ts("2026-01-05 10:00")),
    ]
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    manifest = scenario.manifest()
    version = scenario.current_version("incremental_manifest")

    second = [
        Raw("b1", "c1", "bob", ts("2026-01-02 12:00"), ts("2026-01-06 10:00")),
        Raw("b2", "c2", "cy", ts("2026-01-04 09:00"), ts("2026-01-06 10:00")),
        Raw("b3", "c3", None, ts("2026-01-04 10:00"), ts("2026-01-06 10:00")),
    ]
    second_file = scenario.write_events(second)
    # processed_events stores the second batch, first_dates fails, and the
    # process dies before on-run-end: the manifest stays as it was
    with scenario.table_replaced_by_incompatible_one("first_dates"):
        scenario.dbt("run", vars=VARS, ok=False)
    scenario.restore_version("incremental_manifest", version)
    assert scenario.manifest() == manifest

    # the next run reads those events again; they are stored already, but by
    # a run not every model succeeded through, so their cookies are recomputed
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("Visitor lookup: Standard incremental run")
    touched = {row.visitor_cookie_id for row in scenario.table("base_cookie_changes_this_run")}
    assert touched == {"c1", "c2", "c3"}
    expected = lookup_tables(processed_events(first + second).values())
    assert scenario.lookup_tables() == expected
    run_numbers = {row.model: row.last_run_number for row in scenario.table("incremental_manifest")}
    assert run_numbers == dict.fromkeys(INCREMENTAL_MODELS, 2)

    # a run that only reads them again (a file written again changed the
    # folder, so it reads its lookback in every file) changes nothing and
    # touches no cookie: the lookup models (and the manifest model, which
    # only on-run-end writes) run no MERGE, so the lookup tables commit nothing
    versions = {name: scenario.table_version(name) for name in LOOKUP_TABLES}
    os.utime(second_file)
    scenario.dbt("run", vars=VARS)
    assert scenario.logged("Visitor lookup: read 5 events: 5 valid, 0 duplicate copies ignored")
    assert scenario.table("base_cookie_changes_this_run") == []
    assert scenario.lookup_tables() == expected
    for name in [*LOOKUP_TABLES, "incremental_manifest"]:
        assert scenario.logged(f"Visitor lookup: {scenario.schema}.{name}: nothing to merge"), name
    assert {name: scenario.table_version(name) for name in LOOKUP_TABLES} == versions
    scenario.dbt("test", vars=VARS)
