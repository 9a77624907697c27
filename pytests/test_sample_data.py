"""The sample generator makes every kind of event the contract names; the pipeline takes them exactly.

The generator is the same whatever the format, and the pipeline's exactness on Delta tables is checked in
the Delta pass by test_lookup_cases and test_lookup_properties.
"""

from __future__ import annotations

import datetime as dt
import itertools
import subprocess
import sys
import textwrap
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from visitor_lookup import generate
from visitor_lookup.benchmark.report import chart_svg
from visitor_lookup.benchmark.runs import new_events
from visitor_lookup.benchmark.scans import event_log_options, scanned_tables, table_scans
from visitor_lookup.benchmark.targets import assess_targets, target_line
from visitor_lookup.generate import write_batches

from .conftest import ROOT, Scenario, table_format, ts
from .reference import Raw, invalid_reason, processed_events
from .test_intake import assert_matches_reference

# The tests that run Spark (the pipeline, the floor's models, the event log the benchmark reads) run on
# every Spark line (.ci/run); the generator and the benchmark's reports are Python, the same on any line.
pytestmark = pytest.mark.same_on_both_formats

END = dt.datetime(2026, 1, 10, tzinfo=dt.UTC)


def read_events(paths: list[Path]) -> list[Raw]:
    rows: list[Raw] = []
    for path in paths:
        for row in pq.read_table(path).to_pylist():
            stamps = {k: row[k] and row[k].replace(tzinfo=None) for k in ("landed", "loaded_at")}
            rows.append(Raw(**{**row, **stamps}))
    return rows


def test_generator_is_seeded_and_covers_every_case(tmp_path: Path) -> None:
    paths = write_batches(tmp_path / "a", 20_000, 4, END, 7, seed=7, progress=False)
    again = write_batches(tmp_path / "b", 20_000, 4, END, 7, seed=7, progress=False)
    events = read_events(paths)
    assert events == read_events(again)
    assert len(paths) == 4 and all(pq.read_metadata(p).num_rows > 0 for p in paths)

    valid = processed_events(events)
    users_by_cookie: dict[str, list[str]] = {}
    for event in sorted(valid.values(), key=lambda e: e.landed):
        if event.user_id is not None:
            users_by_cookie.setdefault(event.visitor_cookie_id, []).append(event.user_id)
    switches = [users for users in users_by_cookie.values() if len(set(users)) > 1]
    returns = [u for u in switches if any(u[i] != u[i + 1] and u[i] in u[i + 2 :] for i in range(len(u) - 1))]
    anonymous_only = {e.visitor_cookie_id for e in valid.values()} - set(users_by_cookie)
    users_with_cookies: dict[str, set[str]] = {}
    for cookie, users in users_by_cookie.items():
        for user in users:
            users_with_cookies.setdefault(user, set()).add(cookie)

    assert anonymous_only and switches and returns
    assert len(users_by_cookie) > 500
    assert sum(1 for cookies in users_with_cookies.values() if len(cookies) > 1) > 50
    reasons = {invalid_reason(e) for e in events} - {None}
    assert len(reasons) == 5
    assert len(events) - len({e.event_id for e in events}) > 50  # re-delivered copies
    assert sum(1 for e in valid.values() if e.loaded_at - e.landed > dt.timedelta(days=1)) > 100
    assert any(e.user_id is not None and e.user_id != e.user_id.strip() for e in events)
    assert any(e.user_id == "" for e in events)


def test_ids_are_random_uuids_in_no_order_of_time(tmp_path: Path) -> None:
    # As Snowplow's trackers send them: pruning by an id's minimum and maximum gains nothing from them.
    paths = write_batches(tmp_path / "a", 20_000, 2, END, 7, seed=9, progress=False)
    events = read_events(paths)
    event_ids = [e.event_id for e in events if e.event_id is not None]
    cookies = {e.visitor_cookie_id.strip() for e in events if e.visitor_cookie_id}
    cookies.discard("")
    assert {uuid.UUID(i).version for i in event_ids} == {4}
    assert {uuid.UUID(c).version for c in cookies} == {4}
    loaded = [e for e in events if e.loaded_at is not None and e.event_id is not None]
    in_time = [e.event_id for e in sorted(loaded, key=lambda e: e.loaded_at)]
    rising = sum(1 for a, b in itertools.pairwise(in_time) if a < b) / (len(in_time) - 1)
    assert 0.45 < rising < 0.55
    (first, second) = (read_events([path]) for path in paths)
    assert min(e.event_id for e in second if e.event_id) < max(e.event_id for e in first if e.event_id)


@pytest.mark.slow
@pytest.mark.every_spark_line
def test_generated_batches_through_the_pipeline(scenario: Scenario, tmp_path: Path) -> None:
    paths = write_batches(tmp_path / "incoming", 6_000, 3, END, 6, seed=3, progress=False)
    run_vars = {
        "visitor_lookup__start_date": "2026-01-03",
        # stragglers are delivered one file late: a lookback of a whole file's span catches them
        "visitor_lookup__lookback_window_hours": 48,
    }
    seen: list[Raw] = []
    for path in paths:
        path.rename(scenario.events_dir / path.name)
        seen += read_events([scenario.events_dir / path.name])
        scenario.dbt("run", vars=run_vars)
        assert_matches_reference(scenario, seen)
    scenario.dbt("test", vars=run_vars)


def test_generator_writes_the_same_files_when_it_holds_fewer_events_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = write_batches(tmp_path / "whole", 20_000, 5, END, 7, seed=11, progress=False)
    monkeypatch.setattr(generate, "HELD_EVENTS", 3_000)  # parts written six times over
    in_parts = write_batches(tmp_path / "in_parts", 20_000, 5, END, 7, seed=11, progress=False)
    assert [path.name for path in in_parts] == [path.name for path in whole]
    for held, parted in zip(whole, in_parts, strict=True):
        assert pq.read_table(parted).equals(pq.read_table(held)), parted.name
    assert sorted(path.name for path in (tmp_path / "in_parts").iterdir()) == [path.name for path in whole]


def test_benchmark_new_events_are_new_and_sit_beside_the_history(tmp_path: Path) -> None:
    (history,) = write_batches(tmp_path / "events", 2_000, 1, END, 7, seed=3, progress=False)
    fresh = new_events(history, tmp_path / "incoming", 500, seed=4)
    assert fresh.name != history.name
    stored, arriving = read_events([history]), read_events([fresh])
    assert len(arriving) >= 500
    assert not {r.event_id for r in stored} & {r.event_id for r in arriving}
    known_cookies = {
        r.visitor_cookie_id for r in stored if r.visitor_cookie_id and r.visitor_cookie_id.strip()
    }
    late = [r for r in arriving if r.visitor_cookie_id in known_cookies]
    assert 0 < len(late) <= 500 // 10
    second = read_events([new_events(history, tmp_path / "incoming", 500, seed=5, run=2)])
    earlier_ids = {r.event_id for r in stored} | {r.event_id for r in arriving}
    assert not {r.event_id for r in second if r.event_id is not None} & earlier_ids
    assert min(r.loaded_at for r in second if r.loaded_at) > max(r.loaded_at for r in arriving if r.loaded_at)


@pytest.mark.every_spark_line
def test_the_exact_run_floor_skips_stored_ids_and_passes_its_own_test_when_a_new_cookie_has_no_landed(
    scenario: Scenario,
) -> None:
    # the benchmark's yardstick: its first run stores the history, the timed one the events loaded after it
    scenario.project_dir = ROOT / "visitor_lookup" / "run_floor"
    scenario.schema = scenario.target_schema  # a project of its own, in the target's schema
    scenario.write_events(
        [
            Raw("h1", "c1", "u1", ts("2026-01-02 10:00"), ts("2026-01-02 10:05")),
            Raw("h2", "c3", None, ts("2026-01-02 11:00"), ts("2026-01-02 11:05")),
        ]
    )
    scenario.write_events(
        [
            Raw("n1", "c1", "u1", ts("2026-01-03 09:00"), ts("2026-01-03 10:00")),
            Raw("n2", "c2", "u2", None, ts("2026-01-03 10:00")),
            # a stored id delivered again: found among the stored ids (on Iceberg through their keys)
            Raw("h1", "c1", "u1", ts("2026-01-02 10:00"), ts("2026-01-03 10:00")),
        ]
    )
    floor_vars = {
        "run_floor__file_format": table_format(),
        "run_floor__events_path": str(scenario.events_dir),
        "run_floor__loaded_after": "2026-01-02 12:00:00",
        "run_floor__loaded_until": "2026-01-03 12:00:00",
    }
    scenario.dbt("run", "--select", "exact_run", vars=floor_vars)
    scenario.dbt("run", "--select", "exact_run", vars=floor_vars)
    scenario.dbt("test", "--select", "exact_run", vars=floor_vars)
    # appended, not merged: the run adds the cookie's row again, with the earlier of the two dates
    first_dates = scenario.sql("select visitor_cookie_id, first_date from {schema}.exact_run_first_dates")
    assert sorted(map(tuple, first_dates)) == [("c1", ts("2026-01-02 10:00"))] * 2 + [
        ("c3", ts("2026-01-02 11:00"))
    ]
    stored = scenario.sql("select event_id from {schema}.exact_run_events")
    assert sorted(row.event_id for row in stored) == ["h1", "h2", "n1"]


@pytest.mark.every_spark_line
def test_the_benchmark_counts_each_scan_of_a_table_in_a_process_s_spark_event_log(tmp_path: Path) -> None:
    # A Spark of its own, as a benchmark's dbt process starts one, its event log switched on the same way.
    queries = [
        "select count(*) from s.t where id > 5",  # one scan
        "select count(*) from s.t as a inner join s.t as b on a.id = b.id + 1",  # two
        # the same grouping twice: Spark reads the table once and reuses the exchange
        "select count(*) from (select id from s.t group by id) union all"
        " select count(*) from (select id from s.t group by id)",
        "select count(*) from s.u",  # another table, not counted as one of t's
    ]
    script = textwrap.dedent(f"""
        from pyspark.sql import SparkSession
        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.driver.extraJavaOptions", {event_log_options(tmp_path / "events")!r})
            .config("spark.sql.warehouse.dir", {str(tmp_path / "tables")!r})
            .config("spark.ui.enabled", "false")
            .getOrCreate()
        )
        spark.sql("create database s")
        spark.sql("create table s.t using parquet as select id from range(100)")
        spark.sql("create table s.u using parquet as select id from range(10)")
        for query in {queries!r}:
            spark.sql(query).collect()
        spark.stop()
    """)
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)

    assert table_scans(tmp_path / "events", "s", ["t", "u", "v"]) == {"t": 4, "u": 1, "v": 0}


def test_a_compaction_s_read_of_the_files_it_rewrites_is_no_scan_of_the_table() -> None:
    # Two leaves of a benchmark run's event log (Iceberg 1.12): a model's read, then rewrite_data_files'.
    def leaf(text: str) -> dict:
        return {"nodeName": text.split("[")[0], "simpleString": text, "children": []}

    read = leaf("BatchScan spark_catalog.s.first_dates[visitor_cookie_id#4303, first_date#4304] IcebergScan(")
    rewrite = leaf(
        "BatchScan spark_catalog.s.first_dates[visitor_cookie_id#7165, _row_id#7169L] "
        "IcebergStagedScan(table=spark_catalog.s.first_dates, taskSetID=beb5f32a)"
    )
    plan = {"nodeName": "Union", "simpleString": "Union", "children": [read, rewrite]}
    assert list(scanned_tables(plan)) == [("s", "first_dates")]


def benchmark_result(
    peer: float, incremental: float, exact_run: float, test: float, exact_test: float
) -> dict:
    return {
        "peer_full_rebuild": peer,
        "full": 1.2 * peer,
        "incremental": incremental,
        "exact_run_floor": exact_run,
        "test": test,
        "exact_test_floor": exact_test,
        "no_new_data": 20.0,
        "exact_no_new_data_floor": 11.0,
        "rows_differing_from_peer": {"first_dates": 0, "user_mapping": 0, "visitor_lookup": 0},
        "statements": {"incremental": 66, "exact_run_floor": 21},
        "hooks": {"incremental": {"on-run-start": 4, "on-run-end": 2}},
        "scans": {
            "incremental_runs": [
                {"first_dates": 2, "user_mapping": 3},
                {"first_dates": 1, "user_mapping": 2},
            ],
            "exact_run_floor": {"first_dates": 1, "user_mapping": 1},
        },
    }


def test_benchmark_targets_say_where_the_exact_run_floor_stands() -> None:
    small = benchmark_result(peer=20.0, incremental=24.0, exact_run=12.0, test=15.0, exact_test=8.0)
    large = benchmark_result(peer=50.0, incremental=30.0, exact_run=14.0, test=18.0, exact_test=10.0)
    large["rows_differing_from_peer"]["user_mapping"] = 3
    assert [target_line(t) for t in assess_targets(small, large, thrift=False)] == [
        "MISSED mean incremental <= 0.3 x peer (scale x H): 0.60 x peer; the exact-run floor 0.28 x peer"
        " (meets it)",
        "MISSED mean incremental <= 1.0 x peer (H): 1.20 x peer; the exact-run floor 0.60 x peer (meets it)",
        "met  full build <= 1.25 x peer (scale x H): 1.20 x peer",
        "MISSED mean incremental <= 1.3 x the exact-run floor's (scale x H): 2.14 x floor",
        "MISSED no new data <= 1.3 x the exact-run floor's (scale x H): 1.82 x floor",
        "MISSED dbt test <= 1.2 x the exact-run floor's (scale x H): 1.80 x floor",
        "MISSED no new data <= 15 s: 20.00 s; the exact-run floor 11.00 s (meets it)",
        "MISSED dbt test <= 0.25 x peer (scale x H): 0.36 x peer; the exact-run floor 0.20 x peer (meets it)",
        "met  mean incremental on scale x H <= 1.5 x on H: 1.25 x on H",
        "MISSED mean statements of an incremental run <= 40: 66 statements; the exact-run floor 21 statements"
        " (meets it)",
        "MISSED no lookup table scanned more than twice in any run: 3 scans; the exact-run floor 1 scans"
        " (meets it)",
        "MISSED hooks of each kind in an incremental run <= 2: 4 hooks",
        "MISSED tables equal the peer's",
    ]
    # a larger history of 100 M events or more adds the tighter targets of a long nightly rebuild
    assert [target_line(t) for t in assess_targets(small, large, thrift=False, large_size=100_000_000)][
        13:
    ] == [
        "MISSED mean incremental <= 0.07 x peer (scale x H of 100 M or more): 0.60 x peer; the exact-run"
        " floor 0.28 x peer (misses it too)",
        "met  mean incremental on scale x H of 100 M or more <= 1.6 x on H: 1.25 x on H; the exact-run floor"
        " 1.17 x on H (meets it)",
        "MISSED dbt test <= 0.05 x peer (scale x H of 100 M or more): 0.36 x peer; the exact-run floor 0.20 x"
        " peer (misses it too)",
    ]


def test_benchmark_chart_draws_each_step_through_its_measured_points() -> None:
    small = benchmark_result(peer=20.0, incremental=24.0, exact_run=12.0, test=15.0, exact_test=8.0)
    large = benchmark_result(peer=50.0, incremental=30.0, exact_run=14.0, test=18.0, exact_test=10.0)
    svg = ET.fromstring(chart_svg({1_000_000: small, 10_000_000: large}, "iceberg tables"))
    tag = "{http://www.w3.org/2000/svg}"
    texts = [(t.text or "", t.attrib) for t in svg.iter(f"{tag}text")]

    # read the axes back from their labels: seconds on the left (text-anchor end), millions at the bottom
    y_ticks = {float(text): float(a["y"]) - 4 for text, a in texts if a.get("text-anchor") == "end"}
    x_ticks = {
        float(text): float(a["x"]) for text, a in texts if a.get("text-anchor") == "middle" and text.isdigit()
    }
    assert max(y_ticks) >= 1.2 * 50 and min(y_ticks) == 0

    def seconds(y: float) -> float:
        return (y_ticks[0] - y) / (y_ticks[0] - y_ticks[max(y_ticks)]) * max(y_ticks)

    def millions(x: float) -> float:
        return (x - x_ticks[0]) / (x_ticks[10] - x_ticks[0]) * 10

    drawn = {}
    for line in svg.iter(f"{tag}polyline"):
        points = [tuple(map(float, point.split(","))) for point in line.attrib["points"].split()]
        drawn[line.attrib["stroke"]] = [(round(millions(x), 1), round(seconds(y), 1)) for x, y in points]
    legend = {t: a for t, a in texts if t.startswith(("peer", "our", "exact"))}
    assert list(legend) == [
        "peer: naive full rebuild",
        "our full build",
        "our incremental run",
        "exact-run floor",
    ]
    assert list(drawn.values()) == [
        [(1.0, 20.0), (10.0, 50.0)],
        [(1.0, 24.0), (10.0, 60.0)],
        [(1.0, 24.0), (10.0, 30.0)],
        [(1.0, 12.0), (10.0, 14.0)],
    ]
