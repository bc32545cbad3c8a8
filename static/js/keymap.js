// Which key a person pressed, whatever keyboard layout is active: the one place every screen's keys read.
//
// With an Arabic, Greek or Cyrillic layout `event.key` is "ش" or "ф" for the key printed "a", and single-key
// shortcuts would do nothing. A Latin `event.key` wins (it follows AZERTY, QWERTZ and Dvorak as printed); any
// other character falls back to the physical key (`event.code`), so the shortcut sits where a Latin layout has it.
// Named keys ("Enter", "Escape", "ArrowLeft") come back as they are.

const LATIN = /^[a-z0-9?[\]/]$/;

const BY_CODE = {
  BracketLeft: "[",
  BracketRight: "]",
  Slash: "/",
};

export function keyOf(event) {
  const key = event.key || "";
  if (key.length !== 1) return key;
  const lower = key.toLowerCase();
  if (LATIN.test(lower)) return lower;
  const code = event.code || "";
  let match = /^Key([A-Z])$/.exec(code);
  if (match) return match[1].toLowerCase();
  match = /^(?:Digit|Numpad)([0-9])$/.exec(code);
  if (match) return match[1];
  if (code === "Slash" && event.shiftKey) return "?";
  return BY_CODE[code] || lower;
}
