"""Record the Java classes a run loads into a class archive that every later JVM maps at start.

A fresh ``dbt`` process on the embedded targets starts a JVM that loads and verifies some
30,000 classes (Spark, Hive's metastore client, DataNucleus, Derby, Iceberg or Delta) before
its first statement returns. Java 17's application class-data sharing keeps them, parsed and
verified, in one file: run once with ``-XX:ArchiveClassesAtExit=<file>``, then every JVM started
with ``-XX:SharedArchiveFile=<file>`` maps that file instead (docs/performance.md).

This module runs, in one JVM, the statements a run and its tests make on each installed table
format: a Hive metastore in a scratch folder; Parquet scratch tables; lookup tables created,
inserted into, merged, compacted, described, listed and dropped. The JVM writes the archive
when it exits. ``visitor-lookup-prepare-spark`` calls it after linking the jars, and again only
when the jars or Java change: Java refuses an archive whose classpath is not the one it was
made with, and then starts as it would without one (``-Xlog:cds*=off`` keeps that quiet).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

from visitor_lookup.cluster import thrift_server_conf

LOOKUP_PROPERTIES = {
    "iceberg": "'format-version' = '2', 'write.merge.mode' = 'merge-on-read', "
    "'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read'",
    "delta": "'delta.enableDeletionVectors' = 'true'",
}


def session(folder: Path, table_format: str, java_options: str) -> SparkSession:
    """A Spark session with the profile's embedded settings for the format, its warehouse in `folder`."""
    conf = {
        "spark.master": "local[*]",
        **thrift_server_conf(folder, table_format),
        "spark.driver.extraJavaOptions": f"-Dderby.stream.error.file={folder}/derby.log {java_options}",
    }
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def statements(events: Path, table_format: str) -> list[str]:
    """A run in miniature: read Parquet files, rank copies, keep new ones, merge a change set."""
    delta = table_format == "delta"
    compact = "optimize warm.lookup" if delta else "select count(*) from warm.lookup.files"
    detail = "describe detail warm.lookup" if delta else "select * from warm.lookup.snapshots"
    return [
        "show databases",
        "create database if not exists warm",
        "show table extended in warm like '*'",
        f"""create table warm.events using parquet as
            select event_id, visitor_cookie_id, user_id, landed,
                row_number() over (partition by event_id order by landed) as copy_rank
            from parquet.`{events}`
            where landed between timestamp'2026-01-01' and timestamp'2026-12-31' or landed is null""",
        f"""create table warm.lookup (visitor_cookie_id string, user_id string, first_seen timestamp)
            using {table_format} tblproperties ({LOOKUP_PROPERTIES[table_format]})""",
        """insert into warm.lookup
            select visitor_cookie_id, max(user_id), min(landed) from warm.events
            where copy_rank = 1 and visitor_cookie_id < 'c5' group by visitor_cookie_id""",
        """merge into warm.lookup as stored
            using (
                select coalesce(new.visitor_cookie_id, old.visitor_cookie_id) as visitor_cookie_id,
                    new.user_id, new.first_seen, new.visitor_cookie_id is null as gone
                from (select visitor_cookie_id, max(user_id) as user_id, min(landed) as first_seen
                      from warm.events group by visitor_cookie_id) as new
                full outer join warm.lookup as old on new.visitor_cookie_id = old.visitor_cookie_id
            ) as changes
            on stored.visitor_cookie_id = changes.visitor_cookie_id
            when matched and changes.gone then delete
            when matched then update set user_id = changes.user_id, first_seen = changes.first_seen""",
        """insert into warm.lookup
            select events.visitor_cookie_id, max(events.user_id), min(events.landed)
            from warm.events left anti join warm.lookup using (visitor_cookie_id)
            group by events.visitor_cookie_id""",
        compact,
        "insert overwrite table warm.lookup select * from warm.lookup",
        detail,
        "describe table extended warm.lookup",
        """select visitor_cookie_id, count(*) from warm.lookup
            group by visitor_cookie_id having count(*) > 1""",
        "drop table if exists warm.events purge",
        "drop table if exists warm.lookup" + ("" if delta else " purge"),
        "drop database if exists warm cascade",
    ]


def warm_up(archive: Path, table_formats: list[str]) -> None:
    """Run the statements on each table format in one JVM, which writes `archive` when it exits."""
    java_options = f"-XX:ArchiveClassesAtExit={archive} -Xlog:cds*=off"
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        events = folder / "events"
        for table_format in table_formats:
            spark = session(folder, table_format, java_options)
            spark.range(2000).selectExpr(
                "concat('e', id % 1900) as event_id",
                "concat('c', id % 97) as visitor_cookie_id",
                "case when id % 3 = 0 then concat('u', id % 7) end as user_id",
                "timestamp'2026-05-01' + make_interval(0, 0, 0, 0, 0, 0, id) as landed",
            ).write.mode("overwrite").parquet(str(events))
            for statement in statements(events, table_format):
                spark.sql(statement).collect()
            spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("archive", type=Path)
    parser.add_argument(
        "--format", dest="formats", action="append", choices=["iceberg", "delta"], required=True
    )
    args = parser.parse_args()
    warm_up(args.archive.resolve(), args.formats)


if __name__ == "__main__":
    main()
