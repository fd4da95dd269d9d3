"""Views of the metrics article's jobs."""
