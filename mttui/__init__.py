"""mttui: a terminal agent with durable, searchable, resumable sessions."""

__version__ = "0.1.0"
