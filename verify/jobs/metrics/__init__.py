"""Jobs of "Metrics, Alerts and Autoscaling Signals" (docs/metrics.md)."""
