"""The health article's Deployment (snippets/health/deployment.yaml) is a valid Kubernetes object:
it parses into the official client's typed models, field names and types included, and the numbers
the drain-grace job reads from it are the ones the typed model holds."""

from __future__ import annotations

import json

import pytest
import yaml
from kubernetes import client

from tests.conftest import ROOT
from verify.config.profiles import DEFAULT_PROFILE, get_profile
from verify.jobs.health.drain_grace import _manifest_numbers

MANIFEST = ROOT / "snippets" / "health" / "deployment.yaml"


def _typed(obj) -> client.V1Deployment:
    # What the client does with an API server's answer: JSON text into the typed model.
    return client.ApiClient().deserialize(json.dumps(obj), "V1Deployment", "application/json")


def _documents() -> list[dict]:
    return [d for d in yaml.safe_load_all(MANIFEST.read_text(encoding="utf-8")) if d]


def test_the_deployment_parses_into_typed_models():
    (doc,) = _documents()
    dep = _typed(doc)
    pod = dep.spec.template.spec
    c = pod.containers[0]
    assert isinstance(c.startup_probe, client.V1Probe) and c.startup_probe.http_get.path == "/health"
    assert isinstance(c.lifecycle.pre_stop.sleep, client.V1SleepAction)
    numbers = _manifest_numbers(MANIFEST.read_text(encoding="utf-8"))
    assert numbers["grace_period_s"] == pod.termination_grace_period_seconds
    assert numbers["pre_stop_sleep_s"] == c.lifecycle.pre_stop.sleep.seconds
    assert numbers["startup_budget_s"] == (c.startup_probe.initial_delay_seconds or 0) + \
        c.startup_probe.period_seconds * c.startup_probe.failure_threshold
    assert numbers["shutdown_timeout_s"] == int(c.args[c.args.index("--shutdown-timeout") + 1])


def test_the_image_is_the_release_the_page_measured():
    """Not `latest`: the tag names the vLLM release of the site's own profile, which moves with it."""
    (doc,) = _documents()
    image = _typed(doc).spec.template.spec.containers[0].image
    assert image == f"vllm/vllm-openai:v{get_profile(DEFAULT_PROFILE).release}", image


def test_a_misspelt_field_is_lost_by_the_typed_model():
    # The typed model keeps only the fields Kubernetes knows: a typo in a probe is dropped, which
    # the test above would then catch as a missing probe.
    (doc,) = _documents()
    c = doc["spec"]["template"]["spec"]["containers"][0]
    c["startupprobe"] = c.pop("startupProbe")
    assert _typed(doc).spec.template.spec.containers[0].startup_probe is None


def test_a_wrong_type_is_refused():
    (doc,) = _documents()
    doc["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "forty-five"
    with pytest.raises((ValueError, TypeError)):
        _typed(doc)
