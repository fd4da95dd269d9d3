"""One module per verification job; the module name is the job id with underscores.

Modules starting with an underscore are shared builders, not jobs.
"""
