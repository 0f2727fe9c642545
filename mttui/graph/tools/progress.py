"""Live progress of a running tool: the capped tail of its output so far.

A :data:`ToolProgress` callback is called as ``progress(call_id, tail)`` with the
current tail of the output (at most :data:`TAIL_BYTES` of it), at most every
:data:`PROGRESS_INTERVAL` seconds while the tool runs, and once at the end.
"""

from __future__ import annotations

from collections.abc import Callable

ToolProgress = Callable[[str, str], None]

TAIL_BYTES = 4096
PROGRESS_INTERVAL = 0.2
