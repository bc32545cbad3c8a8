"""Set up demo users and a demo project of each kind, with work in every state; safe to run again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.languages import get_language
from annotation.management.commands._common import DEV_SERVER, project_url
from annotation.models import Membership, PagePair, Project, QAItem
from annotation.services.members import membership_set
from annotation.services.projects import project_create
from common.errors import ServiceError
from demo.management.commands import _demo_states as states
from endpoints import services as endpoints
from endpoints.models import Endpoint
from wikiqa.importers.services import pairs_import_jsonl

DEMO_DIR = Path(__file__).resolve().parents[2] / "data"
DEMO_ENDPOINT: dict[str, Any] = {
    "name": "Qwen on this machine (Ollama)",
    "base_url": "http://localhost:11434/v1",
    "model": "qwen2.5:7b-instruct",
    "mode": "chat",
    "temperature": 0.3,
    "top_p": 0.95,
    "max_tokens": 256,
}
DEMO_PASSWORD = "localqa-demo"  # noqa: S105 -- published on purpose: these accounts exist to be tried


@dataclass(frozen=True)
class DemoUser:
    username: str
    roles: frozenset[str]
    superuser: bool = False


USERS = [
    DemoUser("admin", frozenset(), superuser=True),
    DemoUser("coordinator", frozenset({"coordinator"})),
    DemoUser("coordinator2", frozenset({"coordinator"})),
    DemoUser("annotator1", frozenset({"annotator"})),
    DemoUser("annotator2", frozenset({"annotator"})),
    DemoUser("reviewer", frozenset({"reviewer"})),
    DemoUser("researcher", frozenset({"researcher"})),  # reads releases and agreement reports
]


@dataclass(frozen=True)
class DemoProject:
    slug: str
    name: str
    local: str
    standard: str
    tips: str


PROJECTS = [
    DemoProject(
        "yue-cmn",
        "Cantonese–Mandarin",
        "yue",
        "cmn",
        "- Write the Cantonese answer in written Cantonese (嘅, 咗, 喺, 𠵱家), as the article does.\n"
        "- Many Cantonese characters lie outside the Basic Multilingual Plane (𠮶, 𨋢, 𡃁, 𠵱): "
        "keep them as they are; never replace them with a look-alike or a □.\n"
        "- Write the question and the Mandarin answer in simplified characters.",
    ),
    DemoProject(
        "bar-deu",
        "Bavarian–German",
        "bar",
        "deu",
        "- Keep the Bavarian answer in the article's dialect spelling (Weißwurscht, Kiach, Maibaam); "
        "do not correct it towards Standard German.\n"
        "- Over half of Bavarian pages are translations of the German ones: screen carefully.",
    ),
    DemoProject(
        "arz-arb",
        "Egyptian Arabic–Standard Arabic",
        "arz",
        "arb",
        "- The texts run right to left; select the evidence exactly, including any diacritics.\n"
        "- Write the question and the standard answer in Modern Standard Arabic, "
        "the local answer in Egyptian Arabic as the article spells it (e.g. final ى for ي).",
    ),
]


@dataclass(frozen=True)
class OtherKind:
    slug: str
    name: str
    kind: str
    create: Callable[..., Project]  # the kind's project_create service, given name, slug, created_by
    states: Callable[[Project, dict, Path], None]


def _validation_project(**common: Any) -> Project:
    from validation.services import validation_project_create

    return validation_project_create(language="eng", location="Qatar", **common)


def _trivia_project(**common: Any) -> Project:
    from multichoice.services.projects import trivia_project_create

    categories = ["Essen und Trinken", "Bräuche", "Geographie"]
    return trivia_project_create(source_language="deu", target_language="eng", categories=categories, **common)


def _entity_project(**common: Any) -> Project:
    from multichoice.entities import entity_project_create

    attributes = [
        {"key": "headquarters", "label": "Headquarters", "kind": "city",
         "inductive": "Where is {entity} headquartered?", "deductive": "Which company is headquartered in {value}?",
         "statement": "{entity} is headquartered in {value}."},
        {"key": "founded", "label": "Founding year", "kind": "year",
         "inductive": "In which year was {entity} founded?", "deductive": "Which company was founded in {value}?",
         "statement": "{entity} was founded in {value}."},
        {"key": "key_people", "label": "Key people", "kind": "list",
         "inductive": "Who is a key person at {entity}?", "deductive": "At which company is {value} a key person?",
         "statement": "{value} is a key person at {entity}."},
    ]  # fmt: skip
    return entity_project_create(
        language="eng", attributes=attributes, grouping_fields=["market", "country"], seed=7, **common
    )


OTHER_KINDS = [
    OtherKind("doha-val", "Doha questions (validation)", "validation", _validation_project, states.validation_states),
    OtherKind("bavaria-trivia", "Bavarian trivia", "trivia", _trivia_project, states.trivia_states),
    OtherKind("bavaria-companies", "Bavarian companies", "entity_qa", _entity_project, states.entity_states),
]

ROLE_NOTES = {
    "admin": "superuser: /admin/",
    "coordinator": "coordinator of every demo project: dashboards, imports, releases, members",
    "coordinator2": "a second coordinator of every demo project",
    "annotator1": "annotator: writes QA pairs and trivia items, translates trivia; has an item sent back",
    "annotator2": "annotator: has a pair in progress and items in review",
    "reviewer": "reviewer: reviews QA and trivia items, validates (doha-val), verifies entity questions",
    "researcher": "researcher: reads releases, their statistics and agreement reports (no queues)",
}


class Command(BaseCommand):
    help = (
        "Create demo users (password 'localqa-demo') and a demo project of each kind: three Wikipedia QA "
        "projects, a validation, a trivia and an entity-question project, each with work in every state. "
        "Re-running creates nothing twice, keeps all data and changes no existing account's password."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        guidelines_template = (DEMO_DIR / "guidelines.md").read_text(encoding="utf-8")
        with transaction.atomic():
            users = {demo.username: self._ensure_user(demo) for demo in USERS}
            for demo in PROJECTS:
                self._ensure_project(demo, users, guidelines_template)
            for other in OTHER_KINDS:
                self._ensure_other_kind(other, users)
            self._ensure_endpoint(users)
            self._ensure_evaluation_run(users)

        self.stdout.write(f"\nLogins at {DEV_SERVER}/accounts/login/ (password for all: {DEMO_PASSWORD}):")
        for demo_user in USERS:
            self.stdout.write(f"  {demo_user.username:<13} {ROLE_NOTES.get(demo_user.username, '')}")
        self.stdout.write(f"\nOpen {DEV_SERVER}/ (`make run` serves it there; else `python manage.py runserver`).")
        if not settings.DEBUG:
            self.stderr.write(
                "DEBUG is off: the demo accounts have a published password. "
                "Remove them or change their passwords before others can reach this server."
            )

    def _ensure_user(self, demo: DemoUser) -> User:
        user, created = User.objects.get_or_create(
            username=demo.username, defaults={"email": f"{demo.username}@example.org"}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.is_staff = user.is_superuser = demo.superuser
            user.save()
            self.stdout.write(f"Created user {demo.username}.")
        else:
            self.stdout.write(f"User {demo.username} exists; left as it is.")
        if "coordinator" in demo.roles:
            user.user_permissions.add(Permission.objects.get_by_natural_key("add_project", "annotation", "project"))
        return user

    def _ensure_project(self, demo: DemoProject, users: dict[str, User], guidelines_template: str) -> None:
        project = Project.objects.filter(slug=demo.slug).first()
        if project is None:
            project = project_create(
                name=demo.name,
                slug=demo.slug,
                local_language=demo.local,
                standard_language=demo.standard,
                created_by=users["coordinator"],
                collect_document_qa=True,
                guidelines=guidelines_template.format(
                    name=demo.name,
                    local=get_language(demo.local).name,
                    standard=get_language(demo.standard).name,
                    tips=demo.tips,
                ),
            )
            self.stdout.write(f"Created project {demo.slug}.")
        elif (project.local_language, project.standard_language) != (demo.local, demo.standard):
            raise CommandError(
                f"A project {demo.slug!r} exists with other languages "
                f"({project.local_language}–{project.standard_language}); rename it or use another database."
            )
        self._ensure_members(project, users)
        report = pairs_import_jsonl(project=project, path=DEMO_DIR / f"{demo.slug}.jsonl", source=PagePair.Source.DEMO)
        if not report.ok:  # the demo files ship with the code; a problem here is a bug
            raise CommandError(f"Demo data for {demo.slug} is broken: " + "; ".join(map(str, report.problems)))
        if not QAItem.objects.filter(project=project).exists():  # a new project: work in every state
            states.wikipedia_states(project, users)
        self.stdout.write(f"{demo.slug}: {report.summary()}  {project_url(project)}")

    def _ensure_endpoint(self, users: dict[str, User]) -> None:
        """A model endpoint on the Cantonese project for a model served by Ollama on this machine: *Test this
        endpoint* answers once `ollama serve` runs with the model pulled, and says "Could not connect" until then."""
        project = Project.objects.get(slug=PROJECTS[0].slug)
        if Endpoint.objects.filter(project=project).exists():
            return
        try:
            endpoints.endpoint_create(project=project, user=users["coordinator"], **DEMO_ENDPOINT)
        except ServiceError as error:  # DEBUG off: the operator's allow-list may not name this machine
            self.stdout.write(f"{project.slug}: no demo model endpoint ({error.message})")
        else:
            self.stdout.write(f"{project.slug}: model endpoint {DEMO_ENDPOINT['name']}.")

    def _ensure_evaluation_run(self, users: dict[str, User]) -> None:
        """A scored evaluation run on the Cantonese project's release and on the trivia release (answers the demo
        writes itself), so the evaluation pages have results to show."""
        from evaluation.models import EvaluationRun

        for slug in (PROJECTS[0].slug, "bavaria-trivia"):
            project = Project.objects.get(slug=slug)
            if not EvaluationRun.objects.filter(project=project).exists():
                states.evaluation_states(project, users)
                self.stdout.write(f"{project.slug}: an evaluation run of the demo release.")

    def _ensure_members(self, project: Project, users: dict[str, User]) -> None:
        for demo_user in USERS:
            if (
                demo_user.roles
                and not Membership.objects.filter(project=project, user=users[demo_user.username]).exists()
            ):
                membership_set(project=project, user=users[demo_user.username], roles=demo_user.roles)

    def _ensure_other_kind(self, demo: OtherKind, users: dict[str, User]) -> None:
        """A validation, trivia or entity-question project: created once with its demo work, then left alone."""
        project = Project.all_objects.filter(slug=demo.slug).first()
        if project is not None:
            if project.kind != demo.kind:
                raise CommandError(
                    f"A project {demo.slug!r} exists of another kind ({project.get_kind_display()}); "
                    "rename it or use another database."
                )
            self._ensure_members(project, users)
            self.stdout.write(f"{demo.slug}: exists; left as it is.  {project_url(project)}")
            return
        project = demo.create(name=demo.name, slug=demo.slug, created_by=users["coordinator"])
        self._ensure_members(project, users)
        demo.states(project, users, DEMO_DIR)
        self.stdout.write(f"{demo.slug}: created with demo work.  {project_url(project)}")
