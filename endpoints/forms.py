"""The endpoint form of the pages: field types here, every rule in `services` (the API shares them)."""

from __future__ import annotations

from typing import Any

from django import forms

from endpoints.hosts import allowed_hosts_text
from endpoints.models import Endpoint, Mode

CONNECTION = ("name", "base_url", "model", "mode", "api_key", "remove_key")
DECODING = ("temperature", "top_p", "max_tokens", "seed", "stop")
LIMITS = ("concurrency", "timeout_seconds", "price_input", "price_output")
ESCAPES = (("\\n", "\n"), ("\\t", "\t"))


def stop_from_text(text: str) -> list[str]:
    """One stop sequence per line; `\\n` and `\\t` written out stand for a line break and a tab."""
    found = []
    for line in text.splitlines():
        if line.strip():
            for written, meant in ESCAPES:
                line = line.replace(written, meant)
            found.append(line)
    return found


def stop_to_text(stop: list[str]) -> str:
    lines = []
    for sequence in stop:
        for written, meant in ESCAPES:
            sequence = sequence.replace(meant, written)
        lines.append(sequence)
    return "\n".join(lines)


class EndpointForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="How runs and people name it in this project.")
    base_url = forms.CharField(
        label="Base URL",
        max_length=500,
        widget=forms.TextInput(attrs={"inputmode": "url", "spellcheck": "false", "autocomplete": "off"}),
    )
    model = forms.CharField(
        max_length=200,
        help_text="The model name the server expects, e.g. Qwen/Qwen2.5-7B-Instruct or llama3.1:8b.",
        widget=forms.TextInput(attrs={"spellcheck": "false", "autocomplete": "off"}),
    )
    mode = forms.ChoiceField(choices=Mode.choices, initial=Mode.CHAT, widget=forms.RadioSelect)
    api_key = forms.CharField(
        label="API key",
        required=False,
        max_length=1000,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password", "spellcheck": "false"}),
        help_text="Stored encrypted; never shown again. Empty: no key (a local server needs none).",
    )
    remove_key = forms.BooleanField(label="Remove the stored key", required=False)
    temperature = forms.FloatField(required=False, min_value=0, max_value=2, help_text="Empty: the server's default.")
    top_p = forms.FloatField(label="Top p", required=False, min_value=0, max_value=1)
    max_tokens = forms.IntegerField(label="Most tokens per reply", required=False, min_value=1, max_value=1_000_000)
    seed = forms.IntegerField(required=False, help_text="For servers that sample reproducibly with one.")
    stop = forms.CharField(
        label="Stop sequences",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 40, "spellcheck": "false"}),
        help_text="One per line, at most 4; write \\n for a line break.",
    )
    concurrency = forms.IntegerField(
        label="Requests at once", initial=4, min_value=1, max_value=64, help_text="A run sends at most this many."
    )
    timeout_seconds = forms.IntegerField(
        label="Timeout (seconds)", initial=60, min_value=1, max_value=600, help_text="For one attempt."
    )
    price_input = forms.DecimalField(
        label="Price per million input tokens",
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=4,
        help_text="With the output price: each call's cost (any currency).",
    )
    price_output = forms.DecimalField(
        label="Price per million output tokens", required=False, min_value=0, max_digits=12, decimal_places=4
    )
    version = forms.IntegerField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, endpoint: Endpoint | None = None, key_set: bool = False, **kwargs: Any) -> None:
        if endpoint is not None and "initial" not in kwargs:
            initial = {name: getattr(endpoint, name) for name in (*DECODING, *LIMITS, *CONNECTION[:4])}
            kwargs["initial"] = initial | {"stop": stop_to_text(endpoint.stop), "version": endpoint.version}
        super().__init__(*args, **kwargs)
        self.fields["base_url"].help_text = (
            "The server's OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1 (vLLM) or "
            f"http://localhost:11434/v1 (Ollama). Hosts this server allows: {allowed_hosts_text()}."
        )
        if endpoint is None:
            del self.fields["remove_key"]
        else:
            state = "set" if key_set else "not set"
            self.fields["api_key"].help_text = (
                f"A key is {state}. Empty keeps it as it is; type a new one to replace it. Stored encrypted; "
                "never shown again."
            )
            if not key_set:
                del self.fields["remove_key"]
        for name, field in self.fields.items():
            if field.help_text:
                field.widget.attrs["aria-describedby"] = f"id_{name}-help"

    def add_error(self, field: str | None, error: Any) -> None:
        super().add_error(field, error)
        if self.data.get("api_key"):
            # A key is never sent back to the browser, not even into the form it was typed in.
            self["api_key"].help_text = "Type the key again: it is never sent back to the browser."

    def clean_stop(self) -> list[str]:
        return stop_from_text(self.cleaned_data.get("stop") or "")

    def settings(self) -> dict[str, Any]:
        """The cleaned settings, for `endpoint_create` / `endpoint_update`."""
        return {name: self.cleaned_data[name] for name in (*CONNECTION[:4], *DECODING, *LIMITS)}

    def groups(self) -> list[tuple[str, list[forms.BoundField]]]:
        """The visible fields in the page's three groups."""
        return [
            (title, [self[name] for name in names if name in self.fields])
            for title, names in (("Connection", CONNECTION), ("Decoding", DECODING), ("Limits and prices", LIMITS))
        ]
