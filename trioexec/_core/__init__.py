"""The run kernel: a run's calls from admission to release, and its two front ends."""
