"""Collect QA pairs for a validation project from a search engine through SerpApi, in this process."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from common.errors import ServiceError
from common.jobs import JobStatus
from validation import search
from validation.models import SearchCollection, SearchEngine, SearchQuery, SearchType


class Command(BaseCommand):
    help = (
        "Send a validation project's seed queries to a search engine through SerpApi, follow the related questions "
        "and searches for N iterations, and add the 'people also ask' pairs as validation items. Never sends more "
        "than --budget calls; a query answered before (same parameters) is read from the stored responses, so "
        "running it again costs nothing. Prints the calls sent and the calls answered from the cache."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The validation project's slug.")
        parser.add_argument("--engine", choices=SearchEngine.values, default=SearchEngine.GOOGLE)
        parser.add_argument(
            "--search-type", choices=SearchType.values, default=SearchType.TEXT, help="text (default) or images."
        )
        parser.add_argument("--iterations", type=int, default=1, help="1: the seed queries only (default).")
        parser.add_argument("--budget", type=int, help="Most calls to send (required unless --resume).")
        parser.add_argument("--location", default="", help="SerpApi location, e.g. 'Doha, Qatar'.")
        parser.add_argument("--gl", default="", help="Country code, e.g. qa.")
        parser.add_argument("--hl", default="", help="Language code, e.g. ar.")
        parser.add_argument("--resume", type=int, metavar="ID", help="Resume collection ID where it stopped.")
        parser.add_argument(
            "--key-from-env",
            metavar="NAME",
            help="Set the project's SerpApi key from this environment variable first (kept encrypted).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project with the slug {options['slug']!r}.")
        try:
            if options["key_from_env"]:
                key = os.environ.get(options["key_from_env"], "")
                if not key:
                    raise CommandError(f"The environment variable {options['key_from_env']} is empty or unset.")
                search.search_key_set(project=project, key=key, user=None)
            collection = self._collection(project, options)
        except ServiceError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            f"Search collection {collection.pk}: {collection.get_engine_display()}, "
            f"{collection.iterations} iteration(s), budget {collection.budget} calls"
        )
        finished = search.search_collection_run(collection_id=collection.pk)
        if finished is None:
            raise CommandError(f"Collection {collection.pk} is being run by a worker; watch it in the browser.")
        self.stdout.write(f"Collection {finished.pk}: {finished.status_words.lower()}. {finished.stage}")
        self.stdout.write(f"  {'calls sent':<36} {finished.calls_sent:>7}")
        self.stdout.write(f"  {'answered from stored responses':<36} {finished.calls_cached:>7}")
        self.stdout.write(f"  {'items added':<36} {finished.items_created:>7}")
        self.stdout.write(f"  {'pairs collected before, left out':<36} {finished.items_left_out:>7}")
        for value, n in search.search_query_counts(finished).items():
            if n:
                self.stdout.write(f"  {'queries: ' + SearchQuery.Status(value).label.lower():<36} {n:>7}")
        if finished.status == JobStatus.FAILED:
            raise CommandError(finished.error)

    def _collection(self, project: Project, options: dict[str, Any]) -> SearchCollection:
        if options["resume"]:
            collection = SearchCollection.objects.filter(project=project, pk=options["resume"]).first()
            if collection is None:
                raise CommandError(f"No search collection {options['resume']} in {project.slug}.")
            return search.search_collection_resume(collection=collection, budget=options["budget"], enqueue=False)
        if options["budget"] is None:
            raise CommandError("Give --budget: the most calls this collection may send.")
        return search.search_collection_start(
            project=project,
            user=None,
            engine=options["engine"],
            search_type=options["search_type"],
            iterations=options["iterations"],
            budget=options["budget"],
            location=options["location"],
            gl=options["gl"],
            hl=options["hl"],
            enqueue=False,
        )
