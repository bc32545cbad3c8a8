"""Collect page pairs from Wikipedia for a project, in this process, with a progress bar."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from common.errors import ServiceError
from wikiqa import collect
from wikiqa.models import Collection, CollectionTitle

BAR_WIDTH = 30


class Command(BaseCommand):
    help = (
        "Collect page pairs from Wikipedia: follow each local-wiki title's interlanguage link to the standard "
        "wiki and keep local-heavy pairs. Prints the outcome of every title. Safe to run again: pages fetched "
        "at the same revision come from the cache and no pair is created twice."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The project's slug.")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--titles", metavar="FILE", help="UTF-8 text file, one local-wiki title per line.")
        source.add_argument("--category", help="A local-wiki category whose articles to collect.")
        source.add_argument("--resume", type=int, metavar="ID", help="Resume collection ID where it stopped.")
        parser.add_argument(
            "--all-pairs", action="store_true", help="Keep every aligned pair, not only local-heavy ones."
        )

    def handle(self, *args, **options) -> None:
        try:
            project = Project.objects.get(slug=options["slug"])
        except Project.DoesNotExist:
            raise CommandError(f"No project with the slug {options['slug']!r}.") from None
        try:
            collection = self._collection(project, options)
        except ServiceError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            f"Collection {collection.pk}: {project.local_wiki} → {project.standard_wiki}"
            f"{f' ({project.standard_variant})' if project.standard_variant else ''}, "
            f"{collection.progress_total} titles"
        )
        finished = collect.collection_run(collection_id=collection.pk, on_progress=self._progress)
        if finished is None:
            raise CommandError(f"Collection {collection.pk} is being run by a worker; watch it in the browser.")
        self.stderr.write("")
        counts = collect.collection_outcome_counts(finished)
        self.stdout.write(f"Collection {finished.pk}: {finished.status_words.lower()}.")
        for value, n in counts.items():
            if n or value in {"kept"}:
                self.stdout.write(f"  {CollectionTitle.Outcome(value).label:<32} {n:>7}")
        self.stdout.write(f"  {'new pairs':<32} {finished.created_pairs:>7}")
        if finished.status == Collection.Status.FAILED:
            raise CommandError(finished.error)

    def _collection(self, project: Project, options: dict) -> Collection:
        if options["resume"]:
            collection = Collection.objects.filter(project=project, pk=options["resume"]).first()
            if collection is None:
                raise CommandError(f"No collection {options['resume']} in {project.slug}.")
            return collect.collection_resume(collection=collection, enqueue=False)
        titles: list[str] = []
        if options["titles"]:
            try:
                titles = collect.parse_titles(Path(options["titles"]).read_text(encoding="utf-8-sig"))
            except OSError as error:
                raise CommandError(f"cannot read {options['titles']}: {error.strerror or error}") from None
            except UnicodeDecodeError:
                raise CommandError(f"{options['titles']} is not UTF-8 text.") from None
            if not titles:
                raise CommandError(f"{options['titles']} holds no titles.")
        return collect.collection_create(
            project=project,
            user=None,
            titles=titles,
            category=options["category"] or "",
            local_heavy_only=not options["all_pairs"],
            enqueue=False,
        )

    def _progress(self, collection: Collection) -> None:
        total = max(collection.progress_total, 1)
        filled = int(BAR_WIDTH * collection.progress_done / total)
        bar = "█" * filled + "·" * (BAR_WIDTH - filled)
        counts = f"{collection.progress_done}/{collection.progress_total}"
        line = f"\r[{bar}] {counts}  kept {collection.kept}  dropped {collection.dropped}"
        self.stderr.write(line, ending="")
        sys.stderr.flush()
