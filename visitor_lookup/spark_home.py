"""Prepare the installed pyspark (its SPARK_HOME) for this project.

pyspark puts every jar under its ``jars/`` folder, and its ``conf/`` folder,
on the classpath of each JVM it starts: the embedded session dbt opens, and a
Thrift Server started with pyspark's ``spark-submit``. Linking the Iceberg
runtime there (from the ``snowpark-connect-deps-iceberg`` package) means no
profile carries a machine path; a log4j2 configuration there keeps dbt's
output readable. Both live inside the virtual environment, so they are redone
whenever that environment is rebuilt (``bin/setup``).
"""

from __future__ import annotations

import shutil
import sys
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
    """Copy this project's log4j2 configuration into pyspark's conf folder."""
    target = Path(pyspark.__file__).parent / "conf" / "log4j2.properties"
    target.parent.mkdir(exist_ok=True)
    source = Path(__file__).with_name("log4j2.properties")
    if not target.exists() or target.read_bytes() != source.read_bytes():
        shutil.copyfile(source, target)
    return target


def prepare_spark_home() -> None:
    link_iceberg_runtime()
    install_log_config()


def main() -> None:
    prepare_spark_home()
    print(f"Iceberg runtime and logging set up in {Path(pyspark.__file__).parent}", file=sys.stderr)


if __name__ == "__main__":
    main()
