"""The project installed as a dbt package in a host project (integration_tests/), run by `dbt build`.

The host's build and its table configs write tables of the pass's format: both passes run them; what dbt
resolves for a host (refs, schemas, access, its own models) runs in the Iceberg pass.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult

from .conftest import ROOT, Scenario, table_format
from .reference import Raw, lookup_tables, normalise_id, processed_events
from .test_lookup_properties import VARS, random_arrivals
from .test_storage import folder

HOST = ROOT / "integration_tests"


class HostScenario(Scenario):
    """A scenario run from the host project: the package reads the events folder (a var) and writes its
    tables in the schema of its own it takes by default (<host schema>_visitor_lookup); the host's own
    models stay in the host schema, the target's."""

    def __init__(self, name: str, workdir: Path) -> None:
        super().__init__(name, workdir)
        self.project_dir = HOST

    def dbt(self, *args: str, vars: dict | None = None, ok: bool = True) -> dbtRunnerResult:
        package_vars = {"visitor_lookup__events_path": str(self.events_dir)}
        return super().dbt(*args, vars={**(vars or {}), **package_vars}, ok=ok)


def install(project: Path) -> None:
    installed = dbtRunner().invoke(
        ["deps", "--project-dir", str(project), "--profiles-dir", str(ROOT / "profiles")]
    )
    assert installed.success, installed.exception


@pytest.fixture
def host(request: pytest.FixtureRequest, tmp_path: Path) -> HostScenario:
    scenario = HostScenario(request.node.name, tmp_path)
    install(HOST)
    return scenario


def host_copy(request: pytest.FixtureRequest, tmp_path: Path) -> HostScenario:
    """A scenario on a copy of the host project (installed), for a test to add its own files to."""
    project = tmp_path / "host_project"
    shutil.copytree(HOST, project, ignore=shutil.ignore_patterns("dbt_packages", "logs", "target"))
    (project / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    scenario = HostScenario(request.node.name, tmp_path / "work")
    scenario.project_dir = project
    install(project)
    return scenario


def configure_package_models(host: HostScenario, configs: str) -> None:
    """The host's dbt_project.yml with these lines (YAML, indented under the package) for its models."""
    project = host.project_dir / "dbt_project.yml"
    text = project.read_text().split("  visitor_lookup:\n")[0]
    project.write_text(f"{text}  visitor_lookup:\n{configs}")


def test_a_host_project_builds_the_package_exactly(host: HostScenario) -> None:
    seen: list[Raw] = []
    for batch in random_arrivals(seed=31, batches=3):
        host.write_events(batch)
        seen += batch
        result = host.dbt("build", vars=VARS)
        assert {str(r.status) for r in result.result.results} <= {"success", "pass"}
        expected = lookup_tables(processed_events(seen).values())
        assert host.lookup_tables() == expected
        current = {
            (row.visitor_cookie_id, row.user_id)
            for row in host.spark.sql(f"select * from {host.target_schema}.current_cookie_users").collect()
        }
        assert current == {
            (cookie, user) for cookie, user, _, _, is_current, _, _ in expected.visitor_lookup if is_current
        }
    host.dbt("test", vars=VARS)
    # The host's own models named as tables of the package: built in the host's schema, as they say.
    own = {
        name: host.spark.sql(f"select * from {host.target_schema}.{name}").collect()
        for name in ("user_mapping", "first_dates", "processed_events")
    }
    assert own == {
        "user_mapping": [("u1", "acme")],
        "first_dates": [("acme", dt.date(2024, 1, 1))],
        "processed_events": [("o1", "acme")],
    }


@pytest.mark.same_on_both_formats
def test_a_host_whose_models_share_the_packages_names_is_told_the_flag_that_keeps_them_apart(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    host = host_copy(request, tmp_path)
    project = host.project_dir / "dbt_project.yml"
    flag = "  require_ref_searches_node_package_before_root: true\n"
    project.write_text(project.read_text().replace(flag, ""))
    batch = random_arrivals(seed=61, batches=1)[0]
    host.write_events(batch)

    host.dbt("build", vars=VARS, ok=False)
    assert host.logged(
        "Visitor lookup: your project's model.visitor_lookup_integration_tests.first_dates, "
        "model.visitor_lookup_integration_tests.processed_events, "
        "model.visitor_lookup_integration_tests.user_mapping share(s) a name with the package's models, "
        "and dbt gives the package's tests yours to read. Nothing was run. Add "
        "require_ref_searches_node_package_before_root: true under flags: in your dbt_project.yml"
    )
    assert not host.spark.catalog.tableExists(f"{host.schema}.processed_events")
    assert not host.spark.catalog.tableExists(f"{host.target_schema}.user_mapping")

    project.write_text(project.read_text().replace("flags:\n", f"flags:\n{flag}"))
    host.dbt("build", vars=VARS)
    assert host.lookup_tables() == lookup_tables(processed_events(batch).values())


@pytest.mark.same_on_both_formats
def test_a_host_run_of_its_own_models_leaves_the_package_alone(host: HostScenario) -> None:
    batch = random_arrivals(seed=37, batches=1)[0]
    host.write_events(batch)
    host.dbt("build", vars=VARS)
    runs = sorted(host.table("visitor_lookup_runs"))

    host.dbt("run", "--select", "current_cookie_users", vars=VARS)

    assert sorted(host.table("visitor_lookup_runs")) == runs  # no row, no run number
    assert not host.logged("Visitor lookup: ")  # no lock, no erasure table, no expiry
    # the package's views keep their digest (stable_view); a host's own views are dbt's
    properties = host.spark.sql(f"show tblproperties {host.target_schema}.current_cookie_users").collect()
    assert "visitor_lookup.definition" not in {row.key for row in properties}
    package_view = host.spark.sql(f"show tblproperties {host.schema}.visitor_lookup").collect()
    assert "visitor_lookup.definition" in {row.key for row in package_view}
    assert host.lookup_tables() == lookup_tables(processed_events(batch).values())


@pytest.mark.same_on_both_formats
def test_a_host_whose_generate_schema_name_moves_the_models_names_where_erasure_requests_are(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # A copy of the host project whose generate_schema_name puts the package's models in
    # <host schema>__visitor_lookup, where dbt's default custom schema (the source's) would say
    # <host schema>_visitor_lookup.
    host = host_copy(request, tmp_path)
    (host.project_dir / "macros").mkdir()
    (host.project_dir / "macros" / "generate_schema_name.sql").write_text(
        "{% macro generate_schema_name(custom_schema_name, node) -%}\n"
        "    {{ target.schema ~ ('__' ~ custom_schema_name | trim if custom_schema_name else '') }}\n"
        "{%- endmacro %}\n"
    )
    host.schema = f"{host.target_schema}__visitor_lookup"
    batch = random_arrivals(seed=43, batches=1)[0]
    host.write_events(batch)

    host.dbt("run", vars=VARS, ok=False)
    assert host.logged(
        f"the package's tables are in schema {host.schema} (your generate_schema_name), but erasure_requests "
        f"would be in {host.target_schema}_visitor_lookup. Set var visitor_lookup__erasure_requests_schema"
    )
    assert not host.spark.catalog.tableExists(f"{host.schema}.processed_events")

    # named: the requests live there, and the models that read them depend on the source
    named = {**VARS, "visitor_lookup__erasure_requests_schema": host.schema}
    user = next(event.user_id for event in batch if normalise_id(event.user_id))
    args = json.dumps({"request_id": "r1", "user_id": user})
    host.dbt("run-operation", "visitor_lookup_request_erasure", "--args", args, vars=named)
    host.write_json = True
    host.dbt("run", vars=named)
    remaining = [event for event in batch if normalise_id(event.user_id) != normalise_id(user)]
    assert host.lookup_tables() == lookup_tables(processed_events(remaining).values())
    assert [row.request_id for row in host.table("erasure_log")] == ["r1"]
    manifest = json.loads((host.target_dir / "manifest.json").read_text())
    readers = {
        node["name"]
        for node in manifest["nodes"].values()
        if "source.visitor_lookup.visitor_lookup_erasure.erasure_requests" in node["depends_on"]["nodes"]
    }
    assert readers == {"base_erased_events_this_run", "base_events_this_run"}


# The property of the lookup tables that the var visitor_lookup__lookup_write_mode sets, per format,
# with its default value and the other one.
WRITE_MODE_PROPERTY = {
    "iceberg": ("write.merge.mode", "merge-on-read", "copy-on-write"),
    "delta": ("delta.enableDeletionVectors", "false", "true"),
}


def test_a_hosts_table_configs_reach_the_tables_of_the_package_but_not_its_write_mode(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    host = host_copy(request, tmp_path)
    name, ours, other = WRITE_MODE_PROPERTY[table_format()]
    root = tmp_path / "team_tables"

    def configure(write_mode_value: str) -> None:
        """The host's location, properties and options, and the lookup tables' write-mode property."""
        configure_package_models(
            host,
            f"    +location_root: {root}\n"
            "    +tblproperties: {team.owner: web-analytics}\n"
            # an option Delta keeps (it drops the others) and Iceberg and Parquet keep as they keep any
            "    +options: {delta.logRetentionDuration: interval 45 days}\n"
            f"    lookup:\n      +tblproperties: {{team.owner: web-analytics, {name}: {write_mode_value}}}\n",
        )

    # a value that would change the lookup tables' write mode stops the run before it writes one of them
    configure(other)
    first, second = random_arrivals(seed=47, batches=2)
    host.write_events(first)
    host.dbt("run", vars=VARS, ok=False)
    assert host.logged(
        f"the tblproperties config of first_dates sets '{name}' = '{other}', but the lookup tables' write "
        f"mode gives '{ours}': choose it with var visitor_lookup__lookup_write_mode"
    )

    configure(ours)
    host.dbt("run", vars=VARS)  # the stopped run's events, none lost
    assert host.lookup_tables() == lookup_tables(processed_events(first).values())
    host.write_events(second)
    host.dbt("run", vars=VARS)
    assert host.lookup_tables() == lookup_tables(processed_events(first + second).values())

    for table in ("first_dates", "processed_events", "incremental_manifest", "base_events_this_run"):
        properties = {row.key: row.value for row in host.sql(f"show tblproperties {{schema}}.{table}")}
        assert properties["team.owner"] == "web-analytics", table
        assert folder(host, table) == root / table
        # kept among the properties (Iceberg: option.<name>) or the storage properties (Parquet)
        described = " ".join(str(row.data_type) for row in host.sql(f"describe extended {{schema}}.{table}"))
        assert "interval 45 days" in {*properties.values()} or "=interval 45 days" in described, table
    lookup = {row.key: row.value for row in host.sql("show tblproperties {schema}.first_dates")}
    assert lookup[name] == ours  # the project's own, beside the host's
    window = {row.key: row.value for row in host.sql("show tblproperties {schema}.base_events_this_run")}
    assert "visitor_lookup.shape" in window


PUBLIC = {
    "visitor_lookup",
    "first_dates",
    "user_mapping",
    "processed_events",
    "quarantined_events",
    "erasure_log",
}


@pytest.mark.same_on_both_formats
def test_a_host_may_ref_the_documented_tables_and_no_other_model_of_the_package(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    host = host_copy(request, tmp_path)
    models = host.project_dir / "models"
    (models / "team_page_views.sql").write_text(
        "select event_id, user_id from {{ ref('visitor_lookup', 'processed_events') }}\n"
    )
    host.write_json = True
    host.dbt("parse")
    manifest = json.loads((host.target_dir / "manifest.json").read_text())
    access = {
        node["name"]: node["access"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["package_name"] == "visitor_lookup"
    }
    assert {name for name, kind in access.items() if kind == "public"} == PUBLIC
    assert {kind for name, kind in access.items() if name not in PUBLIC} == {"private"}

    (models / "team_window.sql").write_text(
        "select event_id from {{ ref('visitor_lookup', 'base_events_this_run') }}\n"
    )
    result = host.dbt("parse", ok=False)
    assert "base_events_this_run" in str(result.exception)
    assert "private to the 'visitor_lookup' group" in str(result.exception)
