from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from archive import services
from common.errors import ServiceError


class Command(BaseCommand):
    help = (
        "Import a project archive (written by project_archive_export or the export page) as a new project, in "
        "this process. People are matched by username; those this server does not know are created inactive, "
        "without a usable password."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="The archive file (.zip).")
        parser.add_argument("--slug", default=None, help="Import under this slug; default: the archived one.")

    def handle(self, *args, **options) -> None:
        self.verbosity = options["verbosity"]
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        try:
            project, counts = services.archive_import_file(path=path, slug=options["slug"], progress=self._progress)
        except ServiceError as error:
            raise CommandError(error.message) from None
        rows = sum(value for key, value in counts.items() if "." in key)
        self.stdout.write(
            f"Imported {project.slug} (id {project.pk}): {rows:,} rows; people matched {counts['users_matched']}, "
            f"created inactive {counts['users_created']}"
        )

    def _progress(self, done: int, total: int, stage: str) -> None:
        if self.verbosity > 1:
            self.stderr.write(f"{done:,}/{total:,} {stage}")
