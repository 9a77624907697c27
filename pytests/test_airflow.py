"""The project under Airflow with astronomer-cosmos: the DAG of visitor_lookup/airflow_dag.py run by Airflow
itself (`dag.test()`, which runs its task in the same process, cosmos invoking dbt there), in a process of
its own with an Airflow home and a warehouse of its own; exact after each run. cosmos runs dbt the same
whatever the tables' format: checked in the Iceberg pass, as Dagster is."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, Scenario
from .reference import lookup_tables, processed_events
from .test_lookup_properties import VARS, random_arrivals
from .test_operations import EXPORT, OwnProcess, as_text

pytestmark = pytest.mark.same_on_both_formats

# The file a team puts in Airflow's dags folder, and one run of its DAG at a logical date.
DAG_FILE = """
from visitor_lookup.airflow_dag import lookup_dag

dag = lookup_dag(project_dir={project!r}, dbt_vars={dbt_vars!r}, schedule=None)
"""
# The tables are read after the run in the same process (the run's Spark, its lock released): a process of
# their own would start a JVM for four queries.
RUN_DAG = (
    """
import datetime as dt, runpy, sys
dag = runpy.run_path(sys.argv[1])["dag"]
run = dag.test(logical_date=dt.datetime.fromisoformat(sys.argv[2]))
print(f"DAG RUN {run.state}")
sys.argv[1:] = sys.argv[3:]
"""
    + EXPORT
)


def test_airflow_runs_the_lookup_dag_exactly(scenario: Scenario, tmp_path: Path) -> None:
    processes = OwnProcess(scenario, tmp_path / "own")
    processes.workdir.mkdir()
    home = tmp_path / "airflow"
    dag_file = home / "dags" / "visitor_lookup_dag.py"
    dag_file.parent.mkdir(parents=True)
    dag_file.write_text(DAG_FILE.format(project=str(ROOT), dbt_vars=VARS))
    env = {
        **processes.env,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dag_file.parent),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
    }
    airflow = str(Path(sys.executable).with_name("airflow"))
    migrated = subprocess.run(
        [airflow, "db", "migrate"], env=env, capture_output=True, text=True, timeout=600
    )
    assert migrated.returncode == 0, migrated.stdout[-3000:] + migrated.stderr[-3000:]

    seen = []
    for day, batch in enumerate(random_arrivals(seed=73, batches=2), start=1):
        scenario.write_events(batch)
        seen += batch
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                RUN_DAG,
                str(dag_file),
                f"2026-01-0{day}T00:00:00+00:00",
                scenario.schema,
                str(ROOT),
            ],
            cwd=processes.workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert "DAG RUN success" in run.stdout, run.stdout[-4000:] + run.stderr[-4000:]
        # one task, dbt in the task's process, the whole incremental set
        (command,) = re.findall(r"Trying to run dbtRunner with:\s*(\[.*?\])", run.stdout + run.stderr)
        assert command.startswith("['build',"), command
        assert "'--selector', 'visitor_lookup_incremental'" in command, command
        (exported,) = [line for line in run.stdout.splitlines() if line.startswith("EXPORT ")]
        tables = json.loads(exported.removeprefix("EXPORT "))
        expected = lookup_tables(processed_events(seen).values())
        assert tables["duplicate_ids"] == [["0"]]
        assert set(map(tuple, tables["first_dates"])) == as_text(expected.first_dates)
        assert set(map(tuple, tables["user_mapping"])) == as_text(expected.user_mapping)
        assert set(map(tuple, tables["visitor_lookup"])) == as_text(expected.visitor_lookup)
