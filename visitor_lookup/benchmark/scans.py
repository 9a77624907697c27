"""How many times a dbt process read each table, from the Spark event log the benchmark has it write.

A scan is a leaf of a query's final physical plan that reads the table's data: Iceberg's `BatchScan`, or a
file scan named by its table, as of a Parquet table (Delta's scans are not checked yet). Metadata tables
(`.files`, `.snapshots`) are not counted, nor is a compaction's read of the files it rewrites (Iceberg's
staged scan of one file group: the small files and those full of deletes, not the table). A scan Spark
reuses within one query counts once.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

EXECUTION_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
ADAPTIVE_UPDATE = "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate"
# The table a scan node reads: "BatchScan spark_catalog.s.t" (Iceberg), "Scan parquet spark_catalog.s.t"
# (a file scan), each possibly followed by more of the node's description.
SCANNED_TABLE = re.compile(r"^(?:BatchScan|Scan \w+) (?:\w+\.)?(\w+)\.(\w+)(?:\s|\[|$)")
# How rewrite_data_files reads the file group it rewrites.
STAGED_SCAN = "IcebergStagedScan("


def event_log_options(folder: Path) -> str:
    """JVM options that make a dbt process's Spark write its event log into `folder`, one uncompressed file
    (Spark 4 rolls it over files in a folder of their own by default)."""
    folder.mkdir(parents=True, exist_ok=True)
    return (
        f"-Dspark.eventLog.enabled=true -Dspark.eventLog.dir={folder.resolve().as_uri()} "
        "-Dspark.eventLog.compress=false -Dspark.eventLog.rolling.enabled=false"
    )


def final_plans(lines: Iterable[str]) -> dict[int, dict]:
    """Each SQL execution's last physical plan: adaptive execution replaces the plan it started with."""
    plans: dict[int, dict] = {}
    for line in lines:
        if EXECUTION_START not in line and ADAPTIVE_UPDATE not in line:
            continue
        event = json.loads(line)
        if event["Event"] in (EXECUTION_START, ADAPTIVE_UPDATE):
            plans[event["executionId"]] = event["sparkPlanInfo"]
    return plans


def scanned_tables(plan: dict) -> Iterable[tuple[str, str]]:
    """(schema, table) of each scan leaf of a plan, through its children and subqueries; a reused exchange
    or subquery shows the plan it reuses, which ran once, where it first appears."""
    if plan["nodeName"].startswith("Reused"):
        return
    if not plan["children"]:
        if STAGED_SCAN in plan["simpleString"]:
            return
        for text in (plan["nodeName"], plan["simpleString"]):
            matched = SCANNED_TABLE.match(text)
            if matched:
                yield matched.group(1), matched.group(2)
                return
    for child in plan["children"]:
        yield from scanned_tables(child)


def table_scans(folder: Path, schema: str, tables: Iterable[str]) -> dict[str, int]:
    """How many times the processes whose event logs are in `folder` scanned each of `tables` of `schema`."""
    counted: Counter[str] = Counter()
    for log in sorted(folder.iterdir()):
        with log.open() as lines:
            for plan in final_plans(lines).values():
                counted.update(table for of, table in scanned_tables(plan) if of == schema)
    return {table: counted[table] for table in tables}
