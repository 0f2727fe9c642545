"""The derived index (``index.sqlite``): schema, ingest, pages and search.

Everything here can be rebuilt from the JSONL logs (``ingest.rebuild``).
"""
