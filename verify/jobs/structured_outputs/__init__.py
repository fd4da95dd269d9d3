"""Jobs of "Structured Outputs and Tool Calling" (docs/structured-outputs.md)."""
