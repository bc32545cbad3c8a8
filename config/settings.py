"""localqa settings: everything comes from the environment and fails loudly.

With nothing set, localqa runs on its embedded default: SQLite in the project
folder, Celery tasks executed in-process (on background threads), DEBUG on. Production sets at least
SECRET_KEY, DEBUG=false, ALLOWED_HOSTS, DATABASE_URL, REDIS_URL and ENCRYPTION_KEYS.
"""

from pathlib import Path

import environ
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEFAULT_SECRET_KEY = "localqa-insecure-development-key"  # noqa: S105 - refused when DEBUG is off

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str("SECRET_KEY", default=DEFAULT_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEFAULT_SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is not set: with DEBUG off localqa refuses the built-in development key. "
        "Set SECRET_KEY in the environment (see .env.example)."
    )
if not DEBUG and len(SECRET_KEY) < 32:
    raise ImproperlyConfigured("SECRET_KEY is too short: use at least 32 random characters.")

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"] if DEBUG else [])
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS is empty: set it to the host names localqa is served on.")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Contact address sent in the User-Agent of every Wikipedia request (their API policy asks for one).
WIKIPEDIA_CONTACT = env.str("WIKIPEDIA_CONTACT", default="localqa-operator@example.invalid")
if "@" not in WIKIPEDIA_CONTACT and not WIKIPEDIA_CONTACT.startswith("http"):
    raise ImproperlyConfigured(
        "WIKIPEDIA_CONTACT must be an e-mail address or a URL where the operator can be reached."
    )
# Politeness towards Wikipedia: seconds between requests (per worker process), retries with backoff.
WIKIPEDIA_REQUEST_INTERVAL = env.float("WIKIPEDIA_REQUEST_INTERVAL", default=0.2)
WIKIPEDIA_MAX_RETRIES = env.int("WIKIPEDIA_MAX_RETRIES", default=4)
WIKIPEDIA_RETRY_WAIT = env.float("WIKIPEDIA_RETRY_WAIT", default=1.0)  # doubles with each retry
# The MediaWiki API endpoint, {wiki} standing for the wiki code: a mirror or a recorded-replies server may stand in.
WIKIPEDIA_API_URL = env.str("WIKIPEDIA_API_URL", default="https://{wiki}.wikipedia.org/w/api.php")
if "{wiki}" not in WIKIPEDIA_API_URL:
    raise ImproperlyConfigured("WIKIPEDIA_API_URL must contain {wiki}, the place of the wiki code.")

# Model endpoints (endpoints/, docs/models.md). The hosts a coordinator's endpoint URL may name: host names
# or IP addresses, each optionally with ":port", or "*.example.org" for any name under a domain. A name listed
# exactly may resolve to a private or loopback address (a model server on this machine or the lab's network);
# a wildcard match must resolve to public addresses only. Empty: no endpoint may be saved or called.
MODEL_ALLOWED_HOSTS = env.list("MODEL_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"] if DEBUG else [])
if any(entry.strip() in {"*", "*.*"} for entry in MODEL_ALLOWED_HOSTS):
    raise ImproperlyConfigured(
        "MODEL_ALLOWED_HOSTS may not allow every host: list the model servers' hosts (or *.their-domain)."
    )
# Retries of a model call: attempts in all (the first included), the first wait (doubling, with jitter) and the
# longest wait, a server's Retry-After included (asking for longer ends the call as rate-limited).
MODEL_MAX_ATTEMPTS = env.int("MODEL_MAX_ATTEMPTS", default=5)
MODEL_RETRY_BASE_SECONDS = env.float("MODEL_RETRY_BASE_SECONDS", default=1.0)
MODEL_RETRY_MAX_SECONDS = env.float("MODEL_RETRY_MAX_SECONDS", default=60.0)
MODEL_REPLY_MAX_BYTES = env.int("MODEL_REPLY_MAX_BYTES", default=10 * 1024 * 1024)  # a longer reply is refused
if MODEL_MAX_ATTEMPTS < 1:
    raise ImproperlyConfigured("MODEL_MAX_ATTEMPTS must be at least 1 (the first attempt).")

# Search collections of validation projects (validation/search.py, docs/validation.md): the SerpApi address,
# the hosts it may name (entries shaped as MODEL_ALLOWED_HOSTS'), one call's timeout, attempts per call (the
# first included; a timeout or a server error is tried again after a doubling wait) and the largest reply read.
SERPAPI_BASE_URL = env.str("SERPAPI_BASE_URL", default="https://serpapi.com")
SEARCH_ALLOWED_HOSTS = env.list("SEARCH_ALLOWED_HOSTS", default=["serpapi.com"])
# Hosts whose images (image-search results) pages show inline: `host`, `*.domain`, `host:port` (https), or
# `http://host:port` (plain http, only when named so). Any other image is shown as a link, never loaded by the
# page; the page's Content-Security-Policy allows exactly these as image sources (img-src below).
SEARCH_IMAGE_HOSTS = env.list("SEARCH_IMAGE_HOSTS", default=["serpapi.com", "*.gstatic.com"])
if any(entry.strip() in {"*", "*.*", "http://*", "https://*"} for entry in SEARCH_IMAGE_HOSTS):
    raise ImproperlyConfigured("SEARCH_IMAGE_HOSTS may not allow every host: list the image hosts.")
if any(entry.strip() in {"*", "*.*"} for entry in SEARCH_ALLOWED_HOSTS):
    raise ImproperlyConfigured("SEARCH_ALLOWED_HOSTS may not allow every host: list the search API's host.")
SEARCH_TIMEOUT_SECONDS = env.float("SEARCH_TIMEOUT_SECONDS", default=30.0)
SEARCH_MAX_ATTEMPTS = max(1, env.int("SEARCH_MAX_ATTEMPTS", default=3))
SEARCH_RETRY_BASE_SECONDS = env.float("SEARCH_RETRY_BASE_SECONDS", default=2.0)
SEARCH_REPLY_MAX_BYTES = env.int("SEARCH_REPLY_MAX_BYTES", default=5 * 1024 * 1024)

# Secrets stored in the database (model endpoints' API keys) are encrypted with these Fernet keys
# (common/secrets.py): comma-separated, the first encrypts, every one decrypts, so a new key listed first
# rotates them (`manage.py endpoint rotate-keys` re-encrypts what is stored, then the old key may go).
# With DEBUG on and none set, a key derived from SECRET_KEY stands in (development only).
ENCRYPTION_KEYS = env.list("ENCRYPTION_KEYS", default=[])
if not DEBUG and not ENCRYPTION_KEYS:
    raise ImproperlyConfigured(
        "ENCRYPTION_KEYS is not set: with DEBUG off localqa needs a key to encrypt stored API keys. Make one with "
        "python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())' "
        "and set ENCRYPTION_KEYS in the environment (see .env.example)."
    )
for _position, _key in enumerate(ENCRYPTION_KEYS, start=1):
    try:
        Fernet(_key)
    except ValueError:
        raise ImproperlyConfigured(
            f"ENCRYPTION_KEYS: entry {_position} is not a Fernet key (32 url-safe base64-encoded bytes)."
        ) from None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "django_htmx",
    "template_partials",
    "annotation",
    "accounts",
    "wikiqa",
    "review",
    "exports",
    "validation",
    "multichoice",
    "audit",
    "archive",
    "endpoints",
    "evaluation",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.ScriptAuthMiddleware",  # 401 JSON, not the sign-in page, for htmx/fetch
    "accounts.middleware.PasswordChangeRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last: turns a sign-in lockout (accounts/signin.py) into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'localqa.sqlite3'}"),
}
DATABASES["default"].setdefault("ATOMIC_REQUESTS", False)
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (server, in-process tasks, a worker) write the one file. BEGIN IMMEDIATE takes the
    # write lock when a transaction starts, so a writer waits its turn (up to `timeout`) instead of failing
    # with "database is locked" when a read lock cannot be upgraded; WAL lets readers go on meanwhile.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20,
        transaction_mode="IMMEDIATE",
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    )
    # A file, not memory: tests start servers and Celery workers in other processes that must see the data.
    DATABASES["default"].setdefault("TEST", {}).setdefault("NAME", str(BASE_DIR / "test_localqa.sqlite3"))
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A backend module of one's own that subclasses Django's (the test suite's, tests/postgresql_backend, empties
    # tables faster between tests); Django's own by default.
    DATABASES["default"]["ENGINE"] = env.str("POSTGRESQL_BACKEND", default="django.db.backends.postgresql")
    # A persistent connection that died with a PostgreSQL restart is replaced, not reused (no app restart).
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # A database that does not answer fails a request within seconds, as a 503 (config/errors.py), not a hang.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=5)
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
CSRF_FAILURE_VIEW = "accounts.views.auth.csrf_failure"
LOGIN_REDIRECT_URL = "home"
# Invitation links and password-reset links stop working after this many seconds (and once used).
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=3 * 24 * 3600)

# E-mail (invitations, password resets): printed to the console unless EMAIL_URL (smtp+tls://user:pass@host:587)
# or EMAIL_HOST is set.
if env.str("EMAIL_URL", default=""):
    vars().update(env.email_url("EMAIL_URL"))
elif env.str("EMAIL_HOST", default=""):
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = env.str("EMAIL_HOST")
    EMAIL_PORT = env.int("EMAIL_PORT", default=587)
    EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
    EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
    EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=EMAIL_PORT == 587)
    EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=EMAIL_PORT == 465)
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="localqa <localqa@localhost>")
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
MEDIA_ROOT = env.path("MEDIA_ROOT", default=BASE_DIR / "media")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # Hashed, compressed names in production (needs collectstatic); plain files in development and tests.
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if env.bool("STATIC_MANIFEST", default=not DEBUG)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# No inline scripts anywhere: htmx is configured by a meta tag, every behaviour lives in static/js/.
# Inline styles stay allowed for the API docs (Swagger UI sets them); scripts never.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": [
            "'self'",
            "data:",
            *(entry if entry.startswith("http://") else f"https://{entry}" for entry in SEARCH_IMAGE_HOSTS),
        ],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    }
}
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
if env.bool("BEHIND_HTTPS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Celery: Redis as broker; with no broker configured, tasks run in-process (embedded default).
REDIS_URL = env.str("REDIS_URL", default="")
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
# Workers run at this niceness (0-19): imports, agreement and release builds give way to web requests.
WORKER_NICE = env.int("WORKER_NICE", default=10)
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not CELERY_BROKER_URL)
# With no broker, a job runs on one of JOB_THREADS background threads of the web process once the request that
# started it commits (common/jobs.py): the request answers at once and the job's page polls its progress, as with
# a worker. Off when a broker is set, and in the tests (pyproject.toml), which run jobs inside the request.
JOBS_IN_THREADS = env.bool("JOBS_IN_THREADS", default=CELERY_TASK_ALWAYS_EAGER and not CELERY_BROKER_URL)
JOB_THREADS = env.int("JOB_THREADS", default=2)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True  # a worker that dies mid-task leaves the message for another worker
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_QUEUE", default="localqa")
CELERY_TASK_IGNORE_RESULT = True  # status and progress live in our own tables
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Seconds to wait for Redis as the broker, connecting and per command: a Redis that accepts connections but does not
# answer (hung, swapping, paused) fails the send within seconds instead of holding the request until the web
# server kills its worker; the job's row stays pending and a worker picks it up later (common/enqueue.py).
BROKER_TIMEOUT = env.float("BROKER_TIMEOUT", default=1.0)
CELERY_BROKER_CONNECTION_TIMEOUT = BROKER_TIMEOUT
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 3600,
    "socket_timeout": BROKER_TIMEOUT,
    "socket_connect_timeout": BROKER_TIMEOUT,
}
# Sending a task gives up within about a second when Redis is down; the job's row stays pending (common/enqueue.py).
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}

# Cache: Redis when configured (shared by every web process: login lockouts, API throttles), else in-memory.
# It fails open (django-redis's IGNORE_EXCEPTIONS): while Redis is down a read is a miss and a write is dropped, so
# requests go on without throttles and lockouts (each ignored error logged), and give up on Redis within
# CACHE_TIMEOUT seconds instead of hanging.
CACHE_URL = env.str("CACHE_URL", default=REDIS_URL)
CACHE_TIMEOUT = env.float("CACHE_TIMEOUT", default=0.5)
CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache" if CACHE_URL else "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": CACHE_URL or "localqa",
        "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="localqa"),
        "OPTIONS": {
            "SOCKET_CONNECT_TIMEOUT": CACHE_TIMEOUT,
            "SOCKET_TIMEOUT": CACHE_TIMEOUT,
            "IGNORE_EXCEPTIONS": True,
            "CLIENT_CLASS": "common.cache.FailOpenClient",
        }
        if CACHE_URL
        else {},
    }
}
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True

# Guessing passwords (accounts/signin.py): after this many failures for one user name from one client
# address — through the sign-in form, POST /api/auth/token/ or the admin alike — that pair waits this long.
LOGIN_MAX_FAILURES = env.int("LOGIN_MAX_FAILURES", default=5)
LOGIN_LOCKOUT_MINUTES = env.int("LOGIN_LOCKOUT_MINUTES", default=15)
# How many reverse proxies of ours stand in front of localqa, each adding to X-Forwarded-For (the shipped
# nginx: 1). 0: REMOTE_ADDR is the client. Behind a proxy, leaving it 0 makes every client the proxy's address,
# so a few wrong guesses would lock a name for everyone; setting it without a proxy lets clients pick their own
# address. Used for the sign-in lockout and the API throttles.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
if TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured("TRUSTED_PROXY_COUNT must be 0 (no proxy) or the number of proxies in front.")
AUTHENTICATION_BACKENDS = [
    "accounts.signin.LockoutBackend",  # axes: refuses a locked-out name before any password is checked
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "axes.handlers.cache.AxesCacheHandler"  # counts in the fail-open cache above
AXES_FAILURE_LIMIT = "accounts.signin.failure_limit"  # LOGIN_MAX_FAILURES, read when counting
AXES_COOLOFF_TIME = "accounts.signin.lockout_time"  # LOGIN_LOCKOUT_MINUTES
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # guesses during a lockout do not prolong it
AXES_USERNAME_CALLABLE = "accounts.signin.lockout_username"
AXES_CLIENT_IP_CALLABLE = "accounts.signin.client_address"
AXES_LOCKOUT_CALLABLE = "accounts.signin.lockout_response"
AXES_SENSITIVE_PARAMETERS = ["password"]
AXES_VERBOSE = False  # no banner on every start and management command; failures and lockouts are still logged
if not CACHE_URL:
    # The embedded default counts in each process's memory; axes warns about that, and it is the trade-off
    # of a single-process setup (production sets REDIS_URL, which every web process shares).
    SILENCED_SYSTEM_CHECKS = ["axes.W001"]

# API tokens (accounts/tokens.py): days a new token works (0: until revoked). Signing out keeps them.
API_TOKEN_DAYS = env.int("API_TOKEN_DAYS", default=30)
if API_TOKEN_DAYS < 0:
    raise ImproperlyConfigured("API_TOKEN_DAYS must be 0 (no expiry) or a number of days.")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "accounts.tokens.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PARSER_CLASSES": [
        "common.parsers.JSONParser",  # DRF's, with a 400 for JSON nested too deep
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "common.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "common.api_errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="60/min"),
        "user": env.str("API_THROTTLE_USER", default="3000/min"),
        "auth": env.str("API_THROTTLE_AUTH", default="20/min"),  # POST /api/auth/token/, per client address
        # Around passwords (accounts/throttles.py), for the API and the pages alike: changing one's password
        # per person; reset requests per client address; reset e-mails per e-mail address.
        "password": env.str("API_THROTTLE_PASSWORD", default="10/hour"),
        "password_reset": env.str("API_THROTTLE_PASSWORD_RESET", default="10/hour"),
        "password_reset_address": env.str("API_THROTTLE_PASSWORD_RESET_ADDRESS", default="3/hour"),
    },
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,  # throttles key on the client address as the sign-in lockout does
}

SPECTACULAR_SETTINGS = {
    "TITLE": "localqa API",
    "DESCRIPTION": "Author, review and publish question-answer datasets about local-language knowledge.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/",
    # Served from our own static files: no CDN (and none reachable offline).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Choice sets that share a field name ("status") get names of their own.
    "ENUM_NAME_OVERRIDES": {
        "ModelCallStatusEnum": "endpoints.models.ModelCall.Status",
        "JobStatusEnum": "common.jobs.JobStatus",
    },
}

# Project behaviour
PAIR_CLAIM_MINUTES = env.int("PAIR_CLAIM_MINUTES", default=30)
IMPORT_MAX_BYTES = env.int("IMPORT_MAX_BYTES", default=200 * 1024 * 1024)
# What one imported pair may hold: a lead and a full text (code points; Wikipedia caps a page at 2 MiB of
# wikitext), and evidence spans per QA item. More is a broken file, refused with the record named.
IMPORT_MAX_LEAD_CHARS = env.int("IMPORT_MAX_LEAD_CHARS", default=200_000)
IMPORT_MAX_TEXT_CHARS = env.int("IMPORT_MAX_TEXT_CHARS", default=3_000_000)
IMPORT_MAX_SPANS_PER_ITEM = env.int("IMPORT_MAX_SPANS_PER_ITEM", default=50)
# Prompt templates of a release (exports/formats/prompts.py): each placeholder copies a lead into every prompt,
# so their length and number of placeholders are capped.
PROMPT_TEMPLATE_MAX_CHARS = env.int("PROMPT_TEMPLATE_MAX_CHARS", default=4000)
PROMPT_TEMPLATE_MAX_PLACEHOLDERS = env.int("PROMPT_TEMPLATE_MAX_PLACEHOLDERS", default=10)
CALCULATOR_MAX_BYTES = env.int("CALCULATOR_MAX_BYTES", default=10 * 1024 * 1024)  # agreement calculator uploads
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=5 * 1024 * 1024)
# A running job whose worker has not reported for this long is presumed dead and taken over by the next
# delivery of its task, or sent again when a worker starts (common/jobs.py, common/enqueue.py): collections
# and imports, release builds (or marked failed by the release pages), agreement reports.
JOB_STALE_SECONDS = env.int("JOB_STALE_SECONDS", default=300)
RELEASE_STALE_SECONDS = env.int("RELEASE_STALE_SECONDS", default=300)
EVALUATION_STALE_SECONDS = env.int("EVALUATION_STALE_SECONDS", default=300)
# The local-knowledge check (evaluation/local_checks.py): a check waits this long after the save that asked for it
# (autosave while typing asks again; only the last request is sent), and a failed one is tried again this many
# times, after LOCAL_CHECK_RETRY_SECONDS doubling.
LOCAL_CHECK_DELAY_SECONDS = env.float("LOCAL_CHECK_DELAY_SECONDS", default=3.0)
LOCAL_CHECK_MAX_TRIES = env.int("LOCAL_CHECK_MAX_TRIES", default=4)
LOCAL_CHECK_RETRY_SECONDS = env.float("LOCAL_CHECK_RETRY_SECONDS", default=60.0)
EVALUATION_MAX_BYTES = env.int("EVALUATION_MAX_BYTES", default=50 * 1024 * 1024)  # a predictions upload
AGREEMENT_STALE_SECONDS = env.int("AGREEMENT_STALE_SECONDS", default=600)
# Tests only: seconds a job pauses between its steps, so a fault test can kill its worker mid-way. Keep 0.
JOB_STEP_DELAY = env.float("JOB_STEP_DELAY", default=0.0)
# Items a release build reads and writes per step (one step = a few queries and a progress heartbeat).
RELEASE_CHUNK_SIZE = env.int("RELEASE_CHUNK_SIZE", default=2000)
# Project archives (export/import of a whole project): upload size, unpacked size, compression ratio and
# member count allowed before anything is unpacked; a job whose worker has not reported for this long is taken over.
ARCHIVE_MAX_BYTES = env.int("ARCHIVE_MAX_BYTES", default=2 * 1024**3)
ARCHIVE_MAX_UNPACKED_BYTES = env.int("ARCHIVE_MAX_UNPACKED_BYTES", default=20 * 1024**3)
ARCHIVE_MAX_RATIO = env.int("ARCHIVE_MAX_RATIO", default=200)
ARCHIVE_MAX_MEMBERS = env.int("ARCHIVE_MAX_MEMBERS", default=100_000)
ARCHIVE_STALE_SECONDS = env.int("ARCHIVE_STALE_SECONDS", default=600)
ARCHIVE_PROGRESS_SECONDS = env.float("ARCHIVE_PROGRESS_SECONDS", default=0.5)  # between progress writes
# Agreement reports queue themselves after this many new judgments (0: never), waiting this many
# seconds so the rest of a burst of reviews lands in the same report.
AGREEMENT_AUTO_JUDGMENTS = env.int("AGREEMENT_AUTO_JUDGMENTS", default=50)
AGREEMENT_AUTO_COUNTDOWN = env.int("AGREEMENT_AUTO_COUNTDOWN", default=60)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
