"""Running jobs and writing their records: `verify run`, `verify releases`, `verify floor`.

The package holds no code of its own, so that each name is patched and imported where it lives:

- run.py: `verify run`, from choosing the stale jobs to the run's summary
- selection.py: which jobs run on a profile, and whether a job's record is fresh
- grouping.py: jobs grouped by the engine start they need; which groups run on a second engine
- server_groups.py: a group of jobs on one server start (in turn, side by side, beside a second engine)
- offline_group.py: the offline jobs, in the child process offline.py runs
- one_job.py: one job's collected data checked, decided and written as its record
- record.py: what a record holds
- run_log.py: the run's log of starts and job times, and where its wall time went
- progress.py: jobs done of total and the time left
- live_sample.py: the live sample against the committed records
- context.py: what a job may use; offline.py: the offline engine's child process
- bisect.py: `verify releases`; floor.py: `verify floor`
"""
