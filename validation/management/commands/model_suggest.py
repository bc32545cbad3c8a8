"""Ask a model, in this process, for suggestions on a validation project's items or for drafted seed queries."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from common.errors import ServiceError
from common.jobs import JobStatus
from endpoints.models import Endpoint
from validation import suggestions
from validation.models import ModelJob


class Command(BaseCommand):
    help = (
        "Ask one of a validation project's model endpoints for suggestions beside the validators' controls "
        "(question good?, edited answer, location relevance) on every item waiting for validation, or, with "
        "--draft-seeds, for seed queries per location and topic in each location's language (drafts the "
        "coordinator accepts or rejects before any search). Suggestions are never verdicts: a validator takes or "
        "changes each one. Answers already asked for come from the endpoint's cache."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The validation project's slug.")
        parser.add_argument("--endpoint", required=True, help="The name of one of the project's model endpoints.")
        parser.add_argument("--redo", action="store_true", help="Ask again for items that have a suggestion.")
        parser.add_argument("--draft-seeds", action="store_true", help="Draft seed queries instead of suggestions.")
        parser.add_argument("--location", action="append", default=[], help="A location (repeat for more).")
        parser.add_argument("--topic", action="append", default=[], help="A topic (repeat for more).")
        parser.add_argument("--count", type=int, default=3, help="Queries per location and topic (default 3).")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project with the slug {options['slug']!r}.")
        endpoint = Endpoint.objects.filter(project=project, name=options["endpoint"]).first()
        if endpoint is None:
            raise CommandError(f"{project.slug} has no model endpoint named {options['endpoint']!r}.")
        try:
            if options["draft_seeds"]:
                job = suggestions.seed_drafts_start(
                    project=project,
                    endpoint_id=endpoint.pk,
                    locations=options["location"],
                    topics=options["topic"],
                    count=options["count"],
                    user=None,
                    enqueue=False,
                )
            else:
                job = suggestions.suggestions_start(
                    project=project, endpoint_id=endpoint.pk, user=None, redo=options["redo"], enqueue=False
                )
        except ServiceError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"{ModelJob.Purpose(job.purpose).label} {job.pk}: {endpoint.name} ({endpoint.model})")
        finished = suggestions.model_job_run(job_id=job.pk)
        if finished is None:
            raise CommandError(f"Job {job.pk} is being run by a worker; watch it in the browser.")
        self.stdout.write(finished.stage)
        self.stdout.write(f"  {'answered':<12} {finished.answered:>7}")
        self.stdout.write(f"  {'failed':<12} {finished.failed:>7}")
        failures = suggestions.job_failures_words(finished)
        if failures:
            self.stdout.write(failures)
        if finished.status == JobStatus.FAILED:
            raise CommandError(finished.error)
