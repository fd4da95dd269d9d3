"""Views of the lifecycle article's jobs."""
