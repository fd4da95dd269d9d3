"""Views of the cost article's jobs."""
