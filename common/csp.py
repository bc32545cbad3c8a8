"""The Content-Security-Policy headers: django-csp's middleware, with the site-wide policy built once per process.

django-csp builds both headers (the policy and the report-only one) from the settings on every response, though
they can only differ from one response to the next when a view asks for its own (`csp_update`, `csp_replace`,
`csp` and their report-only forms, or a nonce). A response that asks for none gets the same strings, so
they are built once and kept until the settings change (tests override them); any other response goes django-csp's
own way. The headers sent are the same either way, and so are the rules on which responses get them.
"""

from __future__ import annotations

import http.client
from typing import Any

from csp import middleware
from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.utils import build_policy
from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase

# What django-csp's decorators set on a response: the policy of that response is its own.
OWN_POLICY = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
)
DEBUG_CODES = (http.client.INTERNAL_SERVER_ERROR, http.client.NOT_FOUND)  # Django's debug pages: no header
HEADERS = (  # header, its setting, the response attribute that exempts a response from it
    (HEADER, "CONTENT_SECURITY_POLICY", "_csp_exempt"),
    (HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY", "_csp_exempt_ro"),
)


class CSPMiddleware(middleware.CSPMiddleware):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # setting name -> (the setting's value it was built from, header value, excluded path prefixes)
        self._built: dict[str, tuple[Any, str, tuple[str, ...]]] = {}

    def _site_policy(self, setting: str) -> tuple[str, tuple[str, ...]]:
        config = getattr(settings, setting, None)
        built = self._built.get(setting)
        if built is None or built[0] is not config:
            policy = build_policy(report_only=setting == "CONTENT_SECURITY_POLICY_REPORT_ONLY")
            built = (config, policy, tuple((config or {}).get("EXCLUDE_URL_PREFIXES", None) or ()))
            self._built[setting] = built
        return built[1], built[2]

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, name, None) is not None for name in OWN_POLICY
        ):
            return super().process_response(request, response)
        if response.status_code in DEBUG_CODES and settings.DEBUG:
            return response
        for header, setting, exempt in HEADERS:
            policy, excluded = self._site_policy(setting)
            if (
                policy
                and header not in response
                and getattr(response, exempt, False) is False
                and not request.path_info.startswith(excluded)
            ):
                response[header] = policy
        # As django-csp does: a nonce asked for after the header is written would be in no policy.
        request.csp_nonce = middleware.CheckableLazyObject(self._csp_nonce_post_response)  # type: ignore[attr-defined]
        return response
