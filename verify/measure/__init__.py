"""Measurement helpers shared by jobs. Part of every job's input hash."""
