FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.lock pyproject.toml ./
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
RUN DEBUG=false SECRET_KEY=collectstatic-only-not-a-real-key-0123456789abcdef ALLOWED_HOSTS=build \
    ENCRYPTION_KEYS=YnVpbGQtb25seS1rZXktbmV2ZXItZGVjcnlwdHMtaXQ= \
    python manage.py collectstatic --noinput
RUN useradd --create-home localqa && mkdir -p /app/media && chown localqa /app/media
USER localqa
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4", "--access-logfile", "-"]
