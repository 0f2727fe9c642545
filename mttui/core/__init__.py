"""The use cases: one typed :class:`~mttui.core.handle.SessionHandle` that the TUI and
the CLI share (open → plan and apply the resume once → run, answer, steer, queue,
drain, compact → close). The only layer that combines ``session/`` and ``graph/``;
it never imports Textual."""
