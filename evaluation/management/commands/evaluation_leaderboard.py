from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from evaluation import services
from evaluation.leaderboard import leaderboard, leaderboard_download


class Command(BaseCommand):
    help = (
        "Print (or write to --out) a project's leaderboard: models × scenarios on one release under one metric, "
        "as on the leaderboard page, in CSV, Markdown, LaTeX or JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("--release", type=int, default=None, help="Default: the newest with a scored run.")
        parser.add_argument("--kind", default="", help="lead, document, trivia or entity (default: the first).")
        parser.add_argument("--metric", default="", help="mode:metric, e.g. recommended:rouge_l (default: primary).")
        parser.add_argument("--format", default="md", choices=sorted(services.DOWNLOAD_TYPES))
        parser.add_argument("--out", type=Path, default=None, help="A file to write instead of printing.")

    def handle(self, *args, **options) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with the slug {options['project']!r}.")
        board = leaderboard(project, version=options["release"], kind=options["kind"], metric=options["metric"])
        if not board.rows:
            raise CommandError(f"{project.slug} has no scored evaluation run to rank.")
        if options["release"] is not None and board.release_version != options["release"]:
            raise CommandError(
                f"Release v{options['release']} has no scored run; releases with one: "
                + ", ".join(f"v{v}" for v in board.versions)
            )
        text = leaderboard_download(board, project, options["format"])
        if options["out"] is None:
            self.stdout.write(text)
        else:
            options["out"].write_text(text, encoding="utf-8")
            self.stdout.write(
                self.style.SUCCESS(f"Leaderboard of {project.slug} v{board.release_version} in {options['out']}")
            )
