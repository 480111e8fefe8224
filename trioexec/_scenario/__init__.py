"""Scenario files (SPEC §8): loading, checking, running, and rendering runs."""
