// Which IP addresses an outbound request (notification, validation request) may reach.
// In live mode a merchant-supplied URL must not make the gateway talk to itself, its
// database, a cloud metadata service or anything else on a private network (SSRF).
// Pure functions over the address text, so they are unit-tested without a network.
import net from 'node:net';

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unspecified'
  /** Multicast, broadcast, documentation-free "reserved for future use" and similar: never a merchant's server. */
  | 'reserved'
  | 'invalid';

type V4 = readonly [number, number, number, number];

function parseV4(text: string): V4 | null {
  if (net.isIPv4(text) === false) return null;
  const parts = text.split('.').map(Number);
  return [parts[0]!, parts[1]!, parts[2]!, parts[3]!];
}

/** The 8 groups of an IPv6 address (zone id removed), or null. Handles "::" and a trailing dotted IPv4. */
function parseV6(text: string): number[] | null {
  let address = text.replace(/%.*$/, '');
  if (!net.isIPv6(address)) return null;
  // A trailing dotted IPv4 (::ffff:127.0.0.1) becomes its two hex groups (::ffff:7f00:1).
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    address = `${address.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groups(halves[0]!);
  const right = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = 8 - left.length - right.length;
  if ((halves.length === 1 && fill !== 0) || fill < 0) return null;
  const all = [...left, ...Array<number>(fill).fill(0), ...right];
  return all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : null;
}

function classifyV4([a, b, c]: V4): AddressClass {
  if (a === 0) return 'unspecified'; // 0.0.0.0/8 "this network"; connecting to 0.0.0.0 reaches the local host
  if (a === 127) return 'loopback';
  if (a === 10) return 'private';
  if (a === 172 && b >= 16 && b <= 31) return 'private';
  if (a === 192 && b === 168) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'private'; // 100.64/10 shared address space (carrier NAT, some cloud metadata)
  if (a === 169 && b === 254) return 'link-local'; // includes 169.254.169.254, the usual metadata service
  if (a === 192 && b === 0 && c === 0) return 'reserved'; // 192.0.0/24 IETF protocol assignments
  if (a === 198 && (b === 18 || b === 19)) return 'reserved'; // benchmarking
  if (a >= 224) return 'reserved'; // multicast 224/4, reserved 240/4, broadcast
  return 'public';
}

function classifyV6(groups: readonly number[]): AddressClass {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const embedded: V4 = [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff];
  if (groups.every((g) => g === 0)) return 'unspecified';
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d, deprecated) carry an IPv4 address.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && (g5 === 0xffff || g5 === 0)) return classifyV4(embedded);
  // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyV4(embedded);
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // fec0::/10 site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return 'reserved'; // multicast
  // 2002::/16 (6to4) embeds an IPv4 address in groups 1-2.
  if (g0 === 0x2002) {
    const inner = classifyV4([g1 >> 8, g1 & 0xff, g2 >> 8, g2 & 0xff]);
    if (inner !== 'public') return inner;
  }
  return 'public';
}

/** The class of an IP address written as text (IPv4, IPv6, IPv6 in brackets); 'invalid' for anything else. */
export function classifyAddress(text: string): AddressClass {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const v4 = parseV4(bare);
  if (v4) return classifyV4(v4);
  const v6 = parseV6(bare);
  if (v6) return classifyV6(v6);
  return 'invalid';
}

/** May an outbound request connect to this address? Only public addresses, unless private ones are allowed. */
export function addressAllowed(text: string, allow_private: boolean): boolean {
  const kind = classifyAddress(text);
  if (kind === 'invalid') return false;
  return allow_private || kind === 'public';
}

/**
 * Live mode, when a request arrives: does this merchant URL point at a host that is not public,
 * as far as can be told without resolving a name? An IP literal outside public space, or
 * `localhost` and names under `.localhost` (the local host by definition, RFC 6761). Other names
 * are checked when the gateway connects (outbound/post.ts). A URL that does not parse is left to
 * the field's own format rule.
 */
export function urlHostNotPublic(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return net.isIP(host) !== 0 && classifyAddress(host) !== 'public';
}
