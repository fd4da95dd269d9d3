"""Jobs of the article "Health, Readiness and Draining" (docs/health.md)."""
