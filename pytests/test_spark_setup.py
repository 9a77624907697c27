"""Spark's jars: Iceberg's and Delta's, fetched by Spark from Maven Central (a failure is one line saying
what to do), Iceberg's checked against its pinned SHA-256; the class archive a dbt process's JVM maps at
start."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pyspark
import pytest

from visitor_lookup.generate import write_batches
from visitor_lookup.spark_home import (
    SPARK_LINES,
    JarsNotFetched,
    check_iceberg_runtime,
    delta_coordinates,
    fetch_jars,
    fetch_lone_jar,
    iceberg_coordinates,
    link_jars,
    make_class_archive,
    unlink_jars,
)

from .conftest import ROOT

# Processes and files of their own, whatever the pass's format: in the Delta pass, which ends first.
pytestmark = pytest.mark.same_on_both_formats(checked_on="delta")

# The JVM that resolves (spark-submit's) connects through this proxy: 127.0.0.1:9 refuses every
# connection, as a machine without a route to Maven Central does.
OFFLINE = {
    "SPARK_SUBMIT_OPTS": " ".join(f"-D{p}.proxyHost=127.0.0.1 -D{p}.proxyPort=9" for p in ("http", "https"))
}


def test_without_network_setup_stops_with_one_line_naming_the_jars(tmp_path: Path) -> None:
    # an empty home: no Ivy cache to fall back on
    done = subprocess.run(
        [sys.executable, "-m", "visitor_lookup.spark_home"],
        env={**os.environ, **OFFLINE, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    (line,) = [line for line in done.stderr.splitlines() if "Delta" not in line and "Iceberg" not in line]
    assert line.startswith("visitor-lookup-prepare-spark: Spark could not fetch "), done.stderr
    assert iceberg_coordinates() in line and delta_coordinates() in line, line
    assert str(tmp_path / ".ivy2") in line, line
    assert "pyspark/jars" in line, line  # where to put the jars by hand
    assert not make_class_archive()  # the jars linked before are all still there


def test_a_version_maven_central_does_not_have_is_named(tmp_path: Path) -> None:
    with pytest.raises(JarsNotFetched) as raised:
        fetch_jars("io.delta:delta-spark_2.12:0.0.404", tmp_path / "ivy")
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("Spark could not fetch io.delta:delta-spark_2.12:0.0.404 from Maven Central"), (
        message
    )


def test_the_jars_are_fetched_into_the_ivy_cache(tmp_path: Path) -> None:
    jars = fetch_jars(delta_coordinates(), tmp_path / "ivy")
    names = sorted(jar.name for jar in jars)
    _, artifact, version = delta_coordinates().split(":")  # delta-spark_<scala> or delta-spark_<line>_<scala>
    assert f"io.delta_{artifact}-{version}.jar" in names and f"io.delta_delta-storage-{version}.jar" in names
    assert all(jar.is_file() and jar.parent == tmp_path / "ivy" / "jars" for jar in jars)


def test_the_linked_iceberg_runtime_is_maven_centrals_and_other_bytes_are_refused(tmp_path: Path) -> None:
    artifact = iceberg_coordinates().split(":")[1]  # iceberg-spark-runtime-<spark line>_<scala>
    (linked,) = (Path(pyspark.__file__).parent / "jars").glob(f"{artifact}-*.jar")
    version = linked.stem.rsplit("-", 1)[1]
    url = f"https://repo1.maven.org/maven2/org/apache/iceberg/{artifact}/{version}/{linked.name}.sha256"
    with urllib.request.urlopen(url, timeout=30) as response:
        published = response.read().decode().split()[0]
    assert hashlib.sha256(linked.read_bytes()).hexdigest() == published
    check_iceberg_runtime([linked])
    tampered = tmp_path / f"org.apache.iceberg_{linked.name}"
    tampered.write_bytes(linked.read_bytes()[:-1])
    with pytest.raises(JarsNotFetched) as raised:
        check_iceberg_runtime([tampered])
    assert str(raised.value).startswith(f"{tampered} has SHA-256 "), raised.value
    assert str(raised.value).endswith("delete it and run bin/setup again"), raised.value


def test_a_lone_jar_is_fetched_alone_and_other_bytes_are_refused(tmp_path: Path) -> None:
    ((coordinates, sha256),) = SPARK_LINES["4.1"].lone_jars
    jar = fetch_lone_jar(coordinates, sha256, tmp_path / "ivy")
    assert jar == tmp_path / "ivy" / "jars" / "org.apache.hive_hive-llap-common-2.3.10.jar"
    assert hashlib.sha256(jar.read_bytes()).hexdigest() == sha256
    assert list(jar.parent.iterdir()) == [jar]  # none of its dependencies: Spark ships those
    with pytest.raises(JarsNotFetched) as raised:
        fetch_lone_jar(coordinates, "0" * 64, tmp_path / "other_ivy")
    assert f"not the pinned {'0' * 64}" in str(raised.value)
    assert not (tmp_path / "other_ivy" / "jars").exists()


def test_hives_function_registry_loads_as_the_thrift_server_needs_it() -> None:
    # The Thrift Server loads Hive's function registry when a session first needs it (some closing ones
    # do), and the registry loads LlapSigner, which Spark 4 no longer ships (hive-llap-common, a lone jar).
    load = (
        "from pyspark.sql import SparkSession\n"
        "spark = SparkSession.builder.master('local[1]').getOrCreate()\n"
        "spark._jvm.java.lang.Class.forName('org.apache.hadoop.hive.ql.exec.FunctionRegistry')\n"
        "print('LOADED')\n"
    )
    done = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True, timeout=300)
    assert "LOADED" in done.stdout, done.stderr[-3000:]


def test_linking_replaces_every_earlier_link_and_skips_what_spark_ships_in_any_version(
    tmp_path: Path,
) -> None:
    ivy, folder = tmp_path / "ivy", tmp_path / "jars"
    ivy.mkdir()
    folder.mkdir()
    fetched = [
        ivy / "io.delta_delta-spark_4.1_2.13-4.4.0.jar",
        ivy / "org.antlr_antlr4-runtime-4.9.3.jar",
        ivy / "com.fasterxml.jackson.core_jackson-databind-2.13.5.jar",
    ]
    for jar in fetched:
        jar.write_text("")
    (folder / "antlr4-runtime-4.9.3.jar").write_text("")  # shipped by pyspark
    (folder / "jackson-databind-2.21.2.jar").write_text("")  # shipped by pyspark, newer than asked for
    (folder / "jackson-databind-2.13.5.jar").symlink_to(fetched[2])  # linked by an earlier set-up
    # linked for Spark 3.5, before pip moved pyspark to 4.1
    (folder / "delta-spark_2.12-3.3.3.jar").symlink_to(ivy / "io.delta_delta-spark_2.12-3.3.3.jar")
    (folder / "delta-storage-3.3.3.jar").symlink_to(ivy / "io.delta_delta-storage-3.3.3.jar")
    assert sorted(jar.name for jar in unlink_jars(folder)) == [
        "com.fasterxml.jackson.core_jackson-databind-2.13.5.jar",
        "io.delta_delta-spark_2.12-3.3.3.jar",
        "io.delta_delta-storage-3.3.3.jar",
    ]
    link_jars(fetched, folder)
    assert sorted(path.name for path in folder.iterdir()) == [
        "antlr4-runtime-4.9.3.jar",
        "delta-spark_4.1_2.13-4.4.0.jar",
        "jackson-databind-2.21.2.jar",
    ]
    assert (folder / "delta-spark_4.1_2.13-4.4.0.jar").resolve() == fetched[0]
    assert not (folder / "antlr4-runtime-4.9.3.jar").is_symlink()


def dbt_process(
    tmp_path: Path, *args: str, target: str = "local", **env: str
) -> subprocess.CompletedProcess[str]:
    """dbt in a fresh process on an embedded target (its JVM started anew), with tmp_path's warehouse and
    events and the profile's schema (not a scenario's); `env` on top."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), *args, "--no-use-colors", "--target", target],
        cwd=ROOT,
        env={
            **os.environ,
            "DBT_PROFILES_DIR": str(ROOT / "profiles"),
            "DBT_TARGET_PATH": str(tmp_path / "target"),
            "DBT_LOG_PATH": str(tmp_path / "logs"),
            "VISITOR_LOOKUP_WAREHOUSE_DIR": str(tmp_path / "warehouse"),
            "VISITOR_LOOKUP_EVENTS_PATH": str(tmp_path / "events"),
            "VISITOR_LOOKUP_SCHEMA": "analytics",
            **env,
        },
        capture_output=True,
        text=True,
        check=False,
    )


def test_set_up_made_the_class_archive_for_the_jars_in_place() -> None:
    assert not make_class_archive()  # up to date: nothing to make again
    # pyspark puts conf/ on the classpath: Java refuses the archive if it holds files
    conf = Path(pyspark.__file__).parent / "conf"
    assert not conf.exists() or not any(conf.iterdir())


def java_flags(output: str, *names: str) -> dict[str, str]:
    """The values -XX:+PrintFlagsFinal printed for these flags: "type name = value {origin}" lines."""
    found = (line.split() for line in output.splitlines() if line.strip().startswith(("intx", "uintx")))
    return {fields[1]: fields[3] for fields in found if len(fields) > 3 and fields[1] in names}


def test_a_dbt_process_maps_the_class_archive_with_the_parallel_collector_quick_compilation_and_utc(
    tmp_path: Path,
) -> None:
    # -Xshare:on: a JVM that cannot map the archive stops instead of starting without it;
    # -Xlog:gc prints the collector the JVM chose, -XX:+PrintFlagsFinal its flags, -XshowSettings its
    # properties: the JVM's zone UTC on a machine in another (Delta's every commit is quicker in UTC)
    done = dbt_process(
        tmp_path,
        "debug",
        VISITOR_LOOKUP_JAVA_OPTIONS="-Xshare:on -Xlog:gc -XX:+PrintFlagsFinal -XshowSettings:properties",
        TZ="America/New_York",
    )
    assert "Connection test: [OK connection ok]" in done.stdout, done.stdout + done.stderr
    assert "Using Parallel" in done.stdout + done.stderr, done.stdout + done.stderr
    flags = java_flags(done.stdout + done.stderr, "TieredStopAtLevel", "ReservedCodeCacheSize")
    assert flags == {"TieredStopAtLevel": "1", "ReservedCodeCacheSize": str(240 * 1024 * 1024)}
    assert "user.timezone = UTC" in done.stderr, done.stderr


def test_java_options_bring_another_collector_and_the_optimising_compiler_back(tmp_path: Path) -> None:
    done = dbt_process(
        tmp_path,
        "debug",
        VISITOR_LOOKUP_JAVA_OPTIONS="-XX:-UseParallelGC -XX:+UseG1GC -Xlog:gc"
        " -XX:TieredStopAtLevel=4 -XX:+PrintFlagsFinal",
    )
    assert "Connection test: [OK connection ok]" in done.stdout, done.stdout + done.stderr
    assert "Using G1" in done.stdout + done.stderr, done.stdout + done.stderr
    assert java_flags(done.stdout + done.stderr, "TieredStopAtLevel") == {"TieredStopAtLevel": "4"}


def test_an_archive_made_for_other_jars_is_ignored_quietly(tmp_path: Path) -> None:
    # an archive of a JVM whose classpath was Derby's jars (one on Spark 3.5, three on 4), running its sysinfo
    stale = tmp_path / "stale.jsa"
    derby = ":".join(str(jar) for jar in (Path(pyspark.__file__).parent / "jars").glob("derby*.jar"))
    subprocess.run(
        ["java", f"-XX:ArchiveClassesAtExit={stale}", "-cp", derby, "org.apache.derby.tools.sysinfo"],
        capture_output=True,
        check=True,
    )
    assert stale.exists()
    done = dbt_process(tmp_path, "debug", VISITOR_LOOKUP_CLASS_ARCHIVE=str(stale))
    assert "Connection test: [OK connection ok]" in done.stdout, done.stdout + done.stderr
    assert "cds" not in done.stdout + done.stderr


HOLDER = """
import sys, time
from pyspark.sql import SparkSession
warehouse = sys.argv[1]
spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.warehouse.dir", f"{warehouse}/tables")
    .config("spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={warehouse}/metastore_db;create=true")
    .enableHiveSupport()
    .getOrCreate()
)
spark.sql("show databases").collect()
print("holding", flush=True)
time.sleep(600)
"""
BUSY = "another process is using the warehouse"


def dbt_run_beside_another_process(tmp_path: Path, wait_seconds: int, release: bool) -> tuple[int, list[str]]:
    """`dbt run` on the local target while another process has the warehouse's metastore open, until
    the run says it waits for it when `release`; the run's exit code and output lines."""
    warehouse = tmp_path / "warehouse"
    events = tmp_path / "events"
    write_batches(events, 200, 1, end=dt.datetime(2020, 1, 10, tzinfo=dt.UTC), days=5, seed=3, progress=False)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(warehouse)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: list[str] = []
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        run = subprocess.Popen(
            [str(Path(sys.executable).parent / "dbt"), "run", "--no-use-colors", "--target", "local"],
            cwd=ROOT,
            env={
                **os.environ,
                "DBT_PROFILES_DIR": str(ROOT / "profiles"),
                "DBT_TARGET_PATH": str(tmp_path / "target"),
                "DBT_LOG_PATH": str(tmp_path / "logs"),
                "VISITOR_LOOKUP_WAREHOUSE_DIR": str(warehouse),
                "VISITOR_LOOKUP_EVENTS_PATH": str(events),
                "VISITOR_LOOKUP_METASTORE_WAIT_SECONDS": str(wait_seconds),
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert run.stdout is not None
        for line in run.stdout:
            lines.append(line.rstrip("\n"))
            if BUSY in line and release:
                holder.kill()
        returncode = run.wait(timeout=600)
    finally:
        holder.kill()
    busy = [line for line in lines if BUSY in line]
    assert len(busy) == 1, lines[-40:]
    assert f"{BUSY} {warehouse} (its embedded metastore admits one process at a time)" in busy[0]
    assert not [line for line in lines if "XSDB6" in line or line.startswith("\tat ")]
    return returncode, lines


def test_a_second_process_on_the_warehouse_says_so_in_one_line_and_stops(tmp_path: Path) -> None:
    returncode, lines = dbt_run_beside_another_process(tmp_path, wait_seconds=4, release=False)
    assert returncode != 0
    assert len(lines) < 20, lines


def test_a_second_process_on_the_warehouse_waits_for_it(tmp_path: Path) -> None:
    returncode, lines = dbt_run_beside_another_process(tmp_path, wait_seconds=120, release=True)
    assert returncode == 0, lines[-40:]
    assert [line for line in lines if "Visitor lookup: manifest: first_dates processed through" in line]
    assert not [line for line in lines if "run lock" in line]  # the metastore is this process's alone


@pytest.mark.parametrize(
    ("built_on", "run_on", "theirs", "written", "their_target"),
    [
        # a warehouse of 0.9's default target, where local wrote Iceberg tables, run on the Delta default
        ("local_iceberg", "local", "Iceberg", "Delta", "local_iceberg"),
        # and the other way: Iceberg's catalog would read a Delta table without its deletion vectors
        ("local", "local_iceberg", "Delta", "Iceberg", "local"),
    ],
)
def test_tables_of_the_other_format_stop_the_run_in_one_line_naming_their_target(
    tmp_path: Path, built_on: str, run_on: str, theirs: str, written: str, their_target: str
) -> None:
    write_batches(
        tmp_path / "events",
        50,
        1,
        end=dt.datetime(2020, 1, 10, tzinfo=dt.UTC),
        days=2,
        seed=5,
        progress=False,
    )
    built = dbt_process(tmp_path, "run", "--select", "incremental_manifest", target=built_on)
    assert built.returncode == 0, built.stdout[-3000:]
    done = dbt_process(tmp_path, "run", target=run_on)
    assert done.returncode != 0
    (line,) = [line for line in done.stdout.splitlines() if "Visitor lookup: " in line]
    assert line.strip() == (
        f"Visitor lookup: the project's tables in analytics_visitor_lookup are {theirs} tables "
        f"(incremental_manifest), but target '{run_on}' writes {written} tables (its session catalog). "
        "Nothing was changed. Run with a target of their format (on this project's own profile the embedded "
        "target local writes Delta since 0.10.0, local_iceberg Iceberg: "
        f"VISITOR_LOOKUP_TARGET={their_target}), or drop the schema and run again to rebuild them in "
        f"{written} from the raw events."
    ), done.stdout[-3000:]
    assert " OK created " not in done.stdout  # stopped in on-run-start, before any model
