import { describe, expect, it } from '@jest/globals';
import { httpsUrlProblem, imageUrlProblem, MAX_INLINE_IMAGE_BYTES, supportUrlProblem } from './branding-assets.js';

const png = (extra = 0) =>
  `data:image/png;base64,${Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(extra)]).toString('base64')}`;
const svg = (text: string) => `data:image/svg+xml;base64,${Buffer.from(text).toString('base64')}`;

describe('branding assets', () => {
  it('accepts https URLs and refuses other schemes, credentials and overlong ones', () => {
    expect(httpsUrlProblem('https://cdn.example.com/a.png')).toBeNull();
    expect(httpsUrlProblem('http://cdn.example.com/a.png')).toBe('must be an https URL');
    expect(httpsUrlProblem('javascript:alert(1)')).toBe('must be an https URL');
    expect(httpsUrlProblem('/relative.png')).toBe('must be an absolute https URL');
    expect(httpsUrlProblem('https://user:pw@cdn.example.com/a.png')).toBe('must not carry credentials');
    expect(httpsUrlProblem(`https://cdn.example.com/${'a'.repeat(2048)}`)).toMatch(/at most 2048/);
    expect(httpsUrlProblem(42)).toBe('must be a string');
  });

  it('accepts inline PNG, JPEG and SVG whose bytes match their type, up to the size limit', () => {
    expect(imageUrlProblem(png())).toBeNull();
    expect(imageUrlProblem(png(MAX_INLINE_IMAGE_BYTES - 8))).toBeNull();
    expect(imageUrlProblem(png(MAX_INLINE_IMAGE_BYTES))).toMatch(/at most 262144 bytes/);
    expect(
      imageUrlProblem(`data:image/jpeg;base64,${Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0, 0]).toString('base64')}`),
    ).toBeNull();
    expect(imageUrlProblem(svg('<svg xmlns="http://www.w3.org/2000/svg"></svg>'))).toBeNull();
    expect(imageUrlProblem(`data:image/jpeg;base64,${Buffer.from('<svg></svg>').toString('base64')}`)).toMatch(
      /does not hold image\/jpeg data/,
    );
  });

  it('refuses other media types, non-base64 data URLs and SVG with active content', () => {
    expect(imageUrlProblem('data:image/webp;base64,AAAA')).toMatch(/data URL of the form/);
    expect(imageUrlProblem('data:image/png,rawtext')).toMatch(/data URL of the form/);
    expect(imageUrlProblem('data:image/png;base64,')).toMatch(/wrong length/);
    for (const active of [
      '<svg><script>alert(1)</script></svg>',
      '<svg onload="x()"></svg>',
      '<svg><a href="javascript:alert(1)">x</a></svg>',
      '<svg><foreignObject><iframe/></foreignObject></svg>',
    ]) {
      expect(imageUrlProblem(svg(active))).toMatch(/not allowed/);
    }
  });

  it('takes https or mailto: support links', () => {
    expect(supportUrlProblem('mailto:help@example.com')).toBeNull();
    expect(supportUrlProblem('https://help.example.com')).toBeNull();
    expect(supportUrlProblem('mailto:not-an-address')).toBe('must be mailto:<email address>');
    expect(supportUrlProblem('ftp://example.com')).toBe('must be an https URL (or mailto:<email address>)');
  });
});
