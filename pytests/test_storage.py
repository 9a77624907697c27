"""Bounded storage: after a run, the Iceberg snapshots of every table the project keeps that are older
than visitor_lookup__snapshot_retention_days are expired, and no file they alone used stays on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Scenario
from .reference import lookup_tables, processed_events
from .test_lookup_properties import VARS, random_arrivals

pytestmark = pytest.mark.iceberg_only

KEPT = (
    "incremental_manifest",
    "processed_events",
    "quarantined_events",
    "first_dates",
    "user_mapping",
    "visitor_lookup_spans",
)

# Iceberg views (every view in Iceberg's session catalog): each replace writes a metadata file.
VIEWS = ("visitor_lookup", "base_new_events_this_run")


def local_path(location: str) -> str:
    return location.removeprefix("file:")


def folder(scenario: Scenario, name: str) -> Path:
    (location,) = (
        row.data_type
        for row in scenario.sql(f"describe table extended {{schema}}.{name}")
        if row.col_name == "Location"
    )
    return Path(local_path(location))


def files_on_disk_and_referenced(scenario: Scenario, name: str) -> tuple[set[str], set[str]]:
    """The table's data, delete and manifest files on disk, and those its current snapshot uses."""
    files = folder(scenario, name).rglob("*")
    on_disk = {str(path) for path in files if path.suffix in {".parquet", ".avro"}}
    table = f"spark_catalog.{{schema}}.{name}"
    referenced = {local_path(row.file_path) for row in scenario.sql(f"select file_path from {table}.files")}
    referenced |= {local_path(row.path) for row in scenario.sql(f"select path from {table}.manifests")}
    referenced |= {
        local_path(row.manifest_list)
        for row in scenario.sql(
            f"select manifest_list from {table}.snapshots "
            f"where snapshot_id = (select snapshot_id from {table}.refs where name = 'main')"
        )
    }
    return on_disk, referenced


def snapshot_count(scenario: Scenario, name: str) -> int:
    (row,) = scenario.sql(f"select count(*) as snapshots from spark_catalog.{{schema}}.{name}.snapshots")
    return row.snapshots


def test_with_retention_zero_every_kept_table_holds_only_its_current_files(scenario: Scenario) -> None:
    # Compaction after every merge: the most snapshots and replaced files a run can leave behind.
    compacting = {**VARS, "visitor_lookup__compact_at_files_per_partition": 1}
    first, *later = random_arrivals(seed=7)
    scenario.write_events(first)
    scenario.dbt("run", vars={**compacting, "visitor_lookup__snapshot_retention_days": "off"})
    assert scenario.logged("Visitor lookup: expired ") == []
    assert snapshot_count(scenario, "incremental_manifest") > 1  # created, then advanced by on-run-end

    seen = list(first)
    expired: list[str] = []
    for batch in later:
        scenario.write_events(batch)
        seen += batch
        scenario.dbt("run", vars={**compacting, "visitor_lookup__snapshot_retention_days": 0})
        assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
        expired += scenario.logged("Visitor lookup: expired ")
        for name in KEPT:
            assert snapshot_count(scenario, name) == 1, name
            on_disk, referenced = files_on_disk_and_referenced(scenario, name)
            assert on_disk == referenced, name
            # the current metadata file and the ten before it (write.metadata.previous-versions-max)
            assert len(list(folder(scenario, name).glob("metadata/*.metadata.json"))) <= 11, name
        # the run history: expired before the run appends its row
        assert snapshot_count(scenario, "visitor_lookup_runs") == 2
        for view in VIEWS:  # created once, then left alone while its definition stays the same
            assert len(list(folder(scenario, view).glob("metadata/*.metadata.json"))) == 1, view
    expired_tables = {name for name in KEPT for line in expired if f"{scenario.schema}.{name} older" in line}
    assert expired_tables == set(KEPT), expired
    scenario.dbt("test", vars={**compacting, "visitor_lookup__test_scope": "all"})


def test_within_the_retention_earlier_versions_stay_readable(scenario: Scenario) -> None:
    first, second = random_arrivals(seed=13, batches=2)
    scenario.write_events(first)
    scenario.dbt("run", vars=VARS)
    version = scenario.current_version("user_mapping")
    scenario.write_events(second)
    scenario.dbt("run", vars=VARS)

    assert scenario.logged("Visitor lookup: expired ") == []
    assert scenario.lookup_tables() == lookup_tables(processed_events([*first, *second]).values())
    earlier = {
        tuple(row)
        for row in scenario.sql(
            "select visitor_cookie_id, user_id, valid_start_date, valid_end_date, is_current, vcid_first_two "
            f"from {{schema}}.user_mapping version as of {version}"
        )
    }
    assert earlier == lookup_tables(processed_events(first).values()).user_mapping
