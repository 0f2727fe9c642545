"""The test suite (a package, so its helpers import as ``tests.support``)."""
