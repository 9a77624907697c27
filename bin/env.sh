# Sourced by bin/demo and bin/test: the environment a local run needs.
# shellcheck shell=bash
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# VISITOR_LOOKUP_SPARK=<line>: the venv bin/setup --spark <line> made, on that Spark line.
venv="$root/.venv${VISITOR_LOOKUP_SPARK:+-spark$VISITOR_LOOKUP_SPARK}"
export PATH="$venv/bin:$PATH"
# The class archive bin/setup made for that venv's jars (profiles/profiles.yml).
export VISITOR_LOOKUP_CLASS_ARCHIVE="${VISITOR_LOOKUP_CLASS_ARCHIVE:-$venv/spark-classes.jsa}"
export DBT_PROFILES_DIR="$root/profiles"
# The machine's hostname may resolve to another interface; Spark stays on loopback.
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
export TZ=UTC
