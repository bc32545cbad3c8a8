from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.importers.sources import FORMATS
from annotation.models import Project
from annotation.services.projects import project_region_vocabulary_map
from common.errors import ServiceError
from wikiqa.importers.services import pairs_import


class Command(BaseCommand):
    help = (
        "Import page pairs (optionally with screening decisions and QA items) into a project from JSONL, CSV "
        "or WiLoVa release files (see docs/formats.md). All or nothing; importing a file twice creates nothing new."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The project's slug.")
        parser.add_argument(
            "files",
            nargs="+",
            metavar="FILE",
            help="Files to import together; a WiLoVa pair of files (base and _QualityMeta) is given as two FILEs.",
        )
        parser.add_argument(
            "--format",
            choices=FORMATS,
            default="auto",
            help="File format; auto (default) goes by the name: .jsonl, .csv, .json (WiLoVa).",
        )
        parser.add_argument("--dry-run", action="store_true", help="Validate and count, write nothing.")
        parser.add_argument(
            "--map-region",
            action="append",
            default=[],
            metavar="FINE=REGION",
            help="Add a fine-grained region of a release to the project's region vocabulary before importing, "
            "e.g. --map-region Hongkong=local (repeatable).",
        )

    def handle(self, *args, **options) -> None:
        try:
            project = Project.objects.get(slug=options["slug"])
        except Project.DoesNotExist:
            raise CommandError(f"No project with the slug {options['slug']!r}.") from None
        if options["map_region"]:
            mapping = dict(entry.rpartition("=")[::2] for entry in options["map_region"])
            try:
                project_region_vocabulary_map(project=project, mapping=mapping)
            except ServiceError as error:
                raise CommandError(error.message) from None
        report = pairs_import(
            project=project, paths=options["files"], format=options["format"], dry_run=options["dry_run"]
        )
        if not report.ok:
            lines = [report.summary(), *(f"  {problem}" for problem in report.problems)]
            if report.problems_total > len(report.problems):
                lines.append(f"  … and {report.problems_total - len(report.problems)} more")
            if report.unknown_regions:
                lines.append("  Map each region with --map-region FINE=REGION (local, standard or other).")
            raise CommandError("\n".join(lines))
        self.stdout.write(f"{project.slug}: {report.summary()}")
        for warning in report.warnings:
            self.stdout.write(f"  warning: {warning}")
