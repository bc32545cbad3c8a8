from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.importers import pairs_import_jsonl
from annotation.models import Project


class Command(BaseCommand):
    help = "Import page pairs into a project from a JSONL file (see docs/formats.md). All or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The project's slug.")
        parser.add_argument("file", help="Path of the JSONL file, one page pair per line.")
        parser.add_argument("--dry-run", action="store_true", help="Validate and count, write nothing.")

    def handle(self, *args, **options) -> None:
        try:
            project = Project.objects.get(slug=options["slug"])
        except Project.DoesNotExist:
            raise CommandError(f"No project with the slug {options['slug']!r}.") from None
        report = pairs_import_jsonl(project=project, path=options["file"], dry_run=options["dry_run"])
        if not report.ok:
            lines = [report.summary(), *(f"  {problem}" for problem in report.problems)]
            if report.problems_total > len(report.problems):
                lines.append(f"  … and {report.problems_total - len(report.problems)} more")
            raise CommandError("\n".join(lines))
        self.stdout.write(f"{project.slug}: {report.summary()}")
