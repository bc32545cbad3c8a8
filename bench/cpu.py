"""CPU and queries per request on the annotators' and reviewers' hot path, in-process, one request at a time.

    .venv/bin/python bench/cpu.py [--rounds 40] [--reuse]

What it does, in its own database (default `localqa_bench`, as bench/load.py; set BENCH_DATABASE_URL and
BENCH_REDIS_URL for another one) with the settings the load benchmark's server runs with (DEBUG off, Redis
cache and throttles, persistent connections):

1. Unless `--reuse`, (re)creates project `bench-cpu` with the load benchmark's data: 20,000 page pairs, the
   annotators, reviewers and a coordinator.
2. Sends each request through Django's WSGI handler with the whole middleware stack, exactly as gunicorn
   hands it over (no test client instrumentation, CSRF checks on): the API with `Authorization: Token …` as
   scripts use it, the two HTML pages with a browser's session cookie.
3. One round = what bench/load.py's people do, in order: an annotator takes the next pair, screens it,
   starts three items and saves each with answers and an evidence span, opens the authoring page, submits;
   a reviewer takes the next slot, opens its review page and judges it, for each of the three items.
4. Measures `time.process_time()` around each request (this process only: the database server's CPU is not
   in it); the first `--warm` rounds are not counted. Then two more rounds count each request's statements as
   Django's test tools count them (transaction control, BEGIN and COMMIT, included).

Prints per endpoint the median and 90th percentile CPU milliseconds and the queries (most seen; their pins are
tests/review/test_hot_path_queries.py), and the median over every API request against its target (≤ 8 ms; the
pages ≤ 15 ms). Exit status 1 when a request answers with an unexpected status.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import load  # noqa: E402 - bench/load.py: the same database, data and server settings

SLUG = "bench-cpu"
API_TARGET_MS, PAGE_TARGET_MS = 8.0, 15.0  # the median over all API requests; each page
ENDPOINTS = [  # name, whether it is an API request (targets differ)
    ("POST queue/next", True),
    ("POST pairs/{id}/screening", True),
    ("POST pairs/{id}/items", True),
    ("PATCH items/{id}", True),
    ("POST pairs/{id}/submit", True),
    ("POST review/next", True),
    ("POST review/slots/{id}", True),
    ("GET authoring page", False),
    ("GET review page", False),
]


class Bench:
    def __init__(self) -> None:
        from django.core.handlers.wsgi import WSGIHandler
        from django.db import connection
        from django.test.client import RequestFactory
        from django.test.utils import CaptureQueriesContext

        self.handler = WSGIHandler()
        self.factory = RequestFactory(SERVER_NAME="127.0.0.1")
        self.connection = connection
        self.capture = CaptureQueriesContext
        self.cpu: dict[str, list[float]] = defaultdict(list)
        self.queries: dict[str, list[int]] = defaultdict(list)
        self.problems: list[str] = []
        self.counting = False
        self.capturing = False
        self.last_sql: dict[str, list[str]] = {}

    def call(
        self, name: str, method: str, path: str, *, ok: int = 200, body: Any = None, headers: dict[str, str]
    ) -> Any:
        data = json.dumps(body) if body is not None else ""
        # The WSGI environ, as a server passes it (the request made here is only its carrier).
        environ = self.factory.generic(method, path, data, content_type="application/json", headers=headers).environ
        status: list[str] = []

        def start_response(
            line: str, response_headers: list[tuple[str, str]], *exc_info: Any
        ) -> Callable[[bytes], None]:
            status.append(line)
            return lambda data: None  # the write() callable; Django's handler never uses it

        if self.capturing:  # counting rounds: every statement, transaction control (BEGIN, COMMIT) included
            with self.capture(self.connection) as captured:
                response = self.handler(environ, start_response)
                content = b"".join(response)
                response.close()
            statements = [query["sql"] for query in captured.captured_queries]
            took = 0.0
        else:  # timed rounds: nothing in the way of the request (no query log)
            started = time.process_time()
            response = self.handler(environ, start_response)
            content = b"".join(response)
            response.close()
            took = time.process_time() - started
        code = int(status[0].split()[0])
        if code != ok:
            self.problems.append(f"{name} {path}: {code} {content[:300]!r}")
            return None
        if self.capturing:
            self.queries[name].append(len(statements))
            self.last_sql[name] = statements
        elif self.counting:
            self.cpu[name].append(took * 1000)
        if content and response.get("Content-Type", "").startswith("application/json"):
            return json.loads(content)
        return content


def prepare(reuse: bool) -> tuple[dict[str, str], dict[str, str]]:
    """Tokens and session cookies of one annotator and one reviewer of the project."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotation.models import PagePair

    if not reuse or PagePair.objects.filter(project__slug=SLUG, status=PagePair.Status.NEW).count() < 1000:
        load.create_data(2, 2, slug=SLUG)
    names = ["bench-annotator-0", "bench-reviewer-0"]
    keys = load.tokens(names)
    cookies = {}
    for user in get_user_model().objects.filter(username__in=names):
        client = Client()
        client.force_login(user)
        cookies[user.username] = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    return keys, cookies


def one_round(bench: Bench, keys: dict[str, str], cookies: dict[str, str]) -> None:
    p = f"/api/projects/{SLUG}"
    annotator = {"Authorization": f"Token {keys['bench-annotator-0']}"}
    reviewer = {"Authorization": f"Token {keys['bench-reviewer-0']}"}
    pair = bench.call("POST queue/next", "POST", f"{p}/queue/next/", headers=annotator)
    if pair is None:
        raise SystemExit("the queue is empty: run without --reuse")
    lead = pair["local_lead"]
    bench.call("POST pairs/{id}/screening", "POST", f"{p}/pairs/{pair['id']}/screening/", headers=annotator,
               body={"decision": "annotate"})  # fmt: skip
    for question, standard, local, evidence in load.FACTS:
        item = bench.call("POST pairs/{id}/items", "POST", f"{p}/pairs/{pair['id']}/items/", ok=201,
                          headers=annotator, body={"question": question})  # fmt: skip
        if item is None:
            continue
        start = lead.index(evidence)
        content = {
            "question": question,
            "answer_standard": standard,
            "answer_local": local,
            "spans": [{"start": start, "end": start + len(evidence), "text": evidence}],
            "version": item["version"],
        }
        bench.call("PATCH items/{id}", "PATCH", f"{p}/items/{item['id']}/", headers=annotator, body=content)
    bench.call("GET authoring page", "GET", f"/projects/{SLUG}/pairs/{pair['id']}/",
               headers={"Cookie": cookies["bench-annotator-0"], "Accept": "text/html"})  # fmt: skip
    bench.call("POST pairs/{id}/submit", "POST", f"{p}/pairs/{pair['id']}/submit/", headers=annotator)
    for _item in load.FACTS:
        slot = bench.call("POST review/next", "POST", f"{p}/review/next/", headers=reviewer)
        if slot is None:
            continue
        bench.call("GET review page", "GET", f"/projects/{SLUG}/review/{slot['id']}/",
                   headers={"Cookie": cookies["bench-reviewer-0"], "Accept": "text/html"})  # fmt: skip
        judgments = {c["key"]: {"verdict": "pass", "comment": ""} for c in slot["criteria"]}
        bench.call("POST review/slots/{id}", "POST", f"{p}/review/slots/{slot['id']}/", headers=reviewer,
                   body={"version": slot["version"], "judgments": judgments})  # fmt: skip


def report(bench: Bench) -> bool:
    print(f"\n{'request':<28}{'n':>5}{'CPU p50 ms':>12}{'CPU p90 ms':>12}{'queries':>9}{'target':>12}  met")
    all_met = True
    api_medians = []
    for name, is_api in ENDPOINTS:
        cpu = sorted(bench.cpu[name])
        if not cpu:
            print(f"{name:<28}{0:>5}")
            all_met = False
            continue
        median = statistics.median(cpu)
        p90 = cpu[min(len(cpu) - 1, round(0.9 * (len(cpu) - 1)))]
        most = max(bench.queries[name])
        fewest = min(bench.queries[name])
        queries = f"{most}" if most == fewest else f"{fewest}-{most}"
        if is_api:
            api_medians.extend(cpu)
            print(f"{name:<28}{len(cpu):>5}{median:>12.2f}{p90:>12.2f}{queries:>9}")
            continue
        met = median <= PAGE_TARGET_MS
        all_met &= met
        target = f"<= {PAGE_TARGET_MS:.0f} ms"
        print(f"{name:<28}{len(cpu):>5}{median:>12.2f}{p90:>12.2f}{queries:>9}{target:>12}  {'yes' if met else 'no'}")
    api = statistics.median(api_medians)
    met = api <= API_TARGET_MS
    all_met &= met
    target = f"<= {API_TARGET_MS:.0f} ms"
    print(f"{'API requests, all':<28}{len(api_medians):>5}{api:>12.2f}{'':>21}{target:>12}  {'yes' if met else 'no'}")
    return all_met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40, help="rounds counted (one pair, three items, 3 reviews)")
    parser.add_argument("--warm", type=int, default=3, help="rounds first run and not counted")
    parser.add_argument("--reuse", action="store_true", help="keep the project of the last run")
    parser.add_argument("--sql", action="store_true", help="also print the statements of each endpoint's last request")
    args = parser.parse_args()
    load.check_database_url()
    env = load.server_env(8100)
    env["ALLOWED_HOSTS"] = "127.0.0.1"
    os.environ.update(env)
    load.ensure_database()
    load.migrate(env)
    import django

    django.setup()
    keys, cookies = prepare(args.reuse)
    bench = Bench()
    for number in range(args.warm + args.rounds):
        bench.counting = number >= args.warm
        one_round(bench, keys, cookies)
    bench.capturing = True  # then the queries, in rounds of their own (a query log costs CPU of its own)
    for _number in range(2):
        one_round(bench, keys, cookies)
    load_average = os.getloadavg()
    print(f"{args.rounds} rounds (after {args.warm} not counted) on {load.BENCH_DB.rsplit('/', 1)[-1]}, "
          f"project {SLUG}; nproc {os.cpu_count()}, load average {load_average[0]:.2f}")  # fmt: skip
    met = report(bench)
    if args.sql:
        for name, _is_api in ENDPOINTS:
            print(f"\n{name}:")
            for sql in bench.last_sql.get(name, []):
                print(f"  {sql[:400]}")
    for problem in bench.problems[:10]:
        print("  unexpected answer:", problem)
    print("targets: " + ("all met" if met else "not all met"))
    raise SystemExit(1 if bench.problems else 0)


if __name__ == "__main__":
    main()
