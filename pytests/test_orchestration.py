"""The project under an orchestrator: its models as Dagster assets (dagster-dbt), materialised by Dagster
itself in this process, each materialisation a `dbt build` in a process of its own on a warehouse of its
own; exact afterwards, and a subset of the incremental set refused. Dagster runs dbt the same whatever the
tables' format: checked in the Iceberg pass, whose runs cost about half the Delta pass's."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from dagster_dbt import DbtCliResource, DbtProject

from visitor_lookup.orchestration import lookup_assets

from .conftest import ROOT, Scenario
from .reference import lookup_tables, processed_events
from .test_lookup_properties import VARS, random_arrivals
from .test_operations import OwnProcess, as_text

pytestmark = pytest.mark.same_on_both_formats


def test_dagster_materialises_the_lookup_exactly(
    scenario: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    processes = OwnProcess(scenario, tmp_path / "own")
    processes.workdir.mkdir()
    for name in ("VISITOR_LOOKUP_WAREHOUSE_DIR", "VISITOR_LOOKUP_SCHEMA", "VISITOR_LOOKUP_EVENTS_PATH"):
        monkeypatch.setenv(name, processes.env[name])
    monkeypatch.setenv("DBT_LOG_PATH", str(tmp_path / "dagster_logs"))
    project = DbtProject(project_dir=ROOT, profiles_dir=ROOT / "profiles", target_path=tmp_path / "target")
    project.preparer.prepare(project)
    assets = lookup_assets(project, VARS)
    resources = {"dbt": DbtCliResource(project_dir=project)}

    seen = []
    for batch in random_arrivals(seed=71, batches=2):
        scenario.write_events(batch)
        seen += batch
        result = dg.materialize([assets], resources=resources)
        assert result.success
        materialised = {event.asset_key.path[-1] for event in result.get_asset_materialization_events()}
        assert {"user_mapping", "visitor_lookup_spans", "base_events_this_run"} <= materialised

    # one model alone, as a subset materialisation or a per-model task runs it: refused, nothing changed
    # (dagster-dbt keys a model of a custom schema by the schema and its name)
    with pytest.raises(Exception, match="dbt build --selector visitor_lookup_incremental"):
        dg.materialize(
            [assets], resources=resources, selection=[dg.AssetKey(["visitor_lookup", "user_mapping"])]
        )

    tables = processes.export()
    expected = lookup_tables(processed_events(seen).values())
    assert tables["duplicate_ids"] == [["0"]]
    assert set(map(tuple, tables["first_dates"])) == as_text(expected.first_dates)
    assert set(map(tuple, tables["user_mapping"])) == as_text(expected.user_mapping)
    assert set(map(tuple, tables["visitor_lookup"])) == as_text(expected.visitor_lookup)
