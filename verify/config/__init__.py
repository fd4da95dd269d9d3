"""Configuration as data: the profiles a run can use, their server variants, and the vLLM releases checked."""
