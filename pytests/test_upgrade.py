"""A warehouse built by an earlier version keeps going after an upgrade: its state carries over, with nothing
to do by hand, and the tables stay exact."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from .conftest import INCREMENTAL_MODELS, LOOKUP_TABLES, PROJECT_FILES, ROOT, Scenario
from .reference import Raw, lookup_tables, processed_events
from .test_intake import assert_matches_reference
from .test_lookup_properties import VARS, random_arrivals

# The migration of a table (a column added, then filled) is SQL of its format: both passes run it.

# The last commit whose models had the layout of version 0.1 (models/base/…, models/scd/) and the names
# base_processed_events and base_quarantined_events, which the manifest's rows carry.
BEFORE_THE_RENAME = "4c8f8e97aa28015398569ef3b47d67aaf15fd8f0"
# Version 0.5.0, the last to build its tables in the target's schema by default.
VERSION_0_5_0 = "fbea65d30077c82d361ba1f56099baa2ae50a5f2"
# What a warehouse built before 0.6 sets, as the CHANGELOG says, to carry on where its tables are.
WHERE_THEY_WERE = {**VARS, "visitor_lookup__schema": ""}


def project_at(commit: str, folder: Path) -> Path:
    """The dbt project as it was at `commit` (from the repository's history), in `folder`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit, *PROJECT_FILES],
        capture_output=True,
        check=False,
    )
    assert archive.returncode == 0, (
        f"git archive {commit} failed ({archive.stderr.decode().strip()}): this test reads the project as it "
        "was before the upgrade from the repository's history, so it needs a clone with that commit"
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def test_a_warehouse_built_before_the_models_took_their_tables_names_keeps_its_state(
    scenario: Scenario, tmp_path: Path
) -> None:
    arrivals = random_arrivals(seed=29, batches=4)
    seen: list[Raw] = []
    scenario.schema = scenario.target_schema
    scenario.project_dir = project_at(BEFORE_THE_RENAME, tmp_path / "before")
    scenario.target_dir = tmp_path / "target_before"
    for batch in arrivals[:2]:
        scenario.write_events(batch)
        seen += batch
        scenario.dbt("run", vars=VARS)
    assert_matches_reference(scenario, seen)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
    renamed = {"processed_events": "base_processed_events", "quarantined_events": "base_quarantined_events"}
    assert set(scenario.manifest()) == {renamed.get(name, name) for name in INCREMENTAL_MODELS}
    run_numbers = {row.last_run_number for row in scenario.table("incremental_manifest")}

    scenario.project_dir, scenario.target_dir = ROOT, tmp_path / "target"
    scenario.write_events(arrivals[2])
    seen += arrivals[2]
    scenario.dbt("run", vars=WHERE_THEY_WERE)

    assert scenario.logged("Visitor lookup: Standard incremental run")
    assert_matches_reference(scenario, seen)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
    assert set(scenario.manifest()) == set(INCREMENTAL_MODELS)
    assert {row.last_run_number for row in scenario.table("incremental_manifest")} == {max(run_numbers) + 1}
    # processed_events had no event_key before: the run added it and filled it for every stored row, so
    # the next run finds the stored copies of its events by their keys.
    assert scenario.logged("added and filled column event_key")
    unfilled = scenario.sql("select count(*) from {schema}.processed_events where event_key is null")
    assert unfilled == [(0,)]
    scenario.write_events(arrivals[3])
    seen += arrivals[3]
    scenario.dbt("run", vars=WHERE_THEY_WERE)
    assert_matches_reference(scenario, seen)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())


def test_a_warehouse_built_by_0_5_is_not_started_anew_and_carries_on_where_it_is(
    scenario: Scenario, tmp_path: Path
) -> None:
    arrivals = random_arrivals(seed=59, batches=3)
    seen: list[Raw] = []
    new_schema, scenario.schema = scenario.schema, scenario.target_schema
    scenario.project_dir = project_at(VERSION_0_5_0, tmp_path / "v0_5_0")
    scenario.target_dir = tmp_path / "target_0_5_0"
    for batch in arrivals[:2]:
        scenario.write_events(batch)
        seen += batch
        scenario.dbt("run", vars=VARS)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
    kept = {name: scenario.table_version(name) for name in INCREMENTAL_MODELS}
    run_numbers = {row.last_run_number for row in scenario.table("incremental_manifest")}

    # the new default puts the tables in a schema of their own: the first run stops rather than start anew
    scenario.project_dir, scenario.target_dir = ROOT, tmp_path / "target"
    scenario.write_events(arrivals[2])
    seen += arrivals[2]
    scenario.dbt("run", vars=VARS, ok=False)
    assert scenario.logged(
        f"the tables are built in schema {new_schema} (var visitor_lookup__schema), which has no manifest "
        f"yet, but {scenario.target_schema}.incremental_manifest shows that an earlier version built them in "
        f"the target's schema {scenario.target_schema}. Nothing was changed there. To carry on with those "
        "tables, set visitor_lookup__schema to '' in your dbt_project.yml vars (CHANGELOG, 0.6.0)."
    )
    assert {name: scenario.table_version(name) for name in INCREMENTAL_MODELS} == kept
    assert not scenario.spark.catalog.tableExists(f"{new_schema}.incremental_manifest")
    assert not scenario.spark.catalog.tableExists(f"{new_schema}.processed_events")

    # as the CHANGELOG says: the var set empty, the run carries on with the kept tables, exact; compacted
    # after every merge, so that the compaction of 0.8 runs on tables built before it (on Iceberg, format 2)
    scenario.dbt("run", vars={**WHERE_THEY_WERE, "visitor_lookup__compact_at_files_per_partition": 1})
    assert_matches_reference(scenario, seen)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
    compacted = " ".join(scenario.logged("Visitor lookup: compacted "))
    assert {name for name in LOOKUP_TABLES if f"{scenario.schema}.{name}: " in compacted} == {*LOOKUP_TABLES}
    for name in LOOKUP_TABLES:
        assert scenario.data_files_and_deletes(name)[1] == 0, name
    assert {row.last_run_number for row in scenario.table("incremental_manifest")} == {max(run_numbers) + 1}
    scenario.dbt("test", vars=WHERE_THEY_WERE)
