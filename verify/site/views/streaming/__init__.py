"""Views of the streaming article's jobs."""
