"""The project installed as a dbt package in a host project (integration_tests/), run by `dbt build`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult

from .conftest import ROOT, Scenario
from .reference import Raw, lookup_tables, normalise_id, processed_events
from .test_lookup_properties import VARS, random_arrivals

HOST = ROOT / "integration_tests"


class HostScenario(Scenario):
    """A scenario run from the host project: the package reads the events folder and writes its tables in
    a schema of its own (<host schema>_lookup), both through vars; the host's own model stays in the host
    schema."""

    def __init__(self, name: str, workdir: Path) -> None:
        super().__init__(name, workdir)
        self.project_dir = HOST
        self.host_schema = self.schema
        self.schema = f"{self.host_schema}_lookup"  # visitor_lookup__schema below

    @property
    def target_schema(self) -> str:
        return self.host_schema

    def dbt(self, *args: str, vars: dict | None = None, ok: bool = True) -> dbtRunnerResult:
        package_vars = {
            "visitor_lookup__events_path": str(self.events_dir),
            "visitor_lookup__schema": "lookup",
        }
        return super().dbt(*args, vars={**(vars or {}), **package_vars}, ok=ok)


@pytest.fixture
def host(request: pytest.FixtureRequest, tmp_path: Path) -> HostScenario:
    scenario = HostScenario(request.node.name, tmp_path)
    installed = dbtRunner().invoke(
        ["deps", "--project-dir", str(HOST), "--profiles-dir", str(ROOT / "profiles")]
    )
    assert installed.success, installed.exception
    return scenario


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
            for row in host.spark.sql(f"select * from {host.host_schema}.current_cookie_users").collect()
        }
        assert current == {
            (cookie, user) for cookie, user, _, _, is_current, _, _ in expected.visitor_lookup if is_current
        }
    host.dbt("test", vars=VARS)


def test_a_host_run_of_its_own_models_leaves_the_package_alone(host: HostScenario) -> None:
    batch = random_arrivals(seed=37, batches=1)[0]
    host.write_events(batch)
    host.dbt("build", vars=VARS)
    runs = sorted(host.table("visitor_lookup_runs"))

    host.dbt("run", "--select", "current_cookie_users", vars=VARS)

    assert sorted(host.table("visitor_lookup_runs")) == runs  # no row, no run number
    assert not host.logged("Visitor lookup: ")  # no lock, no erasure table, no expiry
    # the package's views keep their digest (stable_view); a host's own views are dbt's
    properties = host.spark.sql(f"show tblproperties {host.host_schema}.current_cookie_users").collect()
    assert "visitor_lookup.definition" not in {row.key for row in properties}
    package_view = host.spark.sql(f"show tblproperties {host.schema}.visitor_lookup").collect()
    assert "visitor_lookup.definition" in {row.key for row in package_view}
    assert host.lookup_tables() == lookup_tables(processed_events(batch).values())


def test_a_host_whose_generate_schema_name_moves_the_models_names_where_erasure_requests_are(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # A copy of the host project whose generate_schema_name puts the package's models in
    # <host schema>__lookup, where dbt's default custom schema (the source's) would say <host schema>_lookup.
    project = tmp_path / "host_project"
    shutil.copytree(HOST, project, ignore=shutil.ignore_patterns("dbt_packages", "logs", "target"))
    (project / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    (project / "macros").mkdir()
    (project / "macros" / "generate_schema_name.sql").write_text(
        "{% macro generate_schema_name(custom_schema_name, node) -%}\n"
        "    {{ target.schema ~ ('__' ~ custom_schema_name | trim if custom_schema_name else '') }}\n"
        "{%- endmacro %}\n"
    )
    host = HostScenario(request.node.name, tmp_path / "work")
    host.project_dir = project
    host.schema = f"{host.host_schema}__lookup"
    installed = dbtRunner().invoke(
        ["deps", "--project-dir", str(project), "--profiles-dir", str(ROOT / "profiles")]
    )
    assert installed.success, installed.exception
    batch = random_arrivals(seed=43, batches=1)[0]
    host.write_events(batch)

    host.dbt("run", vars=VARS, ok=False)
    assert host.logged(
        f"the package's tables are in schema {host.schema} (your generate_schema_name), but erasure_requests "
        f"would be in {host.host_schema}_lookup. Set var visitor_lookup__erasure_requests_schema"
    )
    assert not host.spark.catalog.tableExists(f"{host.schema}.processed_events")

    # named: the requests live there, and the models that read them depend on the source
    named = {**VARS, "visitor_lookup__erasure_requests_schema": host.schema}
    user = next(event.user_id for event in batch if normalise_id(event.user_id))
    args = json.dumps({"request_id": "r1", "user_id": user})
    host.dbt("run-operation", "visitor_lookup_request_erasure", "--args", args, vars=named)
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
