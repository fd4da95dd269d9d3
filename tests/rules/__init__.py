"""The rule tests, one module per article (test_<article>.py), over real records captured from a live vLLM server."""
