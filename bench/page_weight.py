"""Weight of the authoring page in Chromium: bytes transferred and requests, cold and warm cache.

    .venv/bin/python bench/page_weight.py

Production-like: in the bench database (see bench/load.py; its project `bench-load`
must exist, `make bench` creates it), static files collected with hashed, compressed
names (whitenoise, far-future cache headers), DEBUG off, gunicorn on port 8101. A
user `weight-annotator` logs in through the login form, holds a pair with three QA
items (created through the services), and opens its authoring page:

- cold: the browser cache is cleared right before the page is loaded;
- warm: the same page loaded again (CSS, JS and fonts come from the cache).

Bytes are what went over the wire (Chromium's encodedDataLength: headers and
compressed bodies). Targets (issue 9): under 150 KB on first load with the static
files cached, under 10 requests, no JavaScript framework.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PORT = 8101
STATIC_ROOT = "/tmp/localqa-bench-static"


def prepare_pair() -> str:
    from django.contrib.auth import get_user_model

    from annotation.models import Membership, PagePair, Project
    from annotation.services.items import qa_item_create
    from annotation.services.pairs import pair_claim_next, pair_screen
    from bench.load import FACTS, PASSWORD, SLUG

    project = Project.objects.filter(slug=SLUG).first()
    if project is None:
        raise SystemExit("run bench/load.py once first: it creates the bench-load project")
    User = get_user_model()
    user, _ = User.objects.get_or_create(username="weight-annotator")
    user.set_password(PASSWORD)
    user.save()
    Membership.objects.get_or_create(project=project, user=user, defaults={"is_annotator": True})
    pair = PagePair.objects.filter(project=project, assignee=user, status=PagePair.Status.ANNOTATING).first()
    if pair is None:
        pair = pair_claim_next(project=project, user=user)
        assert pair is not None
        pair = pair_screen(pair=pair, user=user, decision="annotate")
        pair.project = project
        for question, standard, local, evidence in FACTS:
            start = pair.local_lead.index(evidence)
            qa_item_create(
                pair=pair, user=user, question=question, answer_standard=standard, answer_local=local,
                spans=[{"start": start, "end": start + len(evidence), "text": evidence}],
            )  # fmt: skip
    return f"/projects/{SLUG}/pairs/{pair.pk}/"


def measure(base: str, path: str) -> dict[str, dict]:
    from playwright.sync_api import sync_playwright

    from bench.load import PASSWORD

    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]  # fmt: skip  (tests/browser/conftest.py)
    results = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), headless=True, args=args
        )
        context = browser.new_context(base_url=base, viewport={"width": 1400, "height": 1000}, locale="en-GB")
        page = context.new_page()
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill("weight-annotator")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state("networkidle")
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        log: dict[str, dict] = {}

        def on_request(e: dict) -> None:
            log.setdefault(e["requestId"], {"url": e["request"]["url"]})

        cdp.on("Network.requestWillBeSent", on_request)
        cdp.on(
            "Network.responseReceived",
            lambda e: log.setdefault(e["requestId"], {}).update(
                status=e["response"]["status"], cached=e["response"].get("fromDiskCache", False)
                or e["response"].get("fromMemoryCache", False), type=e["type"],
            ),
        )  # fmt: skip
        cdp.on(
            "Network.loadingFinished",
            lambda e: log.setdefault(e["requestId"], {}).update(bytes=e["encodedDataLength"]),
        )
        cdp.on("Network.requestServedFromCache", lambda e: log.setdefault(e["requestId"], {}).update(cached=True))
        for label in ("cold", "warm"):
            if label == "cold":
                cdp.send("Network.clearBrowserCache")
            log.clear()
            page.goto(path)
            page.wait_for_load_state("networkidle")
            time.sleep(0.5)
            rows = [r for r in log.values() if not r.get("url", "").startswith("data:")]
            results[label] = {
                "requests": len(rows),
                "from_cache": sum(1 for r in rows if r.get("cached") or r.get("bytes", 0) == 0),
                "bytes": sum(r.get("bytes", 0) for r in rows),
                "rows": sorted(
                    ((r.get("url", "?").replace(base, ""), r.get("bytes", 0), r.get("cached", False)) for r in rows),
                    key=lambda r: -r[1],
                ),
                "scripts": page.evaluate("Array.from(document.scripts).map(s => s.src.split('/').pop() || s.type)"),
            }
        browser.close()
    return results


def main() -> None:
    from bench import load

    load.check_database_url()
    env = load.server_env(PORT)
    env.update(STATIC_MANIFEST="true", STATIC_ROOT=STATIC_ROOT, SESSION_COOKIE_SECURE="false",
               CSRF_COOKIE_SECURE="false", LOGIN_MAX_FAILURES="1000")  # fmt: skip
    os.environ.update(env)
    load.ensure_database()
    load.migrate(env)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    import django

    django.setup()
    path = prepare_pair()
    bin_dir = Path(sys.executable).parent
    server = subprocess.Popen(
        [str(bin_dir / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{PORT}", "--workers", "2",
         "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{PORT}"
    try:
        import asyncio

        asyncio.run(load.wait_ready(base))
        results = measure(base, path)
    finally:
        load.stop_stack([server])
    print(f"authoring page {path} (a pair with three QA items), Chromium, production static files")
    for label, result in results.items():
        print(f"\n{label} cache: {result['requests']} requests ({result['from_cache']} from cache), "
              f"{result['bytes'] / 1024:.1f} KB transferred")  # fmt: skip
        for url, size, cached in result["rows"]:
            print(f"  {size / 1024:8.1f} KB  {'(cache) ' if cached else ''}{url[:110]}")
    print(f"\nscripts on the page: {results['warm']['scripts']}")
    ok = results["warm"]["bytes"] < 150 * 1024 and results["cold"]["requests"] < 10
    print("targets (under 150 KB with static files cached, under 10 requests):", "met" if ok else "NOT met")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
