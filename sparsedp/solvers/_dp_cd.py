"""Solver (in progress)."""
