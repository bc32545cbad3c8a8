"""An endpoint of the cast's project pointing at the stub server (tests/model_stub.py)."""

from __future__ import annotations

import pytest

from endpoints import services
from endpoints.models import Endpoint


def make_endpoint(project, coordinator, model_stub, **values) -> Endpoint:
    settings = {"name": "stub chat", "base_url": model_stub.base_url, "model": "qwen2.5-7b-instruct"} | values
    api_key = settings.pop("api_key", "")
    return services.endpoint_create(project=project, user=coordinator, api_key=api_key, **settings)


@pytest.fixture
def endpoint(project, coordinator, model_stub) -> Endpoint:
    return make_endpoint(project, coordinator, model_stub, api_key="sk-test-0123456789")
