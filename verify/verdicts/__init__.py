"""Whether the pages agree with their evidence: judging, apart from rendering.

`agreement` decides one claim's state against its record (one function every command calls),
`standing` gathers everything a page's claim box shows of one claim (its states, the line across
releases, the timeline) from records read once, `check` finds every contradiction on every page
(`verify check`, the build), `status` lists every claim's verdict and freshness, `releases` reads
verdicts across vLLM releases, `release_prose` requires the paragraph of a release-dependent claim
to name the release, `hardware` tells a timing verdict from other hardware apart from a
contradiction, and `directives` finds the claims a page makes. verify/site/ renders what this layer
decides; the runner reads it too; nothing here renders HTML.
"""
