from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo projects (`manage.py demo_setup`): on top of every app it fills, imported by none."""

    name = "demo"
    verbose_name = "Demo projects"
