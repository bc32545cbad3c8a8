from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from archive import services
from common.errors import ServiceError


class Command(BaseCommand):
    help = (
        "Export a whole project (settings, members, pairs, items with every revision, reviews, labels, reports, "
        "releases with their files, audit events) into one archive file, in this process."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The project's slug.")
        parser.add_argument("--out", type=Path, required=True, help="The archive file to write (a .zip).")

    def handle(self, *args, **options) -> None:
        self.verbosity = options["verbosity"]
        project = Project._base_manager.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project with the slug {options['slug']!r}.")
        out: Path = options["out"]
        if out.is_dir():
            raise CommandError(f"--out {out} is a folder; give the name of the archive file to write.")
        try:
            manifest = services.archive_write_to(project=project, out=out, progress=self._progress)
        except ServiceError as error:
            raise CommandError(error.message) from None
        rows = sum(entry["rows"] for entry in manifest["models"])
        self.stdout.write(
            f"{project.slug}: {rows:,} rows of {len(manifest['models'])} models, {manifest['counts']['users']} people, "
            f"{len(manifest['files'])} release files -> {out} ({out.stat().st_size:,} bytes)"
        )

    def _progress(self, done: int, total: int, stage: str) -> None:
        if self.verbosity > 1:
            self.stderr.write(f"{done:,}/{total:,} {stage}")
