"""What an adopter reads first: the license, the changelog at the project's version, a short README."""

from __future__ import annotations

import datetime as dt
import json
import re
import tomllib

import pytest
import yaml

from .conftest import ROOT, Scenario
from .reference import Raw

PAGEVIEWS = "source.visitor_lookup.visitor_lookup.pageviews"


def test_the_version_is_one_in_dbt_pyproject_and_the_changelog() -> None:
    dbt_version = yaml.safe_load((ROOT / "dbt_project.yml").read_text())["version"]
    python_version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text()
    latest = re.search(r"^## (\S+)", changelog, re.MULTILINE)
    assert latest is not None
    assert dbt_version == python_version == latest.group(1)


def test_the_license_is_apache_2() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.split("\n", 2)[1].strip() == "Version 2.0, January 2004"
    assert "Apache License" in text.splitlines()[0]
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == "Apache-2.0"


def test_the_readme_gets_a_newcomer_going_in_at_most_150_lines() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    assert "bin/demo" in readme and "bin/test" in readme


@pytest.mark.same_on_both_formats
def test_source_freshness_and_the_docs_site_work_on_the_embedded_default(scenario: Scenario) -> None:
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    scenario.write_events([Raw("e1", "c1", "u1", now - dt.timedelta(hours=2), now - dt.timedelta(hours=1))])
    vars = {"visitor_lookup__start_date": str((now - dt.timedelta(days=1)).date())}
    scenario.dbt("run", vars=vars)

    scenario.dbt("source", "freshness", vars=vars)
    sources = json.loads((scenario.target_dir / "sources.json").read_text())
    (result,) = sources["results"]
    assert (result["unique_id"], result["status"]) == (PAGEVIEWS, "pass")

    scenario.dbt("docs", "generate", vars=vars)
    catalog = json.loads((scenario.target_dir / "catalog.json").read_text())
    assert "model.visitor_lookup.visitor_lookup" in catalog["nodes"]
    lineage = json.loads((scenario.target_dir / "manifest.json").read_text())["parent_map"]
    assert PAGEVIEWS in lineage["model.visitor_lookup.base_events_this_run"]
