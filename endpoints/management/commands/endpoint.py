"""`manage.py endpoint list|add|test|rotate-keys`: a project's model endpoints from the command line.

The API key never goes on the command line (other users of the machine can read a process's arguments): it is
read from an environment variable (`--api-key-env NAME`) or from standard input (`--api-key-stdin`).
"""

from __future__ import annotations

import os
import sys
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Project
from common.errors import ServiceError
from common.secrets import SECRET_ROTATORS
from endpoints import services
from endpoints.models import Endpoint, Mode


class Command(BaseCommand):
    help = "List, add and test a project's model endpoints; re-encrypt stored API keys under the first key."

    def add_arguments(self, parser: CommandParser) -> None:
        commands = parser.add_subparsers(dest="action", required=True, metavar="{list,add,test,rotate-keys}")
        listing = commands.add_parser("list", help="The project's endpoints and their calls.")
        listing.add_argument("slug", help="The project's slug.")

        add = commands.add_parser("add", help="Add an endpoint (its host must be in MODEL_ALLOWED_HOSTS).")
        add.add_argument("slug", help="The project's slug.")
        add.add_argument("--name", required=True)
        add.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
        add.add_argument("--model", required=True, help="The model name the server expects.")
        add.add_argument("--mode", choices=Mode.values, default=Mode.CHAT)
        add.add_argument("--temperature", type=float)
        add.add_argument("--top-p", type=float)
        add.add_argument("--max-tokens", type=int)
        add.add_argument("--seed", type=int)
        add.add_argument("--stop", action="append", default=[], help="A stop sequence (repeat for more).")
        add.add_argument("--concurrency", type=int, default=4)
        add.add_argument("--timeout", type=int, default=60, help="Seconds one attempt may take.")
        add.add_argument("--price-input", type=Decimal, help="Price per million input tokens.")
        add.add_argument("--price-output", type=Decimal, help="Price per million output tokens.")
        key = add.add_mutually_exclusive_group()
        key.add_argument("--api-key-env", metavar="NAME", help="Read the API key from this environment variable.")
        key.add_argument("--api-key-stdin", action="store_true", help="Read the API key from standard input.")

        test = commands.add_parser("test", help="Send one short prompt and print the reply or the error.")
        test.add_argument("slug", help="The project's slug.")
        test.add_argument("name", help="The endpoint's name.")

        commands.add_parser("rotate-keys", help="Re-encrypt every stored API key under the first ENCRYPTION_KEYS key.")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        try:
            if action == "list":
                self._list(self._project(options["slug"]))
            elif action == "add":
                self._add(self._project(options["slug"]), options)
            elif action == "test":
                self._test(self._project(options["slug"]), options["name"])
            else:
                self._rotate()
        except ServiceError as error:
            raise CommandError(error.message) from None

    def _project(self, slug: str) -> Project:
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"No project with the slug {slug!r}.")
        return project

    def _list(self, project: Project) -> None:
        endpoints = list(services.endpoints_for_project(project))
        if not endpoints:
            self.stdout.write(f"{project.slug}: no model endpoint.")
        for endpoint in endpoints:
            key = "key set" if getattr(endpoint, "key_set", False) else "no key"
            self.stdout.write(
                f"{endpoint.name}\t{endpoint.model}\t{endpoint.mode}\t{endpoint.base_url}\t{key}\t"
                f"{getattr(endpoint, 'call_count', 0)} calls ({getattr(endpoint, 'failed_count', 0)} failed)"
            )

    def _add(self, project: Project, options: dict[str, Any]) -> None:
        api_key = ""
        if options["api_key_env"]:
            if options["api_key_env"] not in os.environ:
                raise CommandError(f"The environment variable {options['api_key_env']} is not set.")
            api_key = os.environ[options["api_key_env"]]
        elif options["api_key_stdin"]:
            api_key = sys.stdin.readline().strip()
        endpoint = services.endpoint_create(
            project=project,
            user=None,
            api_key=api_key,
            name=options["name"],
            base_url=options["base_url"],
            model=options["model"],
            mode=options["mode"],
            temperature=options["temperature"],
            top_p=options["top_p"],
            max_tokens=options["max_tokens"],
            seed=options["seed"],
            stop=options["stop"],
            concurrency=options["concurrency"],
            timeout_seconds=options["timeout"],
            price_input=options["price_input"],
            price_output=options["price_output"],
        )
        self.stdout.write(f"{project.slug}: endpoint {endpoint.name} added ({'key set' if api_key else 'no key'}).")

    def _test(self, project: Project, name: str) -> None:
        endpoint = Endpoint.objects.filter(project=project, name=name).first()
        if endpoint is None:
            raise CommandError(f"{project.slug} has no endpoint called {name!r}.")
        completion = services.endpoint_test(endpoint=endpoint, user=None)
        words = services.completion_words(completion)
        if not completion.ok:
            raise CommandError(words)
        self.stdout.write(words)

    def _rotate(self) -> None:
        rotation = services.endpoint_keys_rotate()
        self.stdout.write(f"{rotation.rotated} stored API keys re-encrypted under the first key.")
        others: list[str] = []
        for name, rotator in SECRET_ROTATORS.items():  # the other apps' stored secrets (common/secrets.py)
            rotated, unreadable = rotator()
            self.stdout.write(f"{rotated} {name} re-encrypted under the first key.")
            others += unreadable
        if rotation.unreadable:
            ids = ", ".join(str(pk) for pk in rotation.unreadable)
            raise CommandError(
                f"{len(rotation.unreadable)} keys open with none of ENCRYPTION_KEYS (endpoints {ids}): set them again."
            )
        if others:
            raise CommandError(f"These open with none of ENCRYPTION_KEYS: {'; '.join(others)}. Set them again.")
