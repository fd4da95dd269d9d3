"""The Getting-Started notebook's page: the executed copy the site renders, with where its outputs come from."""

from __future__ import annotations

import json

from verify.jobs.getting_started import getting_started_notebook
from verify.site.views import View


# getting-started-notebook
def getting_started_notebook_page(record) -> str:
    """The executed notebook with a first cell saying where its outputs come from."""
    nb = json.loads(json.dumps(record["data"]["executed"]))
    p = record["provenance"]
    note = (f"*Outputs recorded by the verify stage (job `getting-started-notebook`) against a live server: "
            f"{record['profile']} profile, vLLM {p['server'].get('version')}, "
            f"{p['server']['profile']['model'].split(' (')[0]}, {p['hardware'].get('cpu', '')}, {p['date'][:10]}, "
            f"commit {(p['git'].get('commit') or 'unknown')[:10]}. "
            f"[Raw record](../evidence/getting-started-notebook/{record['profile']}.json). "
            "This file is generated; edit `snippets/getting-started/getting_started.ipynb` instead.*")
    nb["cells"].insert(1, {"cell_type": "markdown", "metadata": {}, "source": note, "id": "verify-provenance"})
    nb["metadata"]["verify"] = {"generated": "by verify run getting-started-notebook; do not edit"}
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


VIEWS = {
    "getting-started-notebook": View(pages={getting_started_notebook.PAGE: getting_started_notebook_page}),
}
