"""Helpers for the tests (no tests here): fake servers, session builders, drivers."""
