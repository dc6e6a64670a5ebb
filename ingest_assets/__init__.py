"""Dagster definitions over the chunking library.

sources -> documents -> parent_chunks -> child_chunks -> graph_nodes, stored in DuckDB.
"""
