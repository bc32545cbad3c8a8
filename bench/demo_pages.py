"""Time the annotator's pages on a running demo server (`make run`), over real HTTP.

Usage: python bench/demo_pages.py [BASE_URL] [ROUNDS]
Logs in as annotator1, then times: project page, next pair, authoring page, autosave.
"""

from __future__ import annotations

import re
import statistics
import sys
import time

import httpx

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
SLUG = "yue-cmn"


def csrf(client: httpx.Client) -> str:
    return client.cookies.get("csrftoken") or ""


def main() -> None:
    timings: dict[str, list[float]] = {}

    def timed(name: str, method: str, url: str, **kwargs) -> httpx.Response:
        started = time.perf_counter()
        response = client.request(method, url, **kwargs)
        timings.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        if response.status_code >= 400:
            raise SystemExit(f"{name}: HTTP {response.status_code}")
        return response

    with httpx.Client(base_url=BASE, follow_redirects=False, timeout=10) as client:
        client.get("/accounts/login/")
        login = client.post(
            "/accounts/login/",
            data={"username": "annotator1", "password": "localqa-demo", "csrfmiddlewaretoken": csrf(client)},
        )
        assert login.status_code == 302, "login failed: is the demo running (make run)?"
        headers = {"X-CSRFToken": csrf(client), "Referer": BASE}
        nxt = client.post(f"/projects/{SLUG}/next/", headers=headers)
        pair_url = nxt.headers["location"]
        page = client.get(pair_url).text
        if "add-item" not in page:
            client.post(pair_url + "screen/", data={"decision": "annotate"}, headers=headers)
        page = client.get(pair_url).text
        match = re.search(r'id="item-(\d+)-version" value="(\d+)"', page)
        if not match:
            client.post(pair_url + "items/new/", headers={**headers, "HX-Request": "true"})
            page = client.get(pair_url).text
            match = re.search(r'id="item-(\d+)-version" value="(\d+)"', page)
        assert match is not None, "no item on the pair page"
        item_id, version = int(match.group(1)), int(match.group(2))
        for round_number in range(ROUNDS):
            timed("GET project page", "GET", f"/projects/{SLUG}/")
            timed("POST next pair", "POST", f"/projects/{SLUG}/next/", headers=headers)
            timed("GET authoring page", "GET", pair_url)
            saved = timed(
                "POST autosave (htmx)",
                "POST",
                f"/projects/{SLUG}/items/{item_id}/save/",
                data={"version": version, "question": f"这间茶餐厅开咗几耐？ {round_number}"},
                headers={**headers, "HX-Request": "true"},
            )
            new_version = re.search(r'value="(\d+)" hx-swap-oob', saved.text)
            assert new_version is not None, "no new version in the autosave's answer"
            version = int(new_version.group(1))
    print(f"{'endpoint':24} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, values in timings.items():
        values.sort()
        p95 = values[min(len(values) - 1, int(len(values) * 0.95))]
        print(f"{name:24} {len(values):4d} {statistics.median(values):8.1f} {p95:8.1f} {values[-1]:8.1f}")


if __name__ == "__main__":
    main()
