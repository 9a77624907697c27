"""The project's models as Dagster assets (dagster-dbt): every materialisation is one `dbt build` of the
incremental set, whose run intake, merges and manifest update belong together.

    pip install -e '.[dagster]'
    dagster dev -m visitor_lookup.orchestration    # prepares the dbt project (dbt parse) on start

A subset of these assets materialised alone would merge a window that is not its run's: the project refuses
it before any model runs, naming the selector to run instead (docs/recovery.md, "When a run dies,
or a table vanishes").
"""

# No `from __future__ import annotations`: Dagster checks the context parameter's annotation as a type.
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dbt import DbtCliResource, DbtProject, dbt_assets

ROOT = Path(__file__).resolve().parents[1]
SELECTOR = "visitor_lookup_incremental"


def lookup_assets(project: DbtProject, dbt_vars: Mapping[str, Any] | None = None) -> dg.AssetsDefinition:
    """The incremental set's models as assets, built by one `dbt build --selector` per materialisation."""
    extra = ["--vars", json.dumps(dict(dbt_vars))] if dbt_vars else []

    @dbt_assets(manifest=project.manifest_path, project=project, select="", selector=SELECTOR)
    def visitor_lookup_models(context: dg.AssetExecutionContext, dbt: DbtCliResource) -> Iterator[Any]:
        yield from dbt.cli(["build", *extra], context=context).stream()

    return visitor_lookup_models


def lookup_definitions(project: DbtProject, dbt_vars: Mapping[str, Any] | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=[lookup_assets(project, dbt_vars)],
        resources={"dbt": DbtCliResource(project_dir=project)},
    )


@dg.definitions
def defs() -> dg.Definitions:
    """For `dagster dev -m visitor_lookup.orchestration`: this checkout's project and profiles."""
    project = DbtProject(project_dir=ROOT, profiles_dir=ROOT / "profiles")
    project.prepare_if_dev()
    return lookup_definitions(project)
