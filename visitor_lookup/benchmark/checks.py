"""What the benchmark checks after its runs: our tables row for row against the peer's (and the thrift
target's), in the project's own Spark, and the floor's plain Spark job."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Our table and the peer's with the same contract columns (spec §4), compared row for row.
COMPARED = {
    "first_dates": ("naive_first_dates", "visitor_cookie_id, first_date, first_day, vcid_first_two"),
    "user_mapping": (
        "naive_user_mapping",
        "visitor_cookie_id, user_id, valid_start_date, valid_end_date, is_current, vcid_first_two",
    ),
    "visitor_lookup": (
        "naive_visitor_lookup",
        "visitor_cookie_id, user_id, valid_start_date, valid_end_date, is_current, start_day, vcid_first_two",
    ),
}


def differing_rows(spark: SparkSession, ours: str, theirs: str, columns: str) -> int:
    query = (
        f"select count(*) as rows from ((select {columns} from {ours} "
        f"except all select {columns} from {theirs}) union all "
        f"(select {columns} from {theirs} except all select {columns} from {ours}))"
    )
    return spark.sql(query).collect()[0]["rows"]


def models_schema(schema: str) -> str:
    """Where the project builds its tables for a target schema: the default of visitor_lookup__schema, as
    dbt's default custom schema names it (the peer and the floor are projects of their own, in `schema`)."""
    return f"{schema}_visitor_lookup"


def check(schema: str, peer: str, floor_events: Path, run_vars_json: str, thrift_export: Path | None) -> dict:
    """Differing rows between our tables and the peer's (and the thrift target's), and the floor, in the
    project's own Spark."""
    from dbt.cli.main import dbtRunner
    from pyspark.sql import SparkSession

    os.environ["VISITOR_LOOKUP_SCHEMA"] = schema
    started = dbtRunner().invoke(["show", "--inline", "select 1 as spark_is_up", "--vars", run_vars_json])
    if not started.success:
        sys.exit("benchmark: could not start the project's Spark session for the check")
    spark = SparkSession.builder.getOrCreate()
    tables = models_schema(schema)
    differing = {
        ours: differing_rows(spark, f"{tables}.{ours}", f"{peer}.{theirs}", columns)
        for ours, (theirs, columns) in COMPARED.items()
    }
    thrift = {
        ours: differing_rows(spark, f"{tables}.{ours}", f"parquet.`{thrift_export / ours}`", columns)
        for ours, (_, columns) in COMPARED.items()
        if thrift_export
    }
    floor_started = time.monotonic()
    spark.read.parquet(str(floor_events)).groupBy("visitor_cookie_id").agg({"landed": "min"}).collect()
    return {
        "floor": time.monotonic() - floor_started,
        "rows_differing_from_peer": differing,
        **({"rows_differing_from_thrift": thrift} if thrift_export else {}),
    }
