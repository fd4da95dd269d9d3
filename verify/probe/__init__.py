"""`verify probe URL`: the streaming article's path checks, run against any OpenAI-compatible endpoint.

http.py talks to the endpoint (timeouts, and one-line errors for what can go
wrong on the way); checks.py runs the checks, applying the same rules as the
site's jobs; report.py prints the table and writes the JSON report.
"""
