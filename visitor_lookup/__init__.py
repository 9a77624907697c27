"""Helpers around the visitor lookup dbt project: Spark set-up and sample data."""
