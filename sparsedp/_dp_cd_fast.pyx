"""Kernel (in progress)."""
