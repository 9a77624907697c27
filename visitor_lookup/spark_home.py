"""Prepare the installed pyspark (its SPARK_HOME) for this project.

pyspark puts every jar under its ``jars/`` folder, and its ``conf/`` folder,
on the classpath of each JVM it starts: the embedded session dbt opens, and a
Thrift Server started with pyspark's ``spark-submit``. Linking the Iceberg
runtime there (from the ``snowpark-connect-deps-iceberg`` package) means no
profile carries a machine path; a log4j2 configuration there, in a jar of its
own, keeps dbt's output readable. All of it lives inside the virtual
environment, so it is redone whenever that environment is rebuilt
(``bin/setup``), and so is the class archive (``visitor_lookup.class_archive``)
that the embedded targets' JVMs map at start: it is made last, for the jars
then in place.

With ``--delta``, Spark also resolves Delta's jars from Maven Central (the
version of the installed ``delta-spark``), once, into its Ivy cache
(``~/.ivy2``), and they are linked beside Iceberg's. Resolving them at every
session start instead (``spark.jars.packages`` in the profile) would print
Ivy's report on every dbt run and, offline, end a run in a Java stack trace
that dbt cannot turn into a clear message.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pyspark
import snowpark_connect_deps_iceberg

# Spark 3.5 as shipped by pyspark is built with Scala 2.12.
RUNTIME_GLOB = "iceberg-spark-runtime-3.5_2.12-*.jar"


def iceberg_runtime_jar() -> Path:
    jars = sorted(Path(snowpark_connect_deps_iceberg.__file__).parent.glob(f"jars/{RUNTIME_GLOB}"))
    if len(jars) != 1:
        raise RuntimeError(
            f"expected one {RUNTIME_GLOB} in snowpark-connect-deps-iceberg, found {jars}; "
            "reinstall the pinned version (pip install -e .)"
        )
    return jars[0]


def link_iceberg_runtime() -> Path:
    """Link the Iceberg runtime jar into pyspark's jars folder; return the link."""
    jar = iceberg_runtime_jar()
    link = Path(pyspark.__file__).parent / "jars" / jar.name
    if link.is_symlink() and link.resolve() == jar.resolve():
        return link
    if link.exists() or link.is_symlink():
        link.unlink()
    link.symlink_to(jar)
    return link


def install_log_config() -> Path:
    """Put this project's log4j2 configuration on Spark's classpath, in a jar in pyspark's jars folder.

    Not as a file in its ``conf/`` folder: Java's class archive is refused for a classpath with a
    folder that holds files, and ``conf/`` is on it (an earlier set-up's file there goes).
    """
    jars = Path(pyspark.__file__).parent / "jars"
    target = jars / "visitor-lookup-log4j2.jar"
    source = Path(__file__).with_name("log4j2.properties").read_bytes()
    if not target.exists() or zipfile.ZipFile(target).read("log4j2.properties") != source:
        with zipfile.ZipFile(target, "w") as jar:
            jar.writestr("log4j2.properties", source)
    (jars.parent / "conf" / "log4j2.properties").unlink(missing_ok=True)
    return target


def prepare_spark_home() -> None:
    link_iceberg_runtime()
    install_log_config()


def class_archive() -> Path:
    """Where the class archive lives: in the virtual environment, where the profile looks first."""
    return Path(sys.prefix) / "spark-classes.jsa"


def classpath_fingerprint() -> str:
    """What an archive is valid for: the jars on Spark's classpath (name, size, time) and the Java."""
    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    # The Java pyspark starts: JAVA_HOME's when it is set, else the one on PATH.
    command = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else "java"
    java = subprocess.run([command, "-version"], capture_output=True, text=True, check=False).stderr
    stats = [f"{jar.name} {jar.stat().st_size} {jar.stat().st_mtime_ns}" for jar in jars]
    return "\n".join([java.strip(), *stats]) + "\n"


def installed_table_formats() -> list[str]:
    """Iceberg always; Delta when its jars are linked (by this set-up or an earlier one)."""
    delta = any((Path(pyspark.__file__).parent / "jars").glob("delta-spark_*.jar"))
    return ["iceberg", "delta"] if delta else ["iceberg"]


def make_class_archive(table_formats: list[str]) -> bool:
    """Make the class archive unless one exists for these jars and Java; return whether it was made."""
    archive = class_archive()
    stamp = archive.with_suffix(".classpath")
    fingerprint = classpath_fingerprint() + " ".join(table_formats) + "\n"
    if archive.exists() and stamp.exists() and stamp.read_text() == fingerprint:
        return False
    # Written under another name and renamed when whole: a JVM that maps a truncated archive crashes.
    partial = archive.with_suffix(".partial")
    archive.unlink(missing_ok=True)
    partial.unlink(missing_ok=True)
    command = [sys.executable, "-m", "visitor_lookup.class_archive", str(partial)]
    for table_format in table_formats:
        command += ["--format", table_format]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        stamp.unlink(missing_ok=True)
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ArchiveNotMade(
            f"the class archive could not be made ({last}); runs work without it, each JVM start "
            "slower: see docs/design.md, 'Configuration in depth'"
        )
    partial.rename(archive)
    stamp.write_text(fingerprint)
    return True


class ArchiveNotMade(RuntimeError):
    """The warm-up run failed; the message is one line."""


class JarsNotFetched(RuntimeError):
    """Spark could not resolve Maven coordinates; the message is one line saying what to do."""


def delta_coordinates() -> str:
    """Delta's Maven coordinates for the installed delta-spark (Spark 3.5 is built with Scala 2.12)."""
    try:
        version = importlib.metadata.version("delta-spark")
    except importlib.metadata.PackageNotFoundError:
        raise JarsNotFetched(
            "delta-spark is not installed: run bin/setup --delta (or pip install -e '.[delta]')"
        ) from None
    return f"io.delta:delta-spark_2.12:{version}"


def fetch_jars(coordinates: str, ivy_dir: Path | None = None) -> list[Path]:
    """Have Spark resolve Maven coordinates and their dependencies into its Ivy cache; return the jars.

    Spark's own resolver does it (``spark-submit --packages``, Maven Central), so the jars are what
    ``spark.jars.packages`` would fetch; ``ivy_dir`` is Spark's ``spark.jars.ivy`` (default ``~/.ivy2``).
    """
    spark_home = Path(pyspark.__file__).parent
    ivy = ivy_dir or Path.home() / ".ivy2"
    with tempfile.TemporaryDirectory() as scratch:
        noop = Path(scratch) / "noop.py"
        noop.write_text("")
        done = subprocess.run(
            [
                str(spark_home / "bin" / "spark-submit"),
                "--conf",
                f"spark.jars.ivy={ivy}",
                "--packages",
                coordinates,
                str(noop),
            ],
            env={**os.environ, "SPARK_HOME": str(spark_home)},
            capture_output=True,
            text=True,
            check=False,
        )
    report = done.stdout + done.stderr
    found = re.findall(r"^\s*found (\S+)#(\S+);(\S+) in ", report, flags=re.MULTILINE)
    jars = [ivy / "jars" / f"{group}_{artifact}-{version}.jar" for group, artifact, version in found]
    if done.returncode != 0 or not jars or not all(jar.exists() for jar in jars):
        missing = sorted(set(re.findall(r"unresolved dependency: (\S+);(\S+): not found", report)))
        named = [f"{module.replace('#', ':')}:{version}" for module, version in missing]
        what = ", ".join(named) or coordinates
        raise JarsNotFetched(
            f"Spark could not fetch {what} from Maven Central into {ivy}: check the network (or a proxy) "
            f"and that delta-spark's version exists for Scala 2.12, or copy the jars of {coordinates} "
            f"and its dependencies into {spark_home / 'jars'}"
        )
    return jars


def link_jars(jars: list[Path], folder: Path | None = None) -> None:
    """Link jars into pyspark's jars folder (or `folder`), except those it already ships (same name and
    version); links to other versions of the same artifact, left by an earlier set-up, go."""
    folder = folder or Path(pyspark.__file__).parent / "jars"
    shipped = {jar.name for jar in folder.glob("*.jar") if not jar.is_symlink()}
    for jar in jars:
        name = jar.name.split("_", 1)[1]  # Ivy names a jar <group>_<artifact>-<version>.jar
        if name in shipped:
            continue
        artifact = name.rsplit("-", 1)[0]
        for earlier in folder.glob(f"{artifact}-*.jar"):
            if earlier.is_symlink() and earlier.name.rsplit("-", 1)[0] == artifact:
                earlier.unlink()
        (folder / name).symlink_to(jar)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--delta", action="store_true", help="also fetch Delta's jars and link them")
    args = parser.parse_args()
    prepare_spark_home()
    print(f"Iceberg runtime and logging set up in {Path(pyspark.__file__).parent}", file=sys.stderr)
    if args.delta:
        try:
            coordinates = delta_coordinates()
            link_jars(fetch_jars(coordinates))
        except JarsNotFetched as error:
            sys.exit(f"visitor-lookup-prepare-spark: {error}")
        print(f"Delta ({coordinates}) set up beside it", file=sys.stderr)
    try:
        if make_class_archive(installed_table_formats()):
            print(f"Class archive for quicker JVM starts made: {class_archive()}", file=sys.stderr)
    except ArchiveNotMade as error:
        print(f"visitor-lookup-prepare-spark: warning: {error}", file=sys.stderr)


if __name__ == "__main__":
    main()
