"""Views of the structured-outputs article's jobs."""
