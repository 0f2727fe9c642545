"""A warning in the log, with ``logging`` imported only when one is written (a command
that reads the index never pays for the import: start-up time)."""

from __future__ import annotations


def warn(logger: str, message: str, *args: object) -> None:
    """``logging.getLogger(logger).warning(message, *args)``."""
    import logging

    logging.getLogger(logger).warning(message, *args)
