"""Every review slot now names its project: required, and a project's waiting slots indexed in id order."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("review", "0006_slot_carries_its_project"),
    ]

    operations = [
        migrations.AlterField(
            model_name="reviewslot",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotation.project"
            ),
        ),
        migrations.AddIndex(
            model_name="reviewslot",
            index=models.Index(
                condition=models.Q(("status__in", ["open", "claimed"])),
                fields=["project", "status", "id"],
                name="slot_waiting_idx",
            ),
        ),
    ]
