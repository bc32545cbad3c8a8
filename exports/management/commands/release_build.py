import shutil
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project, QAItem
from common.errors import ServiceError
from exports import formats, services
from exports.models import Release


def _splits(value: str) -> dict[str, int]:
    """`70,10,20` (train, dev, test) or `none`."""
    if value.lower() == "none":
        return {}
    parts = value.split(",")
    if len(parts) != 3 or not all(part.strip().isdigit() for part in parts):
        raise CommandError(f"--splits: give three percentages like 70,10,20 (train, dev, test) or none, not {value!r}.")
    return dict(zip(("train", "dev", "test"), (int(part) for part in parts), strict=True))


class Command(BaseCommand):
    help = (
        "Build and publish a release of a project in this process (the page and the API use a worker), "
        "optionally copying its files to --out. With --format wilova, write the project back in the WiLoVa "
        "release format into --out instead (no release is recorded)."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs) -> CommandParser:
        # Django's own --version (print Django's version) gives way to the release version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The project's slug.")
        parser.add_argument("--version", type=int, help="Release version; default: the next number.")
        parser.add_argument("--out", type=Path, help="Also copy the published files into this directory.")
        parser.add_argument("--format", choices=formats.format_names(), default=formats.RELEASE_FORMAT)
        parser.add_argument(
            "--statuses",
            default=QAItem.Status.ACCEPTED,
            help=f"Item statuses to include, comma-separated ({', '.join(QAItem.Status.values)}); default accepted.",
        )
        parser.add_argument("--splits", type=_splits, default=None, help="train,dev,test percentages or none.")
        parser.add_argument("--seed", type=int, help="Split seed; default: the previous release's seed.")
        parser.add_argument("--changelog", default="", help="What changed since the previous release.")
        parser.add_argument("--license", help="License of the data; default: the project's export settings.")

    def handle(self, *args, **options) -> None:
        try:
            project = Project.objects.get(slug=options["slug"])
        except Project.DoesNotExist:
            raise CommandError(f"No project with the slug {options['slug']!r}.") from None
        if options["format"] != formats.RELEASE_FORMAT:
            self._write_project_format(project, options)
            return
        try:
            release = services.release_build_now(
                project=project,
                user=None,
                item_statuses=[status.strip() for status in options["statuses"].split(",") if status.strip()],
                splits=options["splits"],
                seed=options["seed"],
                changelog=options["changelog"],
                license=options["license"],
                version=options["version"],
            )
        except ServiceError as error:
            raise CommandError(error.message) from None
        if release.status != Release.Status.DONE:
            raise CommandError(f"Release v{release.version} failed: {release.error}")
        root = services.release_dir(release)
        self.stdout.write(
            f"{project.slug} v{release.version}: {release.counts.get('lead_qa', 0)} lead QAs, "
            f"{release.counts.get('document_qa', 0)} document QAs, {len(release.files)} files in {root}"
        )
        if options["out"]:
            out: Path = options["out"]
            for entry in release.files:
                target = out / entry["name"]
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(root / entry["name"], target)
            self.stdout.write(f"Copied to {out}")

    def _write_project_format(self, project: Project, options: dict) -> None:
        if not options["out"]:
            raise CommandError(f"--format {options['format']} needs --out DIR.")
        try:
            paths = services.project_format_write(project=project, format=options["format"], out_dir=options["out"])
        except ServiceError as error:
            raise CommandError(error.message) from None
        for path in paths:
            self.stdout.write(str(path))
