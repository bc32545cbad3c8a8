// The one place where browser offsets (UTF-16 code units) meet stored offsets
// (Unicode code points, as Python str indexing counts them).
//
// A character outside the Basic Multilingual Plane (Cantonese 𠮶, U+20BB6) is
// one code point but two UTF-16 units, so every offset after it differs by one.
// Combining marks and right-to-left text need nothing special: each mark is its
// own code point in both counts, and offsets are logical (memory) order.

const isHigh = (unit) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit) => unit >= 0xdc00 && unit <= 0xdfff;

/** True when `utf16Offset` falls between the two halves of a surrogate pair. */
export function insideSurrogatePair(text, utf16Offset) {
  return (
    utf16Offset > 0 &&
    utf16Offset < text.length &&
    isHigh(text.charCodeAt(utf16Offset - 1)) &&
    isLow(text.charCodeAt(utf16Offset))
  );
}

/**
 * Convert a UTF-16 offset into `text` to a code-point offset.
 *
 * An offset inside a surrogate pair is snapped to the pair's start
 * (snap = "start", right for the start of a range) or its end
 * (snap = "end", right for the end of a range), so a character is never split.
 * Offsets outside the text are clamped to it.
 */
export function utf16ToCodePoint(text, utf16Offset, snap = "start") {
  let target = Math.max(0, Math.min(Math.trunc(utf16Offset) || 0, text.length));
  if (insideSurrogatePair(text, target)) target += snap === "end" ? 1 : -1;
  let codePoints = 0;
  for (let i = 0; i < target; i++) {
    // A well-formed pair counts once; a lone surrogate counts as one code point, as in Python.
    if (isHigh(text.charCodeAt(i)) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) i++;
    codePoints++;
  }
  return codePoints;
}

/** Convert a code-point offset into `text` to a UTF-16 offset (clamped to the text). */
export function codePointToUtf16(text, cpOffset) {
  let remaining = Math.max(0, Math.trunc(cpOffset) || 0);
  let i = 0;
  while (remaining > 0 && i < text.length) {
    if (isHigh(text.charCodeAt(i)) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) i += 2;
    else i += 1;
    remaining--;
  }
  return i;
}

/** Length of `text` in code points (Python's len()). */
export function codePointLength(text) {
  return utf16ToCodePoint(text, text.length);
}

/** `text[start:end]` with code-point offsets, as Python slices it. */
export function sliceCodePoints(text, start, end) {
  return text.slice(codePointToUtf16(text, start), codePointToUtf16(text, end));
}
