"""Views of the openai_server article's jobs."""
