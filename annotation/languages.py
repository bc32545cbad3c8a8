"""Language varieties localqa knows: ISO 639-3 codes, Wikipedia codes, script direction.

Wikipedia language codes are not ISO codes (Cantonese is `zh-yue`, Standard
Arabic is `ar`), so every project stores both; the wiki code is derived from
this table and can be overridden.
"""

import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError


@dataclass(frozen=True)
class Language:
    code: str  # ISO 639-3
    name: str
    wiki: str  # Wikipedia subdomain
    direction: str = "ltr"


class UnknownLanguage(ValueError):
    def __init__(self, code: str) -> None:
        super().__init__(
            f"Unknown language code {code!r}: use an ISO 639-3 code such as 'yue', 'cmn', 'bar', 'deu', 'arz' or 'arb'."
        )
        self.code = code


_LANGUAGES = [
    # Chinese varieties
    Language("yue", "Cantonese", "zh-yue"),
    Language("cmn", "Mandarin Chinese", "zh"),
    Language("zho", "Chinese", "zh"),
    Language("wuu", "Wu Chinese", "wuu"),
    Language("nan", "Min Nan Chinese", "zh-min-nan"),
    Language("hak", "Hakka Chinese", "hak"),
    Language("cdo", "Min Dong Chinese", "cdo"),
    Language("gan", "Gan Chinese", "gan"),
    Language("lzh", "Literary Chinese", "zh-classical"),
    # German varieties and neighbours
    Language("deu", "German", "de"),
    Language("bar", "Bavarian", "bar"),
    Language("gsw", "Alemannic German", "als"),
    Language("nds", "Low German", "nds"),
    Language("pfl", "Palatine German", "pfl"),
    Language("ksh", "Ripuarian", "ksh"),
    Language("pdc", "Pennsylvania German", "pdc"),
    Language("ltz", "Luxembourgish", "lb"),
    Language("nld", "Dutch", "nl"),
    Language("vls", "West Flemish", "vls"),
    Language("zea", "Zeelandic", "zea"),
    Language("lim", "Limburgish", "li"),
    Language("fry", "West Frisian", "fy"),
    # Arabic varieties
    Language("arb", "Standard Arabic", "ar", "rtl"),
    Language("ara", "Arabic", "ar", "rtl"),
    Language("arz", "Egyptian Arabic", "arz", "rtl"),
    Language("ary", "Moroccan Arabic", "ary", "rtl"),
    Language("apc", "Levantine Arabic", "apc", "rtl"),
    # Romance varieties
    Language("ita", "Italian", "it"),
    Language("nap", "Neapolitan", "nap"),
    Language("scn", "Sicilian", "scn"),
    Language("vec", "Venetian", "vec"),
    Language("lmo", "Lombard", "lmo"),
    Language("pms", "Piedmontese", "pms"),
    Language("fra", "French", "fr"),
    Language("pcd", "Picard", "pcd"),
    Language("spa", "Spanish", "es"),
    Language("ast", "Asturian", "ast"),
    Language("ext", "Extremaduran", "ext"),
    Language("cat", "Catalan", "ca"),
    Language("glg", "Galician", "gl"),
    Language("por", "Portuguese", "pt"),
    Language("ron", "Romanian", "ro"),
    # Others
    Language("eng", "English", "en"),
    Language("sco", "Scots", "sco"),
    Language("eus", "Basque", "eu"),
    Language("pol", "Polish", "pl"),
    Language("szl", "Silesian", "szl"),
    Language("csb", "Kashubian", "csb"),
    Language("ces", "Czech", "cs"),
    Language("slk", "Slovak", "sk"),
    Language("rus", "Russian", "ru"),
    Language("ukr", "Ukrainian", "uk"),
    Language("rue", "Rusyn", "rue"),
    Language("tur", "Turkish", "tr"),
    Language("fas", "Persian", "fa", "rtl"),
    Language("pes", "Iranian Persian", "fa", "rtl"),
    Language("mzn", "Mazanderani", "mzn", "rtl"),
    Language("glk", "Gilaki", "glk", "rtl"),
    Language("urd", "Urdu", "ur", "rtl"),
    Language("pnb", "Western Punjabi", "pnb", "rtl"),
    Language("hin", "Hindi", "hi"),
    Language("bho", "Bhojpuri", "bh"),
    Language("heb", "Hebrew", "he", "rtl"),
    Language("yid", "Yiddish", "yi", "rtl"),
    Language("jpn", "Japanese", "ja"),
    Language("kor", "Korean", "ko"),
    Language("ind", "Indonesian", "id"),
    Language("jav", "Javanese", "jv"),
    Language("sun", "Sundanese", "su"),
    Language("msa", "Malay", "ms"),
]

LANGUAGES: dict[str, Language] = {language.code: language for language in _LANGUAGES}


def get_language(code: str) -> Language:
    try:
        return LANGUAGES[code]
    except KeyError:
        raise UnknownLanguage(code) from None


def direction_of(code: str) -> str:
    """The script direction of a language code for `dir` (`auto` for a code localqa does not know): the one rule
    behind the `lang` template filter and every screen that sets `dir` itself."""
    language = LANGUAGES.get(str(code))
    return language.direction if language is not None else "auto"


def language_choices() -> list[tuple[str, str]]:
    return sorted(((lang.code, f"{lang.name} ({lang.code})") for lang in _LANGUAGES), key=lambda c: c[1])


# A Wikipedia code is a host name label: lowercase letters, digits and inner hyphens (zh-yue, zh-min-nan,
# bat-smg, roa-tara, be-tarask). It becomes the host the worker connects to (WIKIPEDIA_API_URL), so nothing
# else may pass: no dots, colons, slashes, `#` or `@` that would point the request at another host.
WIKI_CODE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
WIKI_CODE_MAX = 32
WIKI_CODE_RULE = "a Wikipedia code is lowercase letters, digits and hyphens, e.g. zh-yue, bar or zh-min-nan"


def is_wiki_code(value: object) -> bool:
    """True for wiki-code syntax (also used for script variants such as zh-hk)."""
    return isinstance(value, str) and len(value) <= WIKI_CODE_MAX and WIKI_CODE.fullmatch(value) is not None


def validate_wiki_code(value: object) -> None:
    """Django validator form of `is_wiki_code` (model and form fields, serializers, archive rows)."""
    if not is_wiki_code(value):
        raise ValidationError(f"{str(value)[:40]!r} is not a wiki code: {WIKI_CODE_RULE}.", code="wiki_code")


# A script variant MediaWiki's `variant` takes (zh-hk, zh-hans, sr-el); sent as a parameter, never as the host.
VARIANT = re.compile(r"[a-z]{2,3}(-[a-z0-9]{2,8})+")
VARIANT_RULE = "a script variant is a code such as zh-cn, zh-hk or zh-tw"


def is_variant(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 16 and VARIANT.fullmatch(value) is not None


def validate_variant(value: object) -> None:
    if not is_variant(value):
        raise ValidationError(f"{str(value)[:40]!r} is not a script variant: {VARIANT_RULE}.", code="variant")
