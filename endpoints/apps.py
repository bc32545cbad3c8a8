from django.apps import AppConfig


class EndpointsConfig(AppConfig):
    name = "endpoints"
    verbose_name = "Model endpoints"

    def ready(self) -> None:
        from endpoints import checks  # noqa: F401 - registers the allow-list's system check
