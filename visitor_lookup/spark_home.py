"""Prepare the installed pyspark (its SPARK_HOME) for this project.

pyspark puts every jar under its ``jars/`` folder, and its ``conf/`` folder,
on the classpath of each JVM it starts: the embedded session dbt opens, and a
Thrift Server started with pyspark's ``spark-submit``. Spark's own resolver
(``spark-submit --packages``) fetches Delta's jars (the version of the
installed ``delta-spark``) and the Iceberg runtime built for the installed
Spark line from Maven Central, once, into its Ivy cache (``~/.ivy2``); the
Iceberg runtime's SHA-256 is checked against the one pinned here, and they are
linked into ``jars/``, so no profile carries a machine path and later runs
start offline. Resolving them at every session start
instead (``spark.jars.packages`` in the profile) would print Ivy's report on
every dbt run and, offline, end a run in a Java stack trace that dbt cannot
turn into a clear message. A log4j2 configuration, in a jar of its own, keeps
dbt's output readable. All of it lives inside the virtual environment, so it
is redone whenever that environment is rebuilt (``bin/setup``), and so is the
class archive (``visitor_lookup.class_archive``) that the embedded targets'
JVMs map at start: it is made last, for the jars then in place.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pyspark


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


def class_archive() -> Path:
    """Where the class archive lives: in the virtual environment, where the profile looks first."""
    return Path(sys.prefix) / "spark-classes.jsa"


def java_version() -> str:
    """What `java -version` says of the Java pyspark starts: JAVA_HOME's when it is set, else PATH's."""
    command = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else "java"
    return subprocess.run([command, "-version"], capture_output=True, text=True, check=False).stderr


def classpath_fingerprint() -> str:
    """What an archive is valid for: the jars on Spark's classpath (name, size, time) and the Java."""
    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    java = java_version()
    stats = [f"{jar.name} {jar.stat().st_size} {jar.stat().st_mtime_ns}" for jar in jars]
    return "\n".join([java.strip(), *stats]) + "\n"


def make_class_archive() -> bool:
    """Make the class archive (both formats' statements run) unless one exists for these jars and Java;
    return whether it was made."""
    table_formats = ["iceberg", "delta"]
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
            "slower: see docs/configuration.md"
        )
    partial.rename(archive)
    stamp.write_text(fingerprint)
    return True


class ArchiveNotMade(RuntimeError):
    """The warm-up run failed; the message is one line."""


class JarsNotFetched(RuntimeError):
    """Spark could not resolve Maven coordinates; the message is one line saying what to do."""


@dataclass(frozen=True)
class SparkLine:
    """What one Spark line (pyspark's major.minor) takes from Maven Central."""

    scala: str
    iceberg: str
    iceberg_sha256: str  # of the runtime jar, as Maven Central publishes it
    delta_artifact: str  # Delta's Spark artifact for this line and Scala
    # Jars this line's pyspark no longer ships and its Thrift Server needs, each fetched alone (Maven
    # coordinates, SHA-256 as Maven Central publishes it): Spark 4 dropped hive-llap-common, whose
    # LlapSigner Hive's function registry loads when a session first needs it, as some closing ones do.
    lone_jars: tuple[tuple[str, str], ...] = ()


SPARK_LINES = {
    "3.5": SparkLine(
        scala="2.12",
        iceberg="1.10.2",
        iceberg_sha256="c562d482dcd16b666e808b755469fbc4b2604284b41622c9d87e2c02b7cc6c5f",
        delta_artifact="delta-spark_2.12",
    ),
    "4.1": SparkLine(
        scala="2.13",
        iceberg="1.12.0",
        iceberg_sha256="3123c3798af642dd537230923548e013ef41cc28b6626e5225808cf5670a0f82",
        delta_artifact="delta-spark_4.1_2.13",
        lone_jars=(
            (
                "org.apache.hive:hive-llap-common:2.3.10",
                "34b9c057b4460b9930746ad663be14aee8a5b3676eeff62129301745072152d7",
            ),
        ),
    ),
}


def spark_line() -> tuple[str, SparkLine]:
    """The installed pyspark's line and what it takes; a line this project has no jars for stops here."""
    line = ".".join(pyspark.__version__.split(".")[:2])
    if line not in SPARK_LINES:
        raise JarsNotFetched(
            f"pyspark {pyspark.__version__} is installed; this project runs Spark "
            f"{' or '.join(SPARK_LINES)}: run bin/setup again"
        )
    return line, SPARK_LINES[line]


def iceberg_coordinates() -> str:
    """The Iceberg runtime's Maven coordinates for the installed Spark line."""
    line, spec = spark_line()
    return f"org.apache.iceberg:iceberg-spark-runtime-{line}_{spec.scala}:{spec.iceberg}"


def delta_coordinates() -> str:
    """Delta's Maven coordinates for the installed delta-spark and Spark line."""
    try:
        version = importlib.metadata.version("delta-spark")
    except importlib.metadata.PackageNotFoundError:
        raise JarsNotFetched("delta-spark is not installed: run bin/setup (or pip install -e .)") from None
    return f"io.delta:{spark_line()[1].delta_artifact}:{version}"


def check_iceberg_runtime(jars: list[Path]) -> None:
    """Refuse an Iceberg runtime whose bytes are not the ones pinned for this Spark line."""
    spec = spark_line()[1]
    for jar in jars:
        if "iceberg-spark-runtime" in jar.name:
            digest = hashlib.sha256(jar.read_bytes()).hexdigest()
            if digest != spec.iceberg_sha256:
                raise JarsNotFetched(
                    f"{jar} has SHA-256 {digest}, not Maven Central's {spec.iceberg_sha256}: "
                    "delete it and run bin/setup again"
                )


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
            f"and that the versions exist for Spark {pyspark.__version__}, or copy the jars of {coordinates} "
            f"and its dependencies into {spark_home / 'jars'}"
        )
    return jars


def fetch_lone_jar(coordinates: str, sha256: str, ivy_dir: Path | None = None) -> Path:
    """One jar without its dependencies (Spark ships those), from Maven Central into Spark's Ivy cache
    under the name Ivy gives it, its SHA-256 checked; a jar already there with those bytes is kept."""
    group, artifact, version = coordinates.split(":")
    jar = (ivy_dir or Path.home() / ".ivy2") / "jars" / f"{group}_{artifact}-{version}.jar"
    if jar.exists() and hashlib.sha256(jar.read_bytes()).hexdigest() == sha256:
        return jar
    folder = f"{group.replace('.', '/')}/{artifact}/{version}"
    url = f"https://repo1.maven.org/maven2/{folder}/{artifact}-{version}.jar"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            data = response.read()
    except OSError as error:
        raise JarsNotFetched(
            f"could not fetch {url} ({error}): check the network (or a proxy), or copy that jar into "
            f"{Path(pyspark.__file__).parent / 'jars'}"
        ) from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise JarsNotFetched(f"{url} has SHA-256 {hashlib.sha256(data).hexdigest()}, not the pinned {sha256}")
    jar.parent.mkdir(parents=True, exist_ok=True)
    jar.write_bytes(data)
    return jar


def unlink_jars(folder: Path | None = None) -> list[Path]:
    """Remove every jar an earlier set-up linked into pyspark's jars folder (or `folder`) and return
    what they linked to: pyspark ships none as a link, and those of another Spark line (after pip moved
    pyspark) stop its JVM starting."""
    folder = folder or Path(pyspark.__file__).parent / "jars"
    earlier = []
    for jar in folder.glob("*.jar"):
        if jar.is_symlink():
            earlier.append(jar.readlink())
            jar.unlink()
    return earlier


def link_jars(jars: list[Path], folder: Path | None = None) -> None:
    """Link jars into pyspark's jars folder (or `folder`), except artifacts it already ships, in any
    version: Spark's own wins, as over ``spark.jars.packages`` (Delta 4 asks for an older Jackson than
    Spark 4's, which breaks Spark's error classes)."""
    folder = folder or Path(pyspark.__file__).parent / "jars"
    shipped = {jar.name.rsplit("-", 1)[0] for jar in folder.glob("*.jar") if not jar.is_symlink()}
    for jar in jars:
        name = jar.name.split("_", 1)[1]  # Ivy names a jar <group>_<artifact>-<version>.jar
        if name.rsplit("-", 1)[0] not in shipped:
            (folder / name).symlink_to(jar)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.parse_args()
    install_log_config()
    earlier = unlink_jars()
    try:
        coordinates = ",".join([iceberg_coordinates(), delta_coordinates()])
        jars = fetch_jars(coordinates)
        check_iceberg_runtime(jars)
        jars += [fetch_lone_jar(*lone) for lone in spark_line()[1].lone_jars]
        link_jars(jars)
    except JarsNotFetched as error:
        link_jars(earlier)  # a set-up that could not fetch leaves the jars as they were
        sys.exit(f"visitor-lookup-prepare-spark: {error}")
    fetched = ",".join([coordinates, *(lone for lone, _ in spark_line()[1].lone_jars)])
    print(f"{fetched} and logging set up in {Path(pyspark.__file__).parent}", file=sys.stderr)
    try:
        if make_class_archive():
            print(f"Class archive for quicker JVM starts made: {class_archive()}", file=sys.stderr)
    except ArchiveNotMade as error:
        print(f"visitor-lookup-prepare-spark: warning: {error}", file=sys.stderr)


if __name__ == "__main__":
    main()
