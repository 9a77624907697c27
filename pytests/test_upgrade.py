"""A warehouse built by an earlier version keeps going after an upgrade: its state carries over, with nothing
to do by hand, and the tables stay exact."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from .conftest import INCREMENTAL_MODELS, PROJECT_FILES, ROOT, Scenario
from .reference import Raw, lookup_tables, processed_events
from .test_intake import assert_matches_reference
from .test_lookup_properties import VARS, random_arrivals

# The migration of a table (a column added, then filled) is SQL of its format: both passes run it.

# The last commit whose models had the layout of version 0.1 (models/base/…, models/scd/) and the names
# base_processed_events and base_quarantined_events, which the manifest's rows carry.
BEFORE_THE_RENAME = "4c8f8e97aa28015398569ef3b47d67aaf15fd8f0"


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
    scenario.dbt("run", vars=VARS)

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
    scenario.dbt("run", vars=VARS)
    assert_matches_reference(scenario, seen)
    assert scenario.lookup_tables() == lookup_tables(processed_events(seen).values())
