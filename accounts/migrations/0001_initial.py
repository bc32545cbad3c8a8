import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def content_types_follow(apps, schema_editor):
    """The two models' content types (and so their permissions and admin log entries) follow them here."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model in ("account", "apitoken"):
        if not ContentType.objects.filter(app_label="accounts", model=model).exists():
            ContentType.objects.filter(app_label="annotation", model=model).update(app_label="accounts")


def content_types_go_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model in ("account", "apitoken"):
        if not ContentType.objects.filter(app_label="annotation", model=model).exists():
            ContentType.objects.filter(app_label="accounts", model=model).update(app_label="annotation")


class Migration(migrations.Migration):
    """Account and ApiToken, moved from `annotation` into the state of this app, on the tables they already have.

    State only: annotation/migrations/0022 removed them from annotation's state; the tables (annotation_account,
    annotation_apitoken) made by annotation's 0013, 0016 and 0021 keep every row.
    """

    initial = True

    dependencies = [
        ("annotation", "0022_account_and_api_token_move_to_accounts"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Account",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"),
                        ),
                        (
                            "must_change_password",
                            models.BooleanField(
                                default=False,
                                help_text="Set when someone else chose the password; cleared when the person sets "
                                "their own.",
                            ),
                        ),
                        (
                            "password_set_at",
                            models.DateTimeField(
                                blank=True, help_text="When the person last chose a password.", null=True
                            ),
                        ),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        (
                            "created_in",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="annotation.project",
                            ),
                        ),
                        (
                            "invited_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "user",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="account",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={"db_table": "annotation_account"},
                ),
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"),
                        ),
                        ("digest", models.CharField(max_length=64, unique=True)),
                        (
                            "prefix",
                            models.CharField(help_text="The key's first characters, to tell tokens apart.", max_length=8),
                        ),
                        ("name", models.CharField(blank=True, max_length=100)),
                        (
                            "via",
                            models.CharField(
                                choices=[("sign_in", "Signed in through the API"), ("page", "Created on the tokens page")],
                                default="sign_in",
                                max_length=16,
                            ),
                        ),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        (
                            "expires_at",
                            models.DateTimeField(blank=True, help_text="Empty: never (API_TOKEN_DAYS=0).", null=True),
                        ),
                        ("last_used_at", models.DateTimeField(blank=True, null=True)),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="api_tokens",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "annotation_apitoken",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [models.Index(fields=["user", "-created_at"], name="apitoken_user_idx")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_go_back),
    ]
