"""Durable sessions: the JSONL event log, its tolerant reader and the derived index.

Nothing in this package imports Textual or LangGraph.
"""
