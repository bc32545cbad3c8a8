from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_slug

from annotation.management.commands._common import project_url
from annotation.services.projects import project_create
from common.errors import ServiceError


class Command(BaseCommand):
    help = "Create a local-variety Wikipedia QA project and print its URL."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Short name used in URLs, e.g. yue-cmn.")
        parser.add_argument("--name", required=True, help="Display name, e.g. 'Cantonese–Mandarin'.")
        parser.add_argument("--local", required=True, metavar="LANG", help="ISO 639-3 code of the local variety (yue).")
        parser.add_argument("--standard", required=True, metavar="LANG", help="ISO 639-3 code of the standard (cmn).")
        parser.add_argument("--local-wiki", metavar="CODE", help="Wikipedia code of the local wiki (default: derived).")
        parser.add_argument(
            "--standard-wiki", metavar="CODE", help="Wikipedia code of the standard wiki (default: derived)."
        )
        parser.add_argument("--coordinator", metavar="USERNAME", help="Existing user who creates and coordinates it.")

    def handle(self, *args, **options) -> None:
        slug = options["slug"]
        try:
            validate_slug(slug)
        except ValidationError:
            raise CommandError(f"{slug!r} is not a slug: use letters, digits, hyphens and underscores.") from None
        coordinator = None
        if options["coordinator"]:
            try:
                coordinator = get_user_model().objects.get_by_natural_key(options["coordinator"])
            except get_user_model().DoesNotExist:
                raise CommandError(f"No user named {options['coordinator']!r}; create the user first.") from None
        try:
            project = project_create(
                name=options["name"],
                slug=slug,
                local_language=options["local"],
                standard_language=options["standard"],
                local_wiki=options["local_wiki"],
                standard_wiki=options["standard_wiki"],
                created_by=coordinator,
            )
        except ServiceError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            f"Created project {project.slug!r}: {project.local.name} ({project.local_wiki}.wikipedia.org) "
            f"against {project.standard.name} ({project.standard_wiki}.wikipedia.org)."
        )
        if coordinator is not None:
            self.stdout.write(f"Coordinator: {coordinator.get_username()}")
        self.stdout.write(project_url(project))
