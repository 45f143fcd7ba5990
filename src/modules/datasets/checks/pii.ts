/** Detectors of personal data in text, each confirmed by the value's own checksum where it has one. */

export type PiiKind = 'email' | 'phone' | 'card' | 'iban' | 'ssn';

export interface PiiMatch {
  kind: PiiKind;
  value: string;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
// International (+CC …) or grouped national numbers; at least 9 digits in all, so years and short ids are not phones.
const PHONE = /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){2,4}\b|\+\d{9,14}\b/g;
const CARD = /\b\d(?:[ -]?\d){12,18}\b/g;
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/g;
const SSN = /\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g;

/** The Luhn checksum of payment card numbers. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616 mod-97 check of an IBAN (spaces ignored). */
export function ibanValid(iban: string): boolean {
  const compact = iban.replace(/ /g, '');
  if (compact.length < 15 || compact.length > 34) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const code = ch >= 'A' && ch <= 'Z' ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of code) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

export function findPii(text: string, kinds: ReadonlySet<PiiKind>): PiiMatch[] {
  const found: PiiMatch[] = [];
  const taken: Array<[number, number]> = [];
  /** `shaped` spans are taken even when their checksum fails: an invalid IBAN is still not a phone number. */
  const claim = (kind: PiiKind, re: RegExp, valid: (value: string) => boolean, shaped = false) => {
    if (!kinds.has(kind) && !shaped) return;
    for (const m of text.matchAll(re)) {
      const start = m.index;
      const end = start + m[0].length;
      // A span already recognised (an IBAN's digits, a card) is not also a phone number.
      if (taken.some(([s, e]) => start < e && end > s)) continue;
      const ok = valid(m[0]);
      if (ok || shaped) taken.push([start, end]);
      if (ok && kinds.has(kind)) found.push({ kind, value: m[0] });
    }
  };
  claim('email', EMAIL, () => true);
  claim('iban', IBAN, ibanValid, true);
  claim('card', CARD, (v) => {
    const digits = v.replace(/[ -]/g, '');
    return digits.length >= 13 && digits.length <= 19 && luhnValid(digits);
  });
  claim('ssn', SSN, () => true);
  claim('phone', PHONE, (v) => {
    const digits = v.replace(/\D/g, '');
    return digits.length >= 9 && digits.length <= 15;
  });
  return found;
}
