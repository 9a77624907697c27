"""dbt-spark's listing of a schema (a relation's `information`), read by macros/utils/listing.sql with no
statement: what its macros give for real tables and a view equals what Spark says of them, so a dbt-spark
whose listing they no longer read fails here, not in a run."""

from __future__ import annotations

import json

from .conftest import Scenario, table_format
from .test_lookup_properties import VARS, random_arrivals


def listed(scenario: Scenario, name: str, properties: list[str]) -> dict:
    """The listing macros' answers for one relation of the scenario's schema, through dbt show (a raw
    string literal: Spark would unescape the JSON's backslashes)."""
    facts = ", ".join(f'"{p}": visitor_lookup_listed_property(r, "{p}")' for p in properties)
    inline = (
        f"{{% set r = adapter.get_relation(target.database, '{scenario.schema}', '{name}') %}}"
        "select r'{{ tojson({'location': visitor_lookup_listed_location(r), "
        "'schema_id': visitor_lookup_listed_schema_id(r), "
        f"'columns': visitor_lookup_listed_columns(r), 'properties': {{{facts}}}}}) }}}}' as listed"
    )
    result = scenario.dbt("show", "--inline", inline, vars=VARS)
    return json.loads(result.result.results[0].agate_table.rows[0]["listed"])


def test_the_listing_macros_read_what_spark_says_of_each_relation(scenario: Scenario) -> None:
    (events,) = random_arrivals(seed=3, batches=1)
    scenario.write_events(events)
    scenario.dbt("run", vars=VARS)
    schema = scenario.schema
    for name in ["processed_events", "base_events_this_run", "visitor_lookup"]:
        detail = {row[0]: row[1] for row in scenario.sql(f"describe table extended {schema}.{name}")}
        got = listed(scenario, name, [])
        columns = [field.name.lower() for field in scenario.spark.table(f"{schema}.{name}").schema]
        if name == "processed_events" and table_format() == "delta":
            columns = []  # Delta's listing holds no schema: visitor_lookup_stored_columns asks DESCRIBE
        assert got["columns"] == columns, name
        if name != "visitor_lookup":
            assert got["location"] == detail["Location"], name
        # an Iceberg table's schema as created, which its Hive catalog lists; none for Delta's or Parquet's
        if name != "visitor_lookup":
            iceberg_table = table_format() == "iceberg" and name == "processed_events"
            assert got["schema_id"] == (0 if iceberg_table else None), name

    ours = {"base_events_this_run": "visitor_lookup.shape", "visitor_lookup": "visitor_lookup.definition"}
    for name, prop in ours.items():
        stored = {row[0]: row[1] for row in scenario.sql(f"show tblproperties {schema}.{name}")}
        assert listed(scenario, name, [prop])["properties"] == {prop: stored[prop]}, name

    if table_format() == "iceberg":
        names = ["table_type", "current-snapshot-summary", "default-partition-spec"]
        got = listed(scenario, "processed_events", names)["properties"]
        (latest,) = scenario.sql(
            f"select summary from {schema}.processed_events.snapshots order by committed_at desc limit 1"
        )
        summary = json.loads(got["current-snapshot-summary"])
        totals = ["total-data-files", "total-delete-files", "total-records"]
        assert {k: summary[k] for k in totals} == {k: latest["summary"][k] for k in totals}
        # the lookup tables and processed_events are unpartitioned by default
        assert (got["table_type"], got["default-partition-spec"]) == ("ICEBERG", None)
        # a column added: the table's current schema is another (its data files hold none of it)
        scenario.sql(f"alter table {schema}.processed_events add column note string")
        assert listed(scenario, "processed_events", [])["schema_id"] == 1
