"""Load benchmark: a full annotation team against a real server, then an integrity check.

    .venv/bin/python bench/load.py [--people 70] [--seconds 60] [--with-release-build] [--reuse]
    .venv/bin/python bench/load.py --serve          # only start the server stack (make bench-server)

What it does, all on loopback and in its own database (default `localqa_bench`,
created and migrated here; Redis db 11; gunicorn on port 8100):

1. Unless `--reuse`, (re)creates project `bench-load` with 20,000 page pairs,
   annotators and reviewers (default 50 + 20) and a coordinator, with bulk inserts.
2. Starts gunicorn (several workers) and a Celery worker on that database.
3. For `--seconds`, each simulated person works with the pauses removed, through the
   API with token auth (POST /api/auth/token/ once each). Annotators: take the next
   pair, screen it (annotate), start three items, save each draft with its question,
   answers and an evidence span, submit the pair. Reviewers: take the next review
   slot, judge every criterion pass. No request is made after the deadline, and the
   run stops at `--max-requests` in total.
4. Prints per endpoint requests/s, p50/p95/p99 latency and errors, QA items saved per
   second, then checks in the database: no pair and no review slot handed to two
   people, every saved item present with the content the client last saved, every
   evidence span slicing its document to its text.

`--people N` splits N people 5:2 between annotators and reviewers (10 -> 7 + 3,
50 -> 36 + 14, 100 -> 71 + 29); without it, 50 annotators and 20 reviewers.
`--with-release-build` also creates a project of 100,000 accepted items (once) and
asks for a release of it through the service at the start of the run, so the Celery
worker builds it while the team works. Exit status 1 on errors or integrity violations.

That closed loop measures a wall (how much the server answers when nobody pauses), not a team.
`--open --teams 50,100,200` measures a team: people work at the pace of real work (`Pacing`: a
lead QA typed for 5-10 minutes with an autosave every 5 s, a screening after reading both leads,
a review about a minute), each request timed from when it was due, for each team size in turn;
the largest team with every endpoint's p95 under 150 ms, no error and the integrity check intact
is the capacity (a release build runs during each step with `--with-release-build`). Items
waiting for review are made beforehand, as in a project under way.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BENCH_DB = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/localqa_bench")
BENCH_REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/11")
SLUG = "bench-load"
PASSWORD = "bench-password-not-secret"  # noqa: S105 - bench users on a loopback server
PAIRS = 20_000
RELEASE_ITEMS = 100_000

# A lead with three separate facts, and characters outside the BMP (offsets are code points).
LEAD = "𠮶間茶餐廳喺深水埗開咗六十幾年，招牌菜係菠蘿油同埋鴛鴦，老闆姓陳，逢星期三休息。"
STANDARD = "这是一家位于深水埗的茶餐厅，以菠萝包闻名，老板姓陈，逢星期三休息。"
FACTS = [
    ("这家店在哪里？", "深水埗", "深水埗", "深水埗"),
    ("老板姓什么？", "陈", "陳", "老闆姓陳"),
    ("哪天休息？", "星期三", "星期三", "逢星期三休息"),
]


def server_env(port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=BENCH_DB,
        REDIS_URL=BENCH_REDIS,
        CELERY_QUEUE="localqa-bench",
        CACHE_KEY_PREFIX="localqa-bench",
        DEBUG="false",
        SECRET_KEY="bench-only-secret-key-not-for-production-0123456789",  # noqa: S106
        # base64 of "bench-only-key-not-a-real-secret": encrypts nothing worth keeping
        ENCRYPTION_KEYS="YmVuY2gtb25seS1rZXktbm90LWEtcmVhbC1zZWNyZXQ=",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        API_THROTTLE_USER="1000000/min",
        API_THROTTLE_ANON="1000000/min",
        CONN_MAX_AGE="60",
        STATIC_MANIFEST="false",
        MEDIA_ROOT="/tmp/localqa-bench-media",
        LOG_LEVEL="ERROR",
    )
    return env


def check_database_url() -> None:
    name = urlparse(BENCH_DB).path.lstrip("/")
    host = urlparse(BENCH_DB).hostname
    if not (name.startswith("localqa_") and "bench" in name) or host not in {"127.0.0.1", "localhost"}:
        raise SystemExit(f"refusing to run on {BENCH_DB}: the bench database is local and named localqa_*bench*")


def ensure_database() -> None:
    import psycopg

    parsed = urlparse(BENCH_DB)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}")


def migrate(env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)


def split_people(people: int | None, annotators: int, reviewers: int) -> tuple[int, int]:
    if people is None:
        return annotators, reviewers
    reviewers = max(1, round(people * 2 / 7))
    return people - reviewers, reviewers


# Data -------------------------------------------------------------------------------------


def create_data(annotators: int, reviewers: int, *, slug: str = SLUG) -> None:
    """(Re)create the project, its 20,000 pairs and the people, with bulk inserts."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import connection, transaction

    from annotation.models import Membership, PagePair, Project

    started = time.perf_counter()
    User = get_user_model()
    Project.objects.filter(slug=slug).delete()
    password = make_password(PASSWORD)  # one hash (1,000,000 PBKDF2 rounds) for every bench user
    names = [f"bench-annotator-{i}" for i in range(annotators)]
    names += [f"bench-reviewer-{i}" for i in range(reviewers)]
    names.append("bench-coordinator")
    User.objects.bulk_create([User(username=n, password=password) for n in names], ignore_conflicts=True)
    User.objects.filter(username__in=names).update(password=password)
    users = {u.username: u for u in User.objects.filter(username__in=names)}
    # Each person's API token is made by `tokens()` as POST /api/auth/token/ would hand it out: 70 logins at
    # once would each verify the password hash (about a CPU-second each), which is not what this measures.
    with transaction.atomic():
        project = Project.objects.create(
            name="Bench load", slug=slug, local_language="yue", local_wiki="zh-yue",
            standard_language="cmn", standard_wiki="zh", lead_qa_min=3, lead_qa_max=3,
        )  # fmt: skip
        Membership.objects.bulk_create(
            Membership(
                project=project,
                user=user,
                is_annotator=name.startswith("bench-annotator"),
                is_reviewer=name.startswith("bench-reviewer"),
                is_coordinator=name == "bench-coordinator",
            )
            for name, user in users.items()
        )
        PagePair.objects.bulk_create(
            (
                PagePair(project=project, local_title=f"茶餐廳 {n}", standard_title=f"茶餐厅 {n}",
                         local_lead=LEAD, standard_lead=STANDARD, local_lead_length=len(LEAD),
                         standard_lead_length=len(STANDARD))
                for n in range(PAIRS)
            ),
            batch_size=2000,
        )  # fmt: skip
    with connection.cursor() as cursor:  # fresh statistics, as autovacuum would have them after a bulk load
        cursor.execute("ANALYZE")
    took = time.perf_counter() - started
    print(f"created {PAIRS} pairs, {annotators} annotators, {reviewers} reviewers in {took:.1f} s")


def prepare_release_project() -> str:
    from bench import release_build  # bench/release_build.py: the same data as the release benchmark

    slug = f"bench-release-{RELEASE_ITEMS}"
    if not release_build._exists(slug, RELEASE_ITEMS):
        started = time.perf_counter()
        slug = release_build.create_project(RELEASE_ITEMS)
        print(f"created {slug} in {time.perf_counter() - started:.1f} s")
    return slug


def request_release(slug: str) -> int:
    from annotation.models import Project
    from exports import services
    from exports.models import Release

    project = Project.objects.get(slug=slug)
    # A build an earlier run left unfinished (its worker was stopped with the run) would refuse this one until
    # it goes stale; the bench's own project, so it is marked cancelled.
    Release.objects.filter(project=project, status__in=["pending", "running"]).update(status="cancelled")
    release = services.release_request(project=project, user=None, changelog="bench load run")
    return release.pk


def release_state(pk: int) -> str:
    from exports.models import Release

    release = Release.objects.get(pk=pk)
    finished, started = getattr(release, "finished_at", None), getattr(release, "started_at", None)
    return f"release {release.version}: {release.status}" + (
        f" in {(finished - started).total_seconds():.1f} s" if finished and started else ""
    )


# Server -----------------------------------------------------------------------------------


def start_stack(env: dict[str, str], port: int, workers: int, threads: int = 4) -> list[subprocess.Popen]:
    bin_dir = Path(sys.executable).parent
    gunicorn = subprocess.Popen(
        [str(bin_dir / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--worker-class", "gthread", "--threads", str(threads),
         "--backlog", "2048", "--log-level", "warning", "--timeout", "60", "--preload"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    celery = subprocess.Popen(
        [str(bin_dir / "celery"), "-A", "config", "worker", "--queues", "localqa-bench", "--concurrency", "1",
         "--loglevel", "WARNING", "--hostname", f"bench-{port}@%h"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    return [gunicorn, celery]


def stop_stack(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


async def wait_ready(base: str, seconds: float = 60, warm: int = 0) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    async with _client(base, timeout=5) as client:
        while time.monotonic() < deadline:
            try:
                response = await client.get("/api/projects/")
                if response.status_code in (200, 401, 403):
                    break
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.5)
        else:
            raise SystemExit(f"the server at {base} did not come up in {seconds:.0f} s")
        # Warm every worker up (the first request of a process imports the URL modules), before any clock starts.
        await asyncio.gather(*(client.get("/api/projects/", timeout=60) for _ in range(warm)))


# The team ---------------------------------------------------------------------------------


_SSL: Any = None


def _client(base: str, **options: Any) -> Any:
    """An HTTP client of one simulated person. Their TLS settings are made once: httpx makes a fresh SSL context
    (27 ms of CPU) for each client otherwise, and 150 people's clients made at a step's start held the event
    loop for 4 s, then let their first requests go all at once."""
    import ssl

    import httpx

    global _SSL
    if _SSL is None:
        _SSL = ssl.create_default_context()
    return httpx.AsyncClient(base_url=base, verify=_SSL, **options)


@dataclass
class Run:
    deadline: float
    max_requests: int
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    samples: list[str] = field(default_factory=list)
    requests: int = 0
    pairs_handed: list[tuple[int, str]] = field(default_factory=list)
    slots_handed: list[tuple[int, str]] = field(default_factory=list)
    saved: dict[int, dict] = field(default_factory=dict)  # item id -> the content last saved
    submitted_pairs: int = 0
    reviews_done: int = 0
    empty: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def open(self) -> bool:
        return time.monotonic() < self.deadline and self.requests < self.max_requests

    async def wait_until(self, at: float) -> bool:
        """Sleep until `at` (time.monotonic); False, without sleeping, when that is past the end of the run."""
        if at >= self.deadline:
            return False
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        return self.open()

    async def call(self, client, name: str, method: str, url: str, ok=(200, 201, 204), due=None, **kwargs):
        """`due`: when (time.monotonic) the request was meant to go out. A request sent late because the last one
        of this person was slow is timed from then, not from its sending (no coordinated omission)."""
        self.requests += 1
        started = time.perf_counter() - (max(0.0, time.monotonic() - due) if due is not None else 0.0)
        try:
            response = await client.request(method, url, **kwargs)
        except Exception as error:  # a transport failure is an error of the run, counted
            self.latencies[name].append(time.perf_counter() - started)
            self.errors[name] += 1
            if len(self.samples) < 10:
                self.samples.append(f"{name}: {error!r}")
            return None
        self.latencies[name].append(time.perf_counter() - started)
        if response.status_code not in ok:
            self.errors[name] += 1
            if len(self.samples) < 10:
                self.samples.append(f"{name}: {response.status_code} {response.text[:300]}")
            return None
        return response


async def login(run: Run, base: str, username: str) -> None:
    """One real login through the API (timed; the others use the tokens stored with the data)."""

    async with _client(base, timeout=60) as client:
        await run.call(
            client, "POST auth/token", "POST", "/api/auth/token/", ok=(200,),
            data={"username": username, "password": PASSWORD},
        )  # fmt: skip


def tokens(names: list[str]) -> dict[str, str]:
    """A fresh API token for each name (only a digest is stored, so keys cannot be read back later)."""
    from django.contrib.auth import get_user_model

    from accounts.tokens import api_token_create

    people = get_user_model().objects.filter(username__in=names)
    return {person.username: api_token_create(user=person, name="bench")[1] for person in people}


async def annotator(run: Run, base: str, username: str, token: str) -> None:

    headers = {"Authorization": f"Token {token}"}
    async with _client(base, timeout=30, headers=headers) as client:
        p = f"/api/projects/{SLUG}"
        while run.open():
            response = await run.call(client, "POST queue/next", "POST", f"{p}/queue/next/")
            if response is None:
                continue
            if response.status_code == 204:
                run.empty["queue/next"] += 1
                return
            pair = response.json()
            run.pairs_handed.append((pair["id"], username))
            lead = pair["local_lead"]
            if not run.open():
                return
            if await run.call(client, "POST pairs/{id}/screening", "POST", f"{p}/pairs/{pair['id']}/screening/",
                              json={"decision": "annotate"}) is None:  # fmt: skip
                continue
            for question, standard, local, evidence in FACTS:
                if not run.open():
                    return
                created = await run.call(
                    client, "POST pairs/{id}/items", "POST", f"{p}/pairs/{pair['id']}/items/", ok=(201,),
                    json={"question": question},
                )  # fmt: skip
                if created is None:
                    continue
                item = created.json()
                start = lead.index(evidence)
                content = {
                    "question": question,
                    "answer_standard": standard,
                    "answer_local": local,
                    "spans": [{"start": start, "end": start + len(evidence), "text": evidence}],
                }
                run.saved[item["id"]] = {"question": question}
                saved = await run.call(client, "PATCH items/{id}", "PATCH", f"{p}/items/{item['id']}/",
                                       json={**content, "version": item["version"]})  # fmt: skip
                if saved is not None:
                    run.saved[item["id"]] = content
            if not run.open():
                return
            if await run.call(client, "POST pairs/{id}/submit", "POST", f"{p}/pairs/{pair['id']}/submit/"):
                run.submitted_pairs += 1


async def reviewer(run: Run, base: str, username: str, token: str) -> None:

    headers = {"Authorization": f"Token {token}"}
    async with _client(base, timeout=30, headers=headers) as client:
        p = f"/api/projects/{SLUG}"
        while run.open():
            response = await run.call(client, "POST review/next", "POST", f"{p}/review/next/")
            if response is None:
                continue
            if response.status_code == 204:  # nothing submitted yet: the annotators are behind
                run.empty["review/next"] += 1
                await asyncio.sleep(0.2)
                continue
            slot = response.json()
            run.slots_handed.append((slot["id"], username))
            judgments = {c["key"]: {"verdict": "pass", "comment": ""} for c in slot["criteria"]}
            if not run.open():
                return
            if await run.call(client, "POST review/slots/{id}", "POST", f"{p}/review/slots/{slot['id']}/",
                              json={"version": slot["version"], "judgments": judgments}):  # fmt: skip
                run.reviews_done += 1


# Open loop: people working at the pace of real work -------------------------------------


@dataclass(frozen=True)
class Pacing:
    """How fast real people work (issue 21; the study's figures: a lead QA takes 5-10 minutes, a review about one)."""

    autosave: float = 5.0  # seconds between two autosaves while an item is being typed
    item_minutes: tuple[float, float] = (5.0, 10.0)  # writing one lead QA
    read_seconds: tuple[float, float] = (30.0, 90.0)  # reading both leads before the screening decision
    review_seconds: tuple[float, float] = (45.0, 75.0)  # one review
    empty_poll: float = 10.0  # a reviewer with nothing to review looks again after this long
    start_spread: float = 60.0  # a team starts its session over a minute, not all within one autosave


async def paced_annotator(run: Run, base: str, username: str, token: str, pacing: Pacing, rng) -> None:
    """Takes a pair, reads, screens, types each item for minutes with an autosave every few seconds, submits."""

    headers = {"Authorization": f"Token {token}"}
    async with _client(base, timeout=30, headers=headers) as client:
        p = f"/api/projects/{SLUG}"
        if not await run.wait_until(time.monotonic() + rng.uniform(0, pacing.start_spread)):  # not in step
            return
        while run.open():
            response = await run.call(client, "POST queue/next", "POST", f"{p}/queue/next/", due=time.monotonic())
            if response is None or response.status_code == 204:
                run.empty["queue/next"] += response is not None
                return
            pair = response.json()
            run.pairs_handed.append((pair["id"], username))
            lead = pair["local_lead"]
            due = time.monotonic() + rng.uniform(*pacing.read_seconds)
            if not await run.wait_until(due):
                return
            if await run.call(client, "POST pairs/{id}/screening", "POST", f"{p}/pairs/{pair['id']}/screening/",
                              json={"decision": "annotate"}, due=due) is None:  # fmt: skip
                return
            for question, standard, local, evidence in FACTS:
                created = await run.call(client, "POST pairs/{id}/items", "POST", f"{p}/pairs/{pair['id']}/items/",
                                         ok=(201,), json={"question": question}, due=time.monotonic())  # fmt: skip
                if created is None:
                    return
                item = created.json()
                run.saved[item["id"]] = {"question": question}
                start = lead.index(evidence)
                content = {"question": question, "answer_standard": standard, "answer_local": local,
                           "spans": [{"start": start, "end": start + len(evidence), "text": evidence}]}  # fmt: skip
                version, due = item["version"], time.monotonic()
                end = due + rng.uniform(*pacing.item_minutes) * 60
                while due + pacing.autosave < end:  # the draft as it stands, every few seconds
                    due += pacing.autosave
                    if not await run.wait_until(due):
                        return
                    saved = await run.call(client, "PATCH items/{id}", "PATCH", f"{p}/items/{item['id']}/",
                                           json={**content, "version": version}, due=due)  # fmt: skip
                    if saved is None:
                        return
                    version = saved.json()["version"]
                    run.saved[item["id"]] = content
            due = time.monotonic()
            if await run.call(client, "POST pairs/{id}/submit", "POST", f"{p}/pairs/{pair['id']}/submit/", due=due):
                run.submitted_pairs += 1


async def paced_reviewer(run: Run, base: str, username: str, token: str, pacing: Pacing, rng) -> None:
    """Takes the next review, reads and judges for about a minute, records it."""

    headers = {"Authorization": f"Token {token}"}
    async with _client(base, timeout=30, headers=headers) as client:
        p = f"/api/projects/{SLUG}"
        due = time.monotonic() + rng.uniform(0, pacing.review_seconds[0])
        while await run.wait_until(due):
            response = await run.call(client, "POST review/next", "POST", f"{p}/review/next/", due=due)
            if response is None:
                return
            if response.status_code == 204:
                run.empty["review/next"] += 1
                due = time.monotonic() + pacing.empty_poll
                continue
            slot = response.json()
            run.slots_handed.append((slot["id"], username))
            judgments = {c["key"]: {"verdict": "pass", "comment": ""} for c in slot["criteria"]}
            due = time.monotonic() + rng.uniform(*pacing.review_seconds)
            if not await run.wait_until(due):
                return
            if await run.call(client, "POST review/slots/{id}", "POST", f"{p}/review/slots/{slot['id']}/",
                              json={"version": slot["version"], "judgments": judgments}, due=due):  # fmt: skip
                run.reviews_done += 1
            due = time.monotonic()


def seed_reviews(items: int) -> int:
    """Items waiting for review at the start of an open-loop run, as a team in the middle of a project has them
    (the paced annotators submit their first pair only after 15-30 minutes). Made through the services."""
    from django.contrib.auth import get_user_model

    from annotation.models import Project
    from annotation.services.items import qa_item_create
    from annotation.services.members import membership_set
    from annotation.services.pairs import pair_claim_next, pair_screen
    from annotation.services.submission import pair_submit
    from review.models import ReviewSlot

    project = Project.objects.get(slug=SLUG)
    waiting = ReviewSlot.objects.filter(item__project=project, status=ReviewSlot.Status.OPEN).count()
    seeder, _ = get_user_model().objects.get_or_create(username="bench-seeder")
    membership_set(project=project, user=seeder, roles={"annotator"})
    made = 0
    while waiting + made < items:
        pair = pair_claim_next(project=project, user=seeder)
        if pair is None:
            break
        pair = pair_screen(pair=pair, user=seeder, decision="annotate")
        for question, standard, local, evidence in FACTS:
            start = pair.local_lead.index(evidence)
            qa_item_create(
                pair=pair, user=seeder, question=question, answer_standard=standard, answer_local=local,
                spans=[{"start": start, "end": start + len(evidence), "text": evidence}],
            )  # fmt: skip
        pair_submit(pair=pair, user=seeder)
        made += len(FACTS)
    return waiting + made


async def drive_paced(
    base: str, keys: dict[str, str], annotators: int, reviewers: int, seconds: float, pacing: Pacing, seed: int
) -> tuple[Run, float]:
    import random

    rng = random.Random(seed)
    run = Run(deadline=time.monotonic() + seconds, max_requests=10**9)
    started = time.monotonic()
    tasks = [paced_annotator(run, base, f"bench-annotator-{i}", keys[f"bench-annotator-{i}"], pacing, rng)
             for i in range(annotators)]  # fmt: skip
    tasks += [paced_reviewer(run, base, f"bench-reviewer-{i}", keys[f"bench-reviewer-{i}"], pacing, rng)
              for i in range(reviewers)]  # fmt: skip
    await asyncio.gather(*tasks)
    return run, time.monotonic() - started


P95_LIMIT_MS = 150.0


def step_verdict(run: Run) -> tuple[bool, str]:
    """Whether a team held: every endpoint's p95 under the limit and no error; and the worst endpoint."""
    worst = max(
        ((percentile([v * 1000 for v in values], 95), name) for name, values in run.latencies.items() if values),
        default=(0.0, "-"),
    )
    errors = sum(run.errors.values())
    return worst[0] < P95_LIMIT_MS and errors == 0, f"worst p95 {worst[0]:.0f} ms ({worst[1]}), errors {errors}"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def report(run: Run, seconds: float) -> None:
    columns = ["requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "max ms"]
    print(f"\n{'endpoint':<28}{columns[0]:>9}" + "".join(f"{c:>8}" for c in columns[1:]) + f"{'errors':>7}")
    total = 0
    for name in sorted(run.latencies):
        values = run.latencies[name]
        total += len(values)
        if name == "POST auth/token":  # the one login, before the clock
            print(f"{name:<28}{len(values):>9}{'-':>8}{values[0] * 1000:>8.0f}{'':>24}{run.errors[name]:>7}")
            continue
        ms = [v * 1000 for v in values]
        print(f"{name:<28}{len(values):>9}{len(values) / seconds:>8.1f}{statistics.median(ms):>8.0f}"
              f"{percentile(ms, 95):>8.0f}{percentile(ms, 99):>8.0f}{max(ms):>8.0f}{run.errors[name]:>7}")  # fmt: skip
    print(f"{'all':<28}{total:>9}{total / seconds:>8.1f}{'':>32}{sum(run.errors.values()):>7}")
    complete = sum(1 for content in run.saved.values() if "spans" in content)
    print(f"\nQA items saved with evidence: {complete} = {complete / seconds:.1f} items/s; "
          f"pairs submitted: {run.submitted_pairs}; reviews recorded: {run.reviews_done} "
          f"({run.reviews_done / seconds:.1f}/s); empty queue answers: {dict(run.empty)}")  # fmt: skip
    for sample in run.samples:
        print("  error sample:", sample)


def check_integrity(run: Run) -> list[str]:
    from collections import Counter

    from annotation.models import EvidenceSpan, PagePair, QAItem
    from review.models import ReviewSlot

    problems = []
    twice = [pk for pk, n in Counter(pk for pk, _ in run.pairs_handed).items() if n > 1]
    if twice:
        problems.append(f"{len(twice)} pairs handed out more than once, e.g. {twice[:5]}")
    holders = dict(run.pairs_handed)
    wrong = [
        pk for pk, assignee in PagePair.objects.filter(pk__in=holders).values_list("pk", "assignee__username")
        if assignee != holders[pk]
    ]  # fmt: skip
    if wrong:
        problems.append(f"{len(wrong)} pairs assigned to someone else than the annotator handed them, e.g. {wrong[:5]}")
    twice = [pk for pk, n in Counter(pk for pk, _ in run.slots_handed).items() if n > 1]
    if twice:
        problems.append(f"{len(twice)} review slots handed out more than once, e.g. {twice[:5]}")
    slot_holders = dict(run.slots_handed)
    wrong = [
        pk for pk, reviewer in ReviewSlot.objects.filter(pk__in=slot_holders).values_list("pk", "reviewer__username")
        if reviewer != slot_holders[pk]
    ]  # fmt: skip
    if wrong:
        problems.append(f"{len(wrong)} review slots held by someone else than the reviewer handed them")
    items = {item.pk: item for item in QAItem.objects.alive().filter(pk__in=run.saved).prefetch_related("spans")}
    missing = [pk for pk in run.saved if pk not in items]
    if missing:
        problems.append(f"{len(missing)} saved items missing, e.g. {missing[:5]}")
    differ = []
    for pk, content in run.saved.items():
        item = items.get(pk)
        if item is None:
            continue
        stored: dict[str, Any] = {"question": item.question}
        if "spans" in content:
            stored.update(answer_standard=item.answer_standard, answer_local=item.answer_local)
            stored["spans"] = [{"start": s.start, "end": s.end, "text": s.text} for s in item.spans.all()]
        if stored != content:
            differ.append(pk)
    if differ:
        problems.append(f"{len(differ)} items differ from what was saved, e.g. {differ[:5]}")
    bad_spans = 0
    spans = EvidenceSpan.objects.filter(item__project__slug=SLUG, start__isnull=False).select_related("item__pair")
    for span in spans.iterator(chunk_size=2000):
        pair = span.item.pair
        document = {"local_lead": pair.local_lead, "local_text": pair.local_text}.get(span.document, pair.local_lead)
        if document[span.start : span.end] != span.text:
            bad_spans += 1
    if bad_spans:
        problems.append(f"{bad_spans} evidence spans do not slice to their text")
    return problems


async def drive(
    base: str, keys: dict[str, str], annotators: int, reviewers: int, seconds: float, max_requests: int
) -> tuple[Run, float]:
    run = Run(deadline=time.monotonic() + 120, max_requests=max_requests)
    await login(run, base, "bench-coordinator")
    run.deadline = time.monotonic() + seconds
    started = time.monotonic()
    names = [f"bench-annotator-{i}" for i in range(annotators)]
    tasks = [annotator(run, base, name, keys[name]) for name in names]
    names = [f"bench-reviewer-{i}" for i in range(reviewers)]
    tasks += [reviewer(run, base, name, keys[name]) for name in names]
    await asyncio.gather(*tasks)
    return run, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--people", type=int, help="total simulated people, split 5:2 annotators:reviewers")
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-requests", type=int, default=500_000, help="stop after this many requests in all")
    parser.add_argument("--with-release-build", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="keep the data of the last run (skip creating it)")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--workers", type=int, default=max(2, (os.cpu_count() or 2) * 2))
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--serve", action="store_true", help="only run the server stack until interrupted")
    parser.add_argument("--open", action="store_true", help="open loop at the pace of real work (see Pacing)")
    parser.add_argument("--teams", default="", help="open loop: team sizes to try in turn, e.g. 50,100,200 (5:2)")
    parser.add_argument("--autosave", type=float, default=Pacing.autosave, help="open loop: seconds between saves")
    parser.add_argument("--item-minutes", type=float, nargs=2, default=Pacing.item_minutes, metavar=("MIN", "MAX"))
    parser.add_argument("--review-seconds", type=float, nargs=2, default=Pacing.review_seconds, metavar=("MIN", "MAX"))
    parser.add_argument("--read-seconds", type=float, nargs=2, default=Pacing.read_seconds, metavar=("MIN", "MAX"))
    args = parser.parse_args()
    if args.port < 8100:
        raise SystemExit("use a port from 8100 up")
    check_database_url()
    annotators, reviewers = split_people(args.people, args.annotators, args.reviewers)
    env = server_env(args.port)
    os.environ.update(env)
    ensure_database()
    migrate(env)
    import django

    django.setup()
    if args.serve:
        processes = start_stack(env, args.port, args.workers, args.threads)
        print(f"serving {BENCH_DB} on http://127.0.0.1:{args.port}/ with {args.workers} workers; Ctrl-C stops")
        try:
            processes[0].wait()
        except KeyboardInterrupt:
            pass
        finally:
            stop_stack(processes)
        return
    if args.open:
        capacity(args, env)
        return
    from annotation.models import Membership

    people = [*(f"bench-annotator-{i}" for i in range(annotators)), *(f"bench-reviewer-{i}" for i in range(reviewers))]
    members = Membership.objects.filter(project__slug=SLUG, user__username__in=people).count()
    if not args.reuse or members < len(people) or len(tokens(people)) < len(people):
        create_data(max(annotators, 50), max(reviewers, 20))
    release_slug = prepare_release_project() if args.with_release_build else None
    base = f"http://127.0.0.1:{args.port}"
    processes = start_stack(env, args.port, args.workers, args.threads)
    try:
        asyncio.run(wait_ready(base, warm=args.workers * 8))
        release_pk = request_release(release_slug) if release_slug else None
        load = os.getloadavg()
        print(f"\n{annotators} annotators + {reviewers} reviewers for {args.seconds:.0f} s against {base} "
              f"({args.workers} gunicorn workers x {args.threads} threads, 1 Celery worker); nproc {os.cpu_count()}, "
              f"load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
              + (f"; release build of {RELEASE_ITEMS} items running" if release_pk else ""))  # fmt: skip
        keys = tokens(people)
        run, seconds = asyncio.run(drive(base, keys, annotators, reviewers, args.seconds, args.max_requests))
        load = os.getloadavg()
        print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    finally:
        stop_stack(processes)
    report(run, seconds)
    if release_pk:
        print(release_state(release_pk))
    problems = check_integrity(run)
    print("integrity: " + ("OK (no pair or slot handed out twice, every saved item present, every span slices to "
                           "its text)" if not problems else "; ".join(problems)))  # fmt: skip
    raise SystemExit(1 if problems or sum(run.errors.values()) else 0)


def capacity(args: argparse.Namespace, env: dict[str, str]) -> None:
    """Open loop: each team size of `--teams` in turn for `--seconds`, while a release build runs if asked; the
    largest team that holds (every endpoint's p95 under 150 ms, no error, integrity intact) is the capacity."""
    from annotation.models import Membership

    teams = [int(n) for n in args.teams.split(",") if n] or [args.people or args.annotators + args.reviewers]
    splits = [split_people(team, args.annotators, args.reviewers) for team in teams]
    most_annotators, most_reviewers = max(a for a, _ in splits), max(r for _, r in splits)
    people = [*(f"bench-annotator-{i}" for i in range(most_annotators)),
              *(f"bench-reviewer-{i}" for i in range(most_reviewers))]  # fmt: skip
    if not args.reuse or Membership.objects.filter(project__slug=SLUG, user__username__in=people).count() < len(people):
        create_data(max(most_annotators, 50), max(most_reviewers, 20))
    pacing = Pacing(autosave=args.autosave, item_minutes=tuple(args.item_minutes),
                    review_seconds=tuple(args.review_seconds), read_seconds=tuple(args.read_seconds))  # fmt: skip
    release_slug = prepare_release_project() if args.with_release_build else None
    base = f"http://127.0.0.1:{args.port}"
    processes = start_stack(env, args.port, args.workers, args.threads)
    held: list[int] = []
    failed = False
    try:
        asyncio.run(wait_ready(base, warm=args.workers * 8))
        for team, (annotators, reviewers) in zip(teams, splits, strict=True):
            # Reviews for the whole step: each reviewer about one a minute (the team's own submissions come later).
            waiting = seed_reviews(int(reviewers * args.seconds / pacing.review_seconds[0]) + reviewers)
            release_pk = request_release(release_slug) if release_slug else None
            load = os.getloadavg()
            print(f"\nteam of {team}: {annotators} annotators + {reviewers} reviewers, open loop {args.seconds:.0f} s "
                  f"(autosave every {pacing.autosave:.0f} s, an item {pacing.item_minutes[0]:g}-"
                  f"{pacing.item_minutes[1]:g} min, a review {pacing.review_seconds[0]:.0f}-"
                  f"{pacing.review_seconds[1]:.0f} s; {waiting} items waiting for review); {args.workers} gunicorn "
                  f"workers x {args.threads} threads; load average before {load[0]:.2f}"
                  + (f"; release build of {RELEASE_ITEMS} items running" if release_pk else ""))  # fmt: skip
            keys = tokens(people[:annotators] + people[most_annotators : most_annotators + reviewers])
            run, seconds = asyncio.run(drive_paced(base, keys, annotators, reviewers, args.seconds, pacing, seed=team))
            report(run, seconds)
            if release_pk:
                print(release_state(release_pk))
            problems = check_integrity(run)
            ok, verdict = step_verdict(run)
            ok = ok and not problems
            print(f"team of {team}: {'HOLDS' if ok else 'does not hold'} ({verdict}; integrity "
                  f"{'OK' if not problems else '; '.join(problems)})")  # fmt: skip
            if not ok:
                failed = True
                break
            held.append(team)
    finally:
        stop_stack(processes)
    largest = max(held, default=0)
    print(f"\ncapacity: the largest team that held is {largest} people" if held else "\ncapacity: no team held")
    if not failed and held:
        print(f"(every team tried held: try larger ones than {largest})")
    raise SystemExit(0 if held else 1)


if __name__ == "__main__":
    main()
