"""Views of the kv_cache article's jobs."""
