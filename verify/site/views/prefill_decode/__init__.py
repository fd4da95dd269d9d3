"""Views of the prefill_decode article's jobs."""
