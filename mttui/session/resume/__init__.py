"""The log-only resume check (resume.md): facts from the log and the index, the plan, the verdict.

Nothing here imports LangGraph; the graph applies the plan.
"""
