from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.importers import FORMATS, pairs_import
from annotation.models import Project


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

    def handle(self, *args, **options) -> None:
        try:
            project = Project.objects.get(slug=options["slug"])
        except Project.DoesNotExist:
            raise CommandError(f"No project with the slug {options['slug']!r}.") from None
        report = pairs_import(
            project=project, paths=options["files"], format=options["format"], dry_run=options["dry_run"]
        )
        if not report.ok:
            lines = [report.summary(), *(f"  {problem}" for problem in report.problems)]
            if report.problems_total > len(report.problems):
                lines.append(f"  … and {report.problems_total - len(report.problems)} more")
            raise CommandError("\n".join(lines))
        self.stdout.write(f"{project.slug}: {report.summary()}")
