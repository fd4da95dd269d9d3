"""Views of the getting_started article's jobs."""
