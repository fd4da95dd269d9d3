"""Views of the offline article's jobs."""
