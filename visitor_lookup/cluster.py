"""Start and stop a small Spark cluster on this machine, for the `thrift` target.

A standalone master, two workers (one core each, so the Thrift Server's
application gets an executor on each, in JVMs of their own, and its shuffles
cross between them) and a Spark Thrift Server (HiveThriftServer2) submitted
to that master, all from the installed pyspark, all bound to 127.0.0.1. The
Thrift Server gets the Spark settings of the `local` profile output (Delta
through the Hive session catalog, UTC, Derby metastore), or with ``--format
iceberg`` those of the `local_iceberg` output (Iceberg's catalog), with its
warehouse under the cluster's own folder, so the same models run on it
unchanged and the work crosses real executors.

    python -m visitor_lookup.cluster start [--home DIR] [--port 10000] [--format iceberg] [--workers 2]
    python -m visitor_lookup.cluster stop  [--home DIR]

From Python, `with running(cluster):` owns it: its processes end with the
block, and with the calling process however that ends (a signal, SIGKILL).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jinja2
import pyspark
import yaml

from visitor_lookup.spark_home import install_log_config

PROFILES = Path(__file__).resolve().parents[1] / "profiles" / "profiles.yml"
# The profile's embedded and thrift outputs for each table format.
LOCAL_TARGETS = {"delta": "local", "iceberg": "local_iceberg"}
THRIFT_TARGETS = {"delta": "thrift", "iceberg": "thrift_iceberg"}
# Settings of the local output that belong to the embedded session only.
# Settings of the embedded outputs a Thrift Server does not take: a Thrift Server serves many
# sessions, so its metastore is not one process's and the runs take the project's lock.
SESSION_ONLY = {
    "spark.master",
    "spark.app.name",
    "spark.driver.memory",
    "spark.driver.extraJavaOptions",
    "spark.visitor_lookup.single_process_metastore",
}


@dataclass(frozen=True)
class Cluster:
    home: Path
    thrift_port: int = 10000
    master_port: int = 7077
    workers: int = 2
    worker_cores: int = 1
    worker_memory: str = "4g"
    table_format: str = "delta"
    # Spark settings for the Thrift Server's application on top of the profile output's (a test's switches).
    spark_conf: tuple[tuple[str, str], ...] = ()
    # JVM options for the Thrift Server (the application's driver) and its executors.
    java_options: str = ""

    @property
    def dbt_target(self) -> str:
        """The profile's thrift output for this cluster's table format."""
        return THRIFT_TARGETS[self.table_format]

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def pid_file(self) -> Path:
        return self.home / "pids.json"


def free_port() -> int:
    """A TCP port nothing listens on at the moment, on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def thrift_server_conf(warehouse: Path, table_format: str = "delta") -> dict[str, str]:
    """The Spark settings of the embedded output for the table format, rendered for a warehouse folder."""
    output = LOCAL_TARGETS[table_format]
    outputs = yaml.safe_load(PROFILES.read_text())["visitor_lookup"]["outputs"]

    def env_var(name: str, default: str | None = None) -> str:
        if name == "VISITOR_LOOKUP_WAREHOUSE_DIR":
            return str(warehouse)
        value = os.environ.get(name, default)
        if value is None:
            raise KeyError(f"{PROFILES} needs the environment variable {name}")
        return value

    environment = jinja2.Environment()
    return {
        key: environment.from_string(str(value)).render(env_var=env_var)
        for key, value in outputs[output]["server_side_parameters"].items()
        if key not in SESSION_ONLY
    }


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode} before listening on {port}; see {log}")
        with socket.socket() as probe:
            probe.settimeout(1)
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(1)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout:.0f} s; see {log}")


# Runs a command so that the kernel sends it SIGTERM when the process that
# started it ends, however it ends (SIGTERM, SIGKILL, a crash): prctl's
# PR_SET_PDEATHSIG (1) survives the exec, and Spark's scripts exec the JVM.
# SIGTERM's own action is set back to the default first: an ignored signal
# stays ignored across exec, and an owner may ignore it (a shell's background
# job ignores SIGINT, and Dagster, done, gives SIGTERM SIGINT's action), so
# the cluster would outlive it. A wrapper, not preexec_fn, which is unsafe in
# a process with threads (the embedded Spark's). It exits if the owner ended
# before the setting took.
DIE_WITH_OWNER = (
    "import ctypes, os, signal, sys; "
    "signal.signal(signal.SIGTERM, signal.SIG_DFL); "
    "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM) == 0 "
    "or sys.exit('visitor_lookup.cluster: prctl(PR_SET_PDEATHSIG) failed'); "
    "os.getppid() == int(sys.argv[1]) or sys.exit('visitor_lookup.cluster: owner gone before start'); "
    "os.execvp(sys.argv[2], sys.argv[2:])"
)


def _launch(
    cluster: Cluster, name: str, command: list[str], env: dict[str, str], owned: bool
) -> subprocess.Popen:
    log = cluster.home / f"{name}.log"
    if owned:
        command = [sys.executable, "-c", DIE_WITH_OWNER, str(os.getpid()), *command]
    with log.open("w") as output:
        return subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


@contextlib.contextmanager
def running(cluster: Cluster, timeout: float = 240) -> Iterator[Cluster]:
    """The cluster for the life of the calling process: stopped when the block ends (an exception
    included), and by the kernel when the process ends any other way (a signal, SIGKILL)."""
    start(cluster, timeout, owned=True)
    try:
        yield cluster
    finally:
        stop(cluster)


def start(cluster: Cluster, timeout: float = 240, owned: bool = False) -> None:
    """Start master, workers and Thrift Server; return once the Thrift port answers.

    owned: the processes end with the calling process (see running); otherwise they outlive it, as
    `visitor-lookup-cluster start` needs, until `stop`.
    """
    if cluster.pid_file.exists():
        raise RuntimeError(f"a cluster is already recorded in {cluster.pid_file}; stop it first")
    install_log_config()
    cluster.home.mkdir(parents=True, exist_ok=True)
    spark_home = Path(pyspark.__file__).parent
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(cluster.home),
    }
    spark_class = str(spark_home / "bin" / "spark-class")
    started: dict[str, int] = {}
    try:
        master = _launch(
            cluster,
            "master",
            [
                spark_class,
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(cluster.master_port),
                "--webui-port",
                str(cluster.master_port + 1),
            ],
            env,
            owned,
        )
        started["master"] = master.pid
        _wait_for_port(cluster.master_port, master, cluster.home / "master.log", timeout)
        for number in range(1, cluster.workers + 1):
            worker = _launch(
                cluster,
                f"worker-{number}",
                [
                    spark_class,
                    "org.apache.spark.deploy.worker.Worker",
                    cluster.master_url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(cluster.worker_cores),
                    "--memory",
                    cluster.worker_memory,
                    "--work-dir",
                    str(cluster.home / f"work-{number}"),
                    "--webui-port",
                    str(cluster.master_port + 1 + number),
                ],
                env,
                owned,
            )
            started[f"worker-{number}"] = worker.pid
        conf = {
            **thrift_server_conf(cluster.home / "warehouse", cluster.table_format),
            "spark.driver.extraJavaOptions": f"-Dderby.stream.error.file={cluster.home / 'derby.log'} "
            + cluster.java_options,
            "spark.executor.extraJavaOptions": cluster.java_options,
            "spark.executor.memory": "2g",
            "spark.cores.max": str(cluster.workers * cluster.worker_cores),
            **dict(cluster.spark_conf),
        }
        submit = [
            str(spark_home / "bin" / "spark-submit"),
            "--master",
            cluster.master_url,
            "--class",
            "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
            "--name",
            "visitor_lookup_thrift",
        ]
        for key, value in conf.items():
            submit += ["--conf", f"{key}={value}"]
        submit += [
            "--hiveconf",
            f"hive.server2.thrift.port={cluster.thrift_port}",
            "--hiveconf",
            "hive.server2.thrift.bind.host=127.0.0.1",
            "spark-internal",
        ]
        thrift = _launch(cluster, "thrift", submit, env, owned)
        started["thrift"] = thrift.pid
        _wait_for_port(cluster.thrift_port, thrift, cluster.home / "thrift.log", timeout)
    except BaseException:
        _terminate(started)
        raise
    cluster.pid_file.write_text(json.dumps(started))


def _alive(pid: int) -> bool:
    """Whether anything of the process group is left. A process this one started and that has ended
    is reaped first: until then it stays in the group as a zombie, and stop() waited out its timeout."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _terminate(pids: dict[str, int], timeout: float = 30) -> None:
    """SIGTERM each process group (last started first), SIGKILL what outlives the timeout."""
    for pid in reversed(pids.values()):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while any(_alive(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.5)
    for pid in pids.values():
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def stop(cluster: Cluster) -> None:
    """Stop what start() recorded."""
    if not cluster.pid_file.exists():
        print(f"no cluster recorded in {cluster.home}", file=sys.stderr)
        return
    _terminate(json.loads(cluster.pid_file.read_text()))
    cluster.pid_file.unlink()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--home", type=Path, default=Path("warehouse/cluster"), help="logs, pids, tables")
    parser.add_argument("--port", type=int, default=10000, help="Thrift Server port")
    parser.add_argument("--format", choices=["delta", "iceberg"], default="delta", help="table format")
    parser.add_argument("--workers", type=int, default=2, help="workers, one core and one executor each")
    args = parser.parse_args(argv)
    cluster = Cluster(
        args.home.resolve(), thrift_port=args.port, table_format=args.format, workers=args.workers
    )
    if args.action == "start":
        start(cluster)
        print(
            f"Thrift Server on 127.0.0.1:{cluster.thrift_port}, master {cluster.master_url}; "
            f"logs in {cluster.home}. Use: VISITOR_LOOKUP_TARGET={cluster.dbt_target} dbt run"
        )
    else:
        stop(cluster)


if __name__ == "__main__":
    main()
