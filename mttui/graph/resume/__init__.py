"""Resuming a session (resume.md): the plan (``plan.py``, read-only) and its apply step
(``apply.py``, the only one that writes)."""
