// The API reference's own look and in-page script (/reference, http/reference.ts serves them
// beside Swagger UI's files): paygate's header and colours instead of Swagger's, and in the
// sandbox a "sign in this page" box. Its script signs a "Try it out" call to a body-signed route
// (decisions.md §1, docs/signing.md) with WebCrypto and the secret typed in the box, which stays
// in the page: it is never sent, stored or logged. Live mode gets the header only.
// Plain browser JavaScript as text (no bundler): written for current browsers, no inline code,
// so the page's CSP can forbid inline scripts and styles.

/** The stylesheet, served as a file (the CSP allows no inline style). */
export const REFERENCE_STYLE = `
body{margin:0;background:#f3f4f6;color:#111827;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.pg-header{background:#111827;color:#f9fafb;padding:.7rem 1.25rem;display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center}
.pg-brand{font-weight:700;font-size:1.25rem;letter-spacing:.01em}
.pg-header .pg-what{color:#d1d5db}
.pg-env{border-radius:999px;padding:.05rem .6rem;font-size:.8rem;font-weight:600;text-transform:uppercase;letter-spacing:.04em}
.pg-env-sandbox{background:#fef3c7;color:#78350f}.pg-env-live{background:#dcfce7;color:#14532d}
.pg-header a{color:#93c5fd;margin-left:auto}
.pg-signing{max-width:1420px;width:calc(100% - 40px);margin:1rem auto 0;padding:.9rem 1.25rem;background:#fff;border-radius:10px;box-shadow:0 1px 3px rgba(0,0,0,.1);box-sizing:border-box}
.pg-signing label{display:block;font-weight:600;margin-bottom:.25rem}
.pg-signing input{font:inherit;padding:.45rem .5rem;border:1px solid #d1d5db;border-radius:6px;min-height:40px;width:min(100%,32rem);box-sizing:border-box}
.pg-signing p{margin:.4rem 0 0;color:#4b5563;font-size:.9rem}.pg-signing .pg-signed{color:#14532d}
.swagger-ui{font-family:inherit}
.swagger-ui .wrapper{max-width:1460px}
.swagger-ui .info{margin:1.5rem 0}.swagger-ui .info .title{color:#111827}
.swagger-ui .info .title small.version-stamp{background:#2563eb}
.swagger-ui .opblock-tag{font-family:inherit;color:#111827}
.swagger-ui .btn.execute{background:#2563eb;border-color:#2563eb}
.swagger-ui .btn.authorize{color:#2563eb;border-color:#2563eb}.swagger-ui .btn.authorize svg{fill:#2563eb}
.swagger-ui .scheme-container{background:#fff;box-shadow:0 1px 3px rgba(0,0,0,.1)}
`;

/** The favicon: paygate's mark, a "p" on the header's colour. */
export const REFERENCE_FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#111827"/>' +
  '<text x="16" y="23" font-family="system-ui,sans-serif" font-size="20" font-weight="700" text-anchor="middle" fill="#93c5fd">p</text></svg>';

export interface ReferenceScriptOptions {
  readonly environment: 'sandbox' | 'live';
  /** The body-signed routes' paths (no path parameters): the calls the sandbox box signs. */
  readonly signed_paths: readonly string[];
}

/**
 * The page's script: the header, and in the sandbox the signing box and
 * `window.paygateSignRequest`, which the reference's request interceptor calls before each call.
 */
export function referenceScript(options: ReferenceScriptOptions): string {
  return `// paygate's API reference: its header and, in the sandbox, the in-page signing (docs/signing.md).
(function () {
  'use strict';
  var SANDBOX = ${JSON.stringify(options.environment === 'sandbox')};
  var SIGNED_PATHS = ${JSON.stringify(options.signed_paths)};

  function element(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    if (text) node.textContent = text;
    return node;
  }

  var header = element('header', { class: 'pg-header' });
  header.appendChild(element('span', { class: 'pg-brand' }, 'paygate'));
  header.appendChild(element('span', { class: 'pg-what' }, 'API reference'));
  header.appendChild(element('span', { class: 'pg-env pg-env-' + (SANDBOX ? 'sandbox' : 'live') }, SANDBOX ? 'sandbox' : 'live'));
  header.appendChild(element('a', { href: '../openapi.json' }, 'openapi.json'));
  var root = document.getElementById('swagger-ui');
  document.body.insertBefore(header, document.body.firstChild);
  if (!SANDBOX) return;

  var box = element('section', { class: 'pg-signing', 'aria-label': 'Sign requests in this page' });
  box.appendChild(element('label', { for: 'pg-secret' }, 'Merchant secret (sandbox)'));
  var input = element('input', { id: 'pg-secret', type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: "the merchant's secret" });
  box.appendChild(input);
  var subtle = window.crypto && window.crypto.subtle;
  box.appendChild(element('p', {}, subtle
    ? '"Try it out" on a body-signed call fills timestamp and signature in this page (SHA-384 with WebCrypto, docs/signing.md). The secret stays here: it is never sent, stored or logged.'
    : 'Signing in this page needs a secure context (https, or http on localhost): sign with paygate sign instead.'));
  var signed = element('p', { class: 'pg-signed', role: 'status', 'aria-live': 'polite' });
  box.appendChild(signed);
  if (!subtle) input.disabled = true;
  document.body.insertBefore(box, root);

  // decisions.md §1: keys in code-point order (not UTF-16 order), values joined, then the secret.
  function compareCodePoints(a, b) {
    var x = Array.from(a), y = Array.from(b);
    for (var i = 0; i < Math.min(x.length, y.length); i++) {
      var d = x[i].codePointAt(0) - y[i].codePointAt(0);
      if (d !== 0) return d;
    }
    return x.length - y.length;
  }
  function signingString(body) {
    return Object.keys(body).filter(function (key) { return key !== 'signature'; }).sort(compareCodePoints).map(function (key) {
      var value = body[key];
      if (value === null || value === undefined || value === false) return '';
      return value === true ? '1' : String(value);
    }).join('');
  }
  function sha384Hex(text) {
    return subtle.digest('SHA-384', new TextEncoder().encode(text)).then(function (digest) {
      return Array.from(new Uint8Array(digest)).map(function (byte) { return byte.toString(16).padStart(2, '0'); }).join('');
    });
  }

  window.paygateSignRequest = function (request) {
    var secret = input.value;
    var path;
    try { path = new URL(request.url, window.location.href).pathname; } catch (error) { return request; }
    if (!subtle || SIGNED_PATHS.indexOf(path) === -1 || typeof request.body !== 'string') return request;
    if (secret === '') { signed.textContent = 'Not signed: type the merchant secret first.'; return request; }
    var body;
    try { body = JSON.parse(request.body); } catch (error) { return request; }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return request;
    delete body.signature;
    body.timestamp = Math.floor(Date.now() / 1000);
    return sha384Hex(signingString(body) + secret).then(function (signature) {
      body.signature = signature;
      request.body = JSON.stringify(body);
      signed.textContent = 'Signed ' + path + ' with timestamp ' + body.timestamp + ' in this page.';
      return request;
    });
  };
})();
`;
}

/**
 * The reference's request interceptor, as Swagger UI's configuration takes it (a function it
 * writes into its initializer script): hands each request to the page's script when there is one.
 */
export const REQUEST_INTERCEPTOR_SOURCE =
  'return typeof window.paygateSignRequest === "function" ? window.paygateSignRequest(request) : request;';
