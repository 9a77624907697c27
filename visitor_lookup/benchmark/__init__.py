"""bin/benchmark: what a run costs beside a naive full rebuild (cli.py says what it measures and how)."""
