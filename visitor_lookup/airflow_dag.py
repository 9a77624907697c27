"""The project as an Airflow DAG with astronomer-cosmos: one task, `dbt build --selector
visitor_lookup_incremental`, whose run intake, merges and manifest update belong together.

    pip install -e '.[airflow]'
    # in Airflow's dags folder, a file that builds the DAG for your checkout and target:
    from visitor_lookup.airflow_dag import lookup_dag
    dag = lookup_dag(project_dir="/opt/visitor_lookup", target="thrift")

cosmos's default, a DbtTaskGroup, renders one task per model; the project refuses a run of one model
before it starts, naming the selector (docs/recovery.md, "Orchestrators"). Airflow's retries re-run the
whole task, which is what the project expects: the next run repairs a failed one, and a lapsed lock is
taken over.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from airflow.sdk import DAG
from cosmos import ProfileConfig
from cosmos.operators.local import DbtBuildLocalOperator

ROOT = Path(__file__).resolve().parents[1]
SELECTOR = "visitor_lookup_incremental"


def lookup_dag(
    project_dir: str | Path = ROOT,
    target: str = "local",
    profiles_yml: str | Path | None = None,
    dbt_vars: Mapping[str, Any] | None = None,
    schedule: str | None = "@hourly",
    dag_id: str = "visitor_lookup",
) -> DAG:
    """A DAG of one task that builds the incremental set; one run at a time, no catch-up of missed
    intervals (every run reads all that arrived since the last)."""
    project_dir = Path(project_dir)
    with DAG(
        dag_id,
        schedule=schedule,
        start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        catchup=False,
        max_active_runs=1,
    ) as dag:
        DbtBuildLocalOperator(
            task_id="visitor_lookup",
            project_dir=str(project_dir),
            profile_config=ProfileConfig(
                profile_name="visitor_lookup",
                target_name=target,
                profiles_yml_filepath=Path(profiles_yml or project_dir / "profiles" / "profiles.yml"),
            ),
            dbt_cmd_flags=["--selector", SELECTOR],
            vars=dict(dbt_vars) if dbt_vars else None,
            retries=2,
            retry_delay=dt.timedelta(minutes=5),
        )
    return dag
