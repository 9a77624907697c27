"""The project under dbt-databricks, in its own environment (.venv-databricks, made by bin/setup --dev):
parsed and compiled offline, never run (no Databricks workspace here)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .conftest import INCREMENTAL_MODELS, ROOT

# Processes and files of their own, whatever the pass's format: in the Delta pass, which ends first.
pytestmark = pytest.mark.same_on_both_formats(checked_on="delta")

DBT = ROOT / ".venv-databricks" / "bin" / "dbt"
# dbt renders the target's credentials; nothing connects to this host.
OFFLINE_WORKSPACE = {
    "DBT_PROFILES_DIR": str(ROOT / "profiles"),
    "VISITOR_LOOKUP_TARGET": "databricks",
    "VISITOR_LOOKUP_DATABRICKS_HOST": "example.cloud.databricks.com",
    "VISITOR_LOOKUP_DATABRICKS_HTTP_PATH": "/sql/1.0/warehouses/0",
    "VISITOR_LOOKUP_DATABRICKS_TOKEN": "not-a-token",
}


def databricks_dbt(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert DBT.exists(), f"{DBT} is missing: run bin/setup --dev (or --databricks)"
    return subprocess.run(
        [str(DBT), *args, "--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")],
        cwd=ROOT,
        env={**os.environ, **OFFLINE_WORKSPACE},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_per_run_tables_are_delta_and_the_materialization_is_ours(tmp_path: Path) -> None:
    parsed = databricks_dbt(tmp_path, "parse", "--no-partial-parse")
    assert parsed.returncode == 0, parsed.stdout + parsed.stderr
    assert "Registered adapter: databricks=" in parsed.stdout
    assert "WARNING" not in parsed.stdout, parsed.stdout  # no deprecated config, no unknown key
    manifest = json.loads((tmp_path / "target" / "manifest.json").read_text())
    assert manifest["metadata"]["adapter_type"] == "databricks"
    tables = {
        node["name"]: node["config"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model"
        and node["package_name"] == "visitor_lookup"
        and node["config"]["materialized"] != "stable_view"
    }
    # the per-run tables' format is set when dbt parses; the kept tables' when a run creates them
    # (visitor_lookup_table_format: Delta on Databricks, the next test)
    scratch = {
        name: config.get("file_format")
        for name, config in tables.items()
        if config["materialized"] == "scratch_table"
    }
    assert scratch == dict.fromkeys(scratch, "delta") and scratch
    merged = {name for name, config in tables.items() if config["materialized"] == "action_merge"}
    assert merged == {
        *INCREMENTAL_MODELS,
        "incremental_manifest",
        "erased_cookies",
        "erasure_log",
    }
    assert {config["materialized"] for config in tables.values()} == {"action_merge", "scratch_table"}
    # dbt-databricks finds the package's materialization for the package's models
    assert "macro.visitor_lookup.materialization_action_merge_default" in manifest["macros"]


def test_the_per_format_macros_resolve_for_databricks(tmp_path: Path) -> None:
    # What the dispatched macros give on adapter type databricks, compiled without a connection.
    probe = (
        "{% if execute %}{{ tojson({"
        "'drop_relation': adapter.dispatch('drop_relation', 'dbt').macro.unique_id,"
        "'drop_relation_handed_to': dbt.databricks__drop_relation.macro.unique_id,"
        "'write_changes': adapter.dispatch('action_merge_write_changes', 'visitor_lookup').macro.unique_id,"
        "'clear_changes': adapter.dispatch('action_merge_clear_changes', 'visitor_lookup').macro.unique_id,"
        "'optimize_small_files':"
        " adapter.dispatch('delta_optimize_small_files', 'visitor_lookup').macro.unique_id,"
        "'table_format': visitor_lookup_table_format(),"
        "'scratch_file_format': visitor_lookup_scratch_file_format(),"
        "'drop_purge': visitor_lookup_drop_purge(),"
        "'lookup_table_properties': visitor_lookup_table_properties('lookup')"
        "}) }}{% endif %}"
    )
    compiled = databricks_dbt(
        tmp_path, "compile", "--quiet", "--no-populate-cache", "--output", "json", "--inline", probe
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert json.loads(json.loads(compiled.stdout)["compiled"]) == {
        # not spark__drop_relation, whose PURGE Databricks' DROP TABLE lacks
        "drop_relation": "macro.visitor_lookup.databricks__drop_relation",
        "drop_relation_handed_to": "macro.dbt_databricks.databricks__drop_relation",
        # a change set in a table of its own (Unity Catalog gives every managed table a folder of its own)
        "write_changes": "macro.visitor_lookup.databricks__action_merge_write_changes",
        "clear_changes": "macro.visitor_lookup.databricks__action_merge_clear_changes",
        # no Spark setting before OPTIMIZE, which SQL warehouses refuse
        "optimize_small_files": "macro.visitor_lookup.databricks__delta_optimize_small_files",
        "table_format": "delta",
        "scratch_file_format": "delta",
        "drop_purge": "",  # Databricks' DROP TABLE has no PURGE clause
        "lookup_table_properties": {  # copy-on-write, Delta's default
            "delta.enableDeletionVectors": "false",
            "visitor_lookup.partition_prefix_length": "2",
        },
    }


def test_iceberg_on_databricks_is_refused_with_what_to_set(tmp_path: Path) -> None:
    parsed = databricks_dbt(
        tmp_path,
        "compile",
        "--quiet",
        "--no-populate-cache",
        "--vars",
        '{"visitor_lookup__file_format": "iceberg"}',
        "--inline",
        "{{ visitor_lookup_table_format() }}",
    )
    assert parsed.returncode != 0
    assert (
        "var visitor_lookup__file_format is 'iceberg', but on Databricks the models are Delta tables"
        in " ".join(parsed.stdout.split())
    ), parsed.stdout
