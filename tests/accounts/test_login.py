from django.test import override_settings
from django.urls import reverse

from tests.factories import PASSWORD


def attempt(client, username: str, password: str, address: str = "192.0.2.1"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


@override_settings(LOGIN_MAX_FAILURES=3)
def test_repeated_wrong_passwords_lock_the_name_out_even_with_the_right_one(client, annotator, second_annotator):
    for _ in range(2):
        assert attempt(client, "annotator", "wrong").status_code == 200
    assert attempt(client, "annotator", "wrong").status_code == 429  # the third failure locks, and says so

    locked = attempt(client, "annotator", PASSWORD)

    assert locked.status_code == 429
    assert "Too many failed attempts" in locked.content.decode()
    assert "_auth_user_id" not in client.session
    assert attempt(client, "annotator2", PASSWORD).status_code == 302  # other names are not affected


@override_settings(LOGIN_MAX_FAILURES=3)
def test_a_successful_login_resets_the_failure_count(client, annotator):
    address = "192.0.2.2"  # counts are per user name and address
    attempt(client, "annotator", "wrong", address)
    attempt(client, "annotator", "wrong", address)
    assert attempt(client, "annotator", PASSWORD, address).status_code == 302
    client.logout()

    for _ in range(2):
        attempt(client, "annotator", "wrong", address)

    assert attempt(client, "annotator", PASSWORD, address).status_code == 302


def test_pages_carry_security_headers(client, annotator):
    client.force_login(annotator)

    response = client.get(reverse("home"))

    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
