"""Views of the latency article's jobs."""
