"""Run the pipeline end to end on sample data and print what it built.

Starts from scratch in the project's default folders (``data/`` and
``warehouse/``), writes five arrival batches of sample page views, drops them
into the events folder one at a time with a ``dbt run`` after each, runs
``dbt test``, and prints the state and the tables. Everything runs in this
process, so one Spark serves every step.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import time
from pathlib import Path

from dbt.cli.main import dbtRunner
from pyspark.sql import SparkSession

from visitor_lookup.generate import write_batches

SUMMARY = {
    "Run state (base_new_event_limits)": (
        "select state, state_name, lower_limit, upper_limit from {schema}.base_new_event_limits"
    ),
    "Incremental manifest": "select model, last_success from {schema}.incremental_manifest order by model",
    "Processed page views (processed_events)": (
        "select count(*) as events, count(distinct visitor_cookie_id) as cookies, "
        "count(user_id) as with_user_id, min(landed) as first_landed, max(landed) as last_landed "
        "from {schema}.processed_events"
    ),
    "Quarantined events by reason (quarantined_events)": (
        "select invalid_reason, count(*) as events from {schema}.quarantined_events "
        "group by invalid_reason order by events desc"
    ),
    "The lookup tables": (
        "select 'first_dates' as table_name, count(*) as table_rows from {schema}.first_dates "
        "union all select 'user_mapping', count(*) from {schema}.user_mapping "
        "union all select 'visitor_lookup', count(*) from {schema}.visitor_lookup"
    ),
    "visitor_lookup for a few cookies that changed hands": (
        "select visitor_cookie_id, user_id, valid_start_date, valid_end_date, is_current "
        "from {schema}.visitor_lookup where visitor_cookie_id in ("
        "select visitor_cookie_id from {schema}.user_mapping group by visitor_cookie_id "
        "having count(distinct user_id) > 1 order by visitor_cookie_id limit 3) "
        "order by visitor_cookie_id, valid_start_date"
    ),
}


def _dbt(runner: dbtRunner, *args: str) -> None:
    started = time.monotonic()
    result = runner.invoke(list(args))
    if not result.success:
        sys.exit(f"demo: dbt {args[0]} failed; see the log above")
    print(f"demo: dbt {args[0]} took {time.monotonic() - started:.1f} s", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="sample page views")
    parser.add_argument("--batches", type=int, default=5, help="arrival batches (one dbt run each)")
    args = parser.parse_args(argv)

    root = Path.cwd()
    data, warehouse = root / "data", root / "warehouse"
    for folder in (data, warehouse):
        shutil.rmtree(folder, ignore_errors=True)
    events = data / "events"
    events.mkdir(parents=True)
    # Derby opens its log (warehouse/derby.log) as the JVM starts; without the folder it logs to the console.
    warehouse.mkdir()
    os.environ["VISITOR_LOOKUP_EVENTS_PATH"] = str(events)
    os.environ["VISITOR_LOOKUP_WAREHOUSE_DIR"] = str(warehouse)

    end = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=1)
    days = 7.0
    batches = write_batches(data / "incoming", args.events, args.batches, end, days, 42, True)
    run_vars = json.dumps({"visitor_lookup__start_date": str((end - dt.timedelta(days=days + 1)).date())})

    runner = dbtRunner()
    for number, batch in enumerate(batches, start=1):
        batch.rename(events / batch.name)
        print(f"\ndemo: arrival batch {number}/{len(batches)} is in {events}; running dbt", flush=True)
        _dbt(runner, "run", "--vars", run_vars)
    print("\ndemo: checking the tables (dbt test)", flush=True)
    _dbt(runner, "test", "--vars", run_vars)

    _dbt(runner, "compile", "--select", "attribution_share_gained", "recent_runs", "--vars", run_vars)
    (attribution,) = Path("target").glob("compiled/**/analyses/attribution_share_gained.sql")
    (recent_runs,) = Path("target").glob("compiled/**/analyses/recent_runs.sql")

    # Where dbt built the tables (visitor_lookup__schema), as its manifest says.
    nodes = json.loads(Path("target/manifest.json").read_text())["nodes"].values()
    (schema,) = {node["schema"] for node in nodes if node["resource_type"] == "model"}
    spark = SparkSession.builder.getOrCreate()
    for title, query in SUMMARY.items():
        print(f"\n{title}")
        spark.sql(query.format(schema=schema)).show(truncate=False)
    print("\nThe runs, newest first (visitor_lookup_runs; dbt show --select recent_runs)")
    spark.sql(recent_runs.read_text()).show(truncate=False)
    print("\nAttribution: page views with a user, from the event alone and through the lookup")
    spark.sql(attribution.read_text()).show(truncate=False)
    print(
        "Next: add Parquet files under data/events and run `dbt run`; "
        "`dbt run --select base_new_event_limits` shows the state; "
        "analyses/ holds the attribution queries (dbt compile, then run them)."
    )


if __name__ == "__main__":
    main()
