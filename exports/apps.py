from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"
    verbose_name = "Exports"

    def ready(self) -> None:
        from common import kinds
        from exports.formats import wikipedia_release_writers

        kinds.extend("wikipedia_qa", release_writers=wikipedia_release_writers)  # the Wikipedia QA kind's writers
