"""Benchmarks of the session store (bench.md): ``python -m bench.run``."""
