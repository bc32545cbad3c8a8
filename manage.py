#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Without a broker the web server runs jobs on its own threads (settings.JOBS_IN_THREADS); a command (an
    # import, a release, a report) runs its job before it returns, or its process would end with the job unrun.
    if sys.argv[1:2] != ["runserver"]:
        os.environ.setdefault("JOBS_IN_THREADS", "false")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
