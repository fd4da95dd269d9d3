"""Views of the sampling article's jobs."""
