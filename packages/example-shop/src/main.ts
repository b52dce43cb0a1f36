// `npm run shop`: starts the example shop with the merchant credentials from the environment (see
// packages/sdk/README.md for the five-minute walk-through), and stops it on Ctrl-C.
import { startShop } from './shop.js';

const REQUIRED = ['PAYGATE_MERCHANT_ID', 'PAYGATE_SECRET', 'PAYGATE_FRONTEND'] as const;

const missing = REQUIRED.filter((name) => !process.env[name]);
if (missing.length > 0) {
  process.stderr.write(
    `example shop: set ${missing.join(', ')} (the merchant from \`npx paygate merchant create\`; packages/sdk/README.md)\n`,
  );
  process.exit(64);
}

const port = Number(process.env.SHOP_PORT ?? '3000');
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write('example shop: SHOP_PORT must be a port number\n');
  process.exit(64);
}
const base_url = process.env.PAYGATE_URL ?? 'http://127.0.0.1:8080';

const shop = await startShop({
  paygate: {
    base_url,
    merchant_id: process.env.PAYGATE_MERCHANT_ID!,
    secret: process.env.PAYGATE_SECRET!,
    frontend: process.env.PAYGATE_FRONTEND!,
  },
  host: process.env.SHOP_HOST ?? '127.0.0.1',
  port,
  ...(process.env.SHOP_PUBLIC_URL ? { public_url: process.env.SHOP_PUBLIC_URL } : {}),
});
process.stdout.write(`Example shop on ${shop.url} (paygate at ${base_url}, merchant ${process.env.PAYGATE_MERCHANT_ID})\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void shop.close().then(() => process.exit(0));
  });
}
