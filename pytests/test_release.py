"""What an adopter reads first: the license, the changelog at the project's version, a short README."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from .conftest import PROJECT_FILES, ROOT, Scenario
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


# bin/demo runs in a process of its own on the embedded default, whichever the pass: it costs either pass
# the same, and runs in the Delta pass, the shorter one.
@pytest.mark.same_on_both_formats(checked_on="delta")
def test_the_readme_s_first_command_runs_to_its_end(tmp_path: Path) -> None:
    """bin/demo past its set-up, on a copy of the project and a few events: every run, the tests and the
    tables it prints. The tables' rows are checked by the exact suites, not here."""
    for name in PROJECT_FILES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copyfile
        copy(ROOT / name, tmp_path / name)
    env = {key: value for key, value in os.environ.items() if not key.startswith("VISITOR_LOOKUP_")}
    env |= {"DBT_PROFILES_DIR": str(ROOT / "profiles"), "DBT_LOG_PATH": str(tmp_path / "logs")}
    demo = [sys.executable, "-m", "visitor_lookup.demo", "--events", "2000", "--batches", "2"]
    done = subprocess.run(demo, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "demo: dbt test took" in done.stdout
    assert "visitor_lookup for a few cookies that changed hands" in done.stdout
    assert "Next: add Parquet files under data/events" in done.stdout


def test_source_freshness_and_the_docs_site_work_on_the_embedded_default(scenario: Scenario) -> None:
    scenario.write_json = True  # sources.json, catalog.json and manifest.json are read below
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
    assert "model.visitor_lookup.visitor_lookup.v1" in catalog["nodes"]
    lineage = json.loads((scenario.target_dir / "manifest.json").read_text())["parent_map"]
    assert PAGEVIEWS in lineage["model.visitor_lookup.base_events_this_run"]


def test_declared_columns_stop_a_build_that_changes_a_type_or_leaves_one_out(
    scenario: Scenario, tmp_path: Path
) -> None:
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    scenario.write_events([Raw("e1", "c1", "u1", now - dt.timedelta(hours=2), now - dt.timedelta(hours=1))])
    vars = {"visitor_lookup__start_date": str((now - dt.timedelta(days=1)).date())}
    scenario.dbt("run", vars=vars)
    columns = "describe {schema}.visitor_lookup"
    before = (scenario.sql(columns), scenario.table("visitor_lookup"))

    project = tmp_path / "project"
    for name in PROJECT_FILES:
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, project / name)
    model = project / "models" / "lookup" / "visitor_lookup.sql"
    model.write_text(
        model.read_text().replace("spans.start_day,", "cast(spans.start_day as string) as start_day,")
    )
    scenario.project_dir, scenario.target_dir = project, tmp_path / "project_target"
    scenario.dbt("run", vars=vars, ok=False)

    assert scenario.logged("enforced contract") and scenario.logged("start_day")
    assert (scenario.sql(columns), scenario.table("visitor_lookup")) == before

    # a per-run table's columns are declared with their types too: one without stops the run, named
    declared = project / "models" / "run" / "run.yml"
    declared.write_text(declared.read_text().replace("        data_type: array<string>\n", "", 1))
    scenario.dbt("run", "--select", "base_new_event_limits", vars=vars, ok=False)
    assert scenario.logged("column models_missing of base_new_event_limits has no data_type: declare one")


def test_performance_is_a_page_of_current_results_with_their_chart() -> None:
    page = (ROOT / "docs" / "performance.md").read_text()
    assert len(page.splitlines()) <= 250
    assert not (ROOT / "docs" / "benchmarks.md").exists()
    results = ROOT / "docs" / "benchmarks"
    assert sorted(p.name for p in results.iterdir()) == [
        "delta.json",
        "delta.svg",
        "iceberg-spark3.5.json",
        "iceberg-spark4.1.json",
        "iceberg.json",
        "iceberg.svg",
    ]
    for line in ("3.5", "4.1"):  # the two Spark lines side by side, each report naming its stack
        assert json.loads((results / f"iceberg-spark{line}.json").read_text())["stack"]["spark_line"] == line
    for table_format in ("iceberg", "delta"):
        assert f"](benchmarks/{table_format}.svg)" in page
        report = json.loads((results / f"{table_format}.json").read_text())
        assert report["table_format"] == table_format


# A measured change quoted in a comment: "7.0 -> 5.8 s", "took 8 % of", "24 % less".
MEASURED = re.compile(r"\d\s*(->|→)\s*\d|\d\s*%\s*(of|less|more|off|faster|slower)")


def test_code_says_why_not_how_much() -> None:
    code = [
        path
        for folder in (
            "models",
            "macros",
            "tests",
            "profiles",
            "visitor_lookup",
            "pytests",
            "bin",
            "integration_tests",
        )
        for path in (ROOT / folder).rglob("*")
        if path.suffix in {".sql", ".yml", ".py", ".sh", ".properties", ""}
        and path.is_file()
        and not {"target", "logs", "dbt_packages", "__pycache__"} & set(path.parts)
        and path != Path(__file__)
    ] + [ROOT / "dbt_project.yml", ROOT / "selectors.yml"]
    quoting = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in code
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if MEASURED.search(line) or "docs/benchmarks.md" in line
    ]
    assert quoting == []
