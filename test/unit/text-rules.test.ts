// The pure rules behind issue 18's fixes: text (domain/text.ts), merchant URLs at request time
// (outbound/addresses.ts), query strings in logs (logging.ts), header sightings (http/header-reuse.ts)
// and the Gt-Body-Signature vector of docs/security.md.
import fs from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { characterLength, hasContent, textProblem } from '../../src/domain/text.js';
import { bodySchema } from '../../src/http/fields.js';
import { HeaderReuseWatch } from '../../src/http/header-reuse.js';
import { bodyHeaderSignature } from '../../src/http/route.js';
import { redactUrl } from '../../src/logging.js';
import { urlHostNotPublic } from '../../src/outbound/addresses.js';

describe('text rules', () => {
  it('name control characters and unpaired surrogates, and accept paired ones', () => {
    for (const bad of ['\u0000', 'a\u0001', '\t', '\n', '\u007f', '\u0085', '\u009f'])
      expect(textProblem(bad), JSON.stringify(bad)).toBe('control_character');
    for (const bad of ['\ud800', 'a\udfff', '\udc00\ud800', 'x\ud83d'])
      expect(textProblem(bad), JSON.stringify(bad)).toBe('unpaired_surrogate');
    for (const good of ['', 'Jane', '😀', 'Zoë', 'Ålesund', '東京', '\u00a0', 'a"b\'c\\']) expect(textProblem(good), good).toBeNull();
  });

  it('count characters as code points', () => {
    expect(characterLength('😀'.repeat(13))).toBe(13);
    expect('😀'.repeat(13).length).toBe(26);
    expect(characterLength('abc')).toBe(3);
    expect(characterLength('\ud800x')).toBe(2);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (value) => {
        expect(characterLength(value)).toBe([...value].length);
      }),
    );
  });

  it('a required text needs something other than white space', () => {
    expect(hasContent('  a ')).toBe(true);
    expect(hasContent(' \u00a0\u2003')).toBe(false);
  });

  it('field schemas: n characters accepted, n+1 refused, by characters, for every emoji-length pair', () => {
    const schema = bodySchema({ first_name: 'required', variable1: 'optional' });
    for (const [field, max] of [
      ['first_name', 25],
      ['variable1', 256],
    ] as const) {
      const other = field === 'first_name' ? {} : { first_name: 'Jane' };
      expect(schema.parse({ ...other, [field]: '😀'.repeat(max) }).ok, `${field} ${max}`).toBe(true);
      expect(schema.parse({ ...other, [field]: `${'😀'.repeat(max - 1)}ab` }).ok, `${field} ${max + 1}`).toBe(false);
      expect(schema.parse({ ...other, [field]: 'a'.repeat(max) }).ok).toBe(true);
      expect(schema.parse({ ...other, [field]: 'a'.repeat(max + 1) }).ok).toBe(false);
    }
    expect(schema.parse({ first_name: ' ' })).toMatchObject({ ok: false, error: { field: 'first_name' } });
    expect(schema.parse({ first_name: 'J', variable1: '' }).ok).toBe(true);
  });
});

describe('merchant URLs at request time (live mode)', () => {
  it('refuse IP literals outside public space and localhost names, without resolving anything', () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://127.1.2.3:8080/x',
      'http://localhost/',
      'http://LOCALHOST./x',
      'http://shop.localhost/',
      'http://[::1]/',
      'http://10.0.0.1/',
      'http://172.20.1.1/',
      'http://192.168.0.1/',
      'http://169.254.169.254/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://[fe80::1]/',
      'http://[fd00::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://[64:ff9b::a00:1]/',
    ])
      expect(urlHostNotPublic(url), url).toBe(true);
    for (const url of [
      'https://shop.example/notify',
      'http://203.0.113.7/n',
      'http://[2001:db8::1]/n',
      'https://localhost.shop.example/',
      'not a url',
    ]) {
      expect(urlHostNotPublic(url), url).toBe(false);
    }
  });
});

describe('query strings in logs', () => {
  it('redact every parameter that can carry a credential, keep the others', () => {
    expect(redactUrl('/operator/gateways?access_token=abc&merchant_id=m1')).toBe(
      '/operator/gateways?access_token=[redacted]&merchant_id=m1',
    );
    expect(redactUrl('/x?api_key=1&apikey=2&key=3&sig=4&password=5&session_id=6&page=2')).toBe(
      '/x?api_key=[redacted]&apikey=[redacted]&key=[redacted]&sig=[redacted]&password=[redacted]&session_id=[redacted]&page=2',
    );
    expect(redactUrl('/x?Access%5Ftoken=abc')).toBe('/x?Access%5Ftoken=[redacted]');
    expect(redactUrl('/cashier/login?auth_token=secret-value&lang=en')).toBe('/cashier/login?auth_token=[redacted]&lang=en');
  });
});

describe('v1.3 header sightings', () => {
  it('tell a retry (same body) from a replay (another body), within the time a header can be accepted', () => {
    const watch = new HeaderReuseWatch(121_000);
    expect(watch.observe('h1', 'POST/a{"x":1}', 0)).toBe('first');
    expect(watch.observe('h1', 'POST/a{"x":1}', 1_000)).toBe('same_body');
    expect(watch.observe('h1', 'POST/a{"x":2}', 2_000)).toBe('other_body');
    expect(watch.observe('h1', 'POST/b{"x":1}', 3_000)).toBe('other_body');
    expect(watch.observe('h1', 'POST/a{"x":2}', 121_001)).toBe('first');
  });
});

describe('Gt-Body-Signature', () => {
  it('matches the vector of docs/security.md', () => {
    const docs = fs.readFileSync('docs/security.md', 'utf8');
    const content =
      'PUT/api/v1.3/subscription-plan/plan_1{"merchant_id":"demo-merchant","application_key":"demo-app","timestamp":1763740800,"name":"Gold"}';
    expect(docs).toContain(bodyHeaderSignature(content, 'demo-secret'));
  });
});

describe('link previews (cashier one-time links)', () => {
  it("tell preview robots and HEAD from people's browsers, in-app ones included", async () => {
    const { isLinkPreview } = await import('../../src/domain/link-preview.js');
    for (const robot of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'facebookexternalhit/1.1',
      'WhatsApp/2.23.20.0 A',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
      'TelegramBot (like TwitterBot)',
      'LinkedInBot/1.0',
      'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5',
      'Mozilla/5.0 (compatible; Googlebot/2.1)',
    ]) {
      expect(isLinkPreview('GET', robot), robot).toBe(true);
    }
    expect(isLinkPreview('HEAD', 'Mozilla/5.0 Chrome/120')).toBe(true);
    for (const person of [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Edg/120.0',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537.36 Teams/1.6.00',
      'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Mobile Safari/537.36 [FBAN/EMA;FBLC/en_US]',
      undefined,
    ])
      expect(isLinkPreview('GET', person), String(person)).toBe(false);
  });
});
