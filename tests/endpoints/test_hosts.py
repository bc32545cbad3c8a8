"""The operator's allow-list of model hosts (MODEL_ALLOWED_HOSTS) and the addresses a host may reach."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from endpoints import hosts
from endpoints.hosts import AllowedHost, HostRefused

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize(
    ("entry", "parsed"),
    [
        ("127.0.0.1", AllowedHost("127.0.0.1", None, False)),
        ("localhost:11434", AllowedHost("localhost", 11434, False)),
        ("Api.Example.ORG.", AllowedHost("api.example.org", None, False)),
        ("*.example.org", AllowedHost("example.org", None, True)),
        ("[::1]:8000", AllowedHost("::1", 8000, False)),
        ("::1", AllowedHost("::1", None, False)),
        ("vllm_server:8000", AllowedHost("vllm_server", 8000, False)),
        ("http://example.org", None),
        ("example.org/v1", None),
        ("*.10.0.0.1", None),
        ("example.org:0", None),
        ("exa mple.org", None),
        ("*.*.example.org", None),
    ],
)
def test_allow_list_entries_are_hosts_optionally_with_a_port_or_a_wildcard_domain(entry, parsed):
    assert hosts.allowed_host_parse(entry) == parsed


@pytest.mark.parametrize(
    ("url", "allowed", "problem"),
    [
        ("http://127.0.0.1:8000/v1", ["127.0.0.1"], None),
        ("http://localhost:11434/v1", ["localhost:11434"], None),
        ("http://localhost:8080/v1", ["localhost:11434"], "not allowed"),
        ("http://127.0.0.1:8000/v1", [], "allows none"),
        ("http://10.1.2.3/v1", ["127.0.0.1"], "10.1.2.3 (port 80) is not allowed"),
        ("http://169.254.169.254/latest/", ["*.amazonaws.com"], "not allowed"),
        ("https://example.org.evil.test/v1", ["*.example.org"], "not allowed"),
        ("http://user:secret@127.0.0.1/v1", ["127.0.0.1"], "no user name or password"),
        ("file:///etc/passwd", ["127.0.0.1"], "http:// or https://"),
        ("gopher://127.0.0.1:6379/_SET", ["127.0.0.1"], "http:// or https://"),
        ("http://127.0.0.1/v1?x=1", ["127.0.0.1"], "no query"),
        ("http://2130706433/v1", ["127.0.0.1"], "not allowed"),  # 127.0.0.1 in disguise is not 127.0.0.1
        ("http://[::ffff:127.0.0.1]/v1", ["127.0.0.1"], "not allowed"),
        ("not a url", ["127.0.0.1"], "http:// or https://"),
    ],
)
def test_a_base_url_is_checked_against_the_allow_list_when_saved(settings, url, allowed, problem):
    settings.MODEL_ALLOWED_HOSTS = allowed

    found = hosts.url_problem(url)

    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def _resolving(monkeypatch, name: str, *addresses: str) -> None:
    real = socket.getaddrinfo

    def resolve(host, port, *args, **kwargs):
        if host == name:
            family = socket.AF_INET6 if ":" in addresses[0] else socket.AF_INET
            return [(family, socket.SOCK_STREAM, 6, "", (address, port)) for address in addresses]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)


@pytest.mark.parametrize(
    "address", ["10.0.0.5", "127.0.0.1", "169.254.169.254", "100.64.0.1", "192.168.1.1", "fd00:ec2::254", "::1"]
)
def test_a_wildcard_host_resolving_to_a_private_address_is_refused(settings, monkeypatch, address):
    settings.MODEL_ALLOWED_HOSTS = ["*.models.example.org"]
    _resolving(monkeypatch, "llm.models.example.org", address)

    problem = hosts.url_problem("https://llm.models.example.org/v1")

    assert problem is not None and f"resolves to {address}" in problem


def test_a_wildcard_host_with_one_private_address_among_public_ones_is_refused(settings, monkeypatch):
    settings.MODEL_ALLOWED_HOSTS = ["*.models.example.org"]
    _resolving(monkeypatch, "llm.models.example.org", "93.184.215.14", "10.0.0.5")

    with pytest.raises(HostRefused, match=r"10\.0\.0\.5"):
        hosts.addresses_allowed("llm.models.example.org", 443, hosts.host_allowed("llm.models.example.org", 443))


def test_a_host_listed_exactly_may_reach_the_labs_network(settings, monkeypatch):
    settings.MODEL_ALLOWED_HOSTS = ["gpu-box.lab.example.org:8000", "*.lab.example.org"]
    _resolving(monkeypatch, "gpu-box.lab.example.org", "10.20.0.7")

    assert hosts.url_problem("http://gpu-box.lab.example.org:8000/v1") is None
    assert "resolves to 10.20.0.7" in (hosts.url_problem("http://gpu-box.lab.example.org:9000/v1") or "")


def test_a_wildcard_host_resolving_to_public_addresses_is_allowed(settings, monkeypatch):
    settings.MODEL_ALLOWED_HOSTS = ["*.models.example.org"]
    _resolving(monkeypatch, "llm.models.example.org", "93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c")

    assert hosts.url_problem("https://llm.models.example.org/v1") is None


def test_a_name_that_does_not_resolve_now_may_be_saved_and_is_checked_at_each_call(settings):
    settings.MODEL_ALLOWED_HOSTS = ["*.invalid"]

    assert hosts.url_problem("http://nothing-here.invalid/v1") is None


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),  # noqa: S104 - an address to refuse, not one to bind
        ("::ffff:127.0.0.1", False),
        ("::ffff:8.8.8.8", True),
        ("fe80::1%eth0", False),
        ("224.0.0.1", False),
    ],
)
def test_public_addresses(address, public):
    assert hosts.is_public(address) is public


def test_manage_check_names_an_entry_that_is_not_a_host(settings):
    settings.MODEL_ALLOWED_HOSTS = ["127.0.0.1", "https://api.example.org/v1"]

    with pytest.raises(SystemCheckError, match=re.escape("https://api.example.org/v1")):
        call_command("check")


def _start(**environment: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in {"ENCRYPTION_KEYS", "MODEL_ALLOWED_HOSTS"}}
    env |= {"DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "false", **environment}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_settings_refuse_to_start_without_encryption_keys_or_with_an_allow_all_host():
    missing = _start()
    malformed = _start(ENCRYPTION_KEYS="not-a-fernet-key")
    everything = _start(ENCRYPTION_KEYS="dGVzdC1vbmx5LWtleS1ub3QtZm9yLXByb2R1Y3Rpb24=", MODEL_ALLOWED_HOSTS="*")
    fine = _start(ENCRYPTION_KEYS="dGVzdC1vbmx5LWtleS1ub3QtZm9yLXByb2R1Y3Rpb24=", MODEL_ALLOWED_HOSTS="127.0.0.1")

    assert missing.returncode != 0 and "ENCRYPTION_KEYS is not set" in missing.stderr
    assert malformed.returncode != 0 and "entry 1 is not a Fernet key" in malformed.stderr
    assert "not-a-fernet-key" not in malformed.stderr
    assert everything.returncode != 0 and "may not allow every host" in everything.stderr
    assert fine.returncode == 0, fine.stderr[-2000:]


def test_the_embedded_default_allows_this_machines_model_servers_and_needs_no_key():
    env = {key: value for key, value in os.environ.items() if key not in {"ENCRYPTION_KEYS", "MODEL_ALLOWED_HOSTS"}}
    env |= {"DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "true"}
    script = "import django; django.setup(); from django.conf import settings; print(settings.MODEL_ALLOWED_HOSTS)"

    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['127.0.0.1', 'localhost']"
