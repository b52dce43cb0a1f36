// The ceiling: a bare Fastify endpoint that parses the same JSON body and answers the same
// shape of JSON a sale answers, with no signature check, store or processor.
import Fastify from 'fastify';

const port = Number(process.argv[2] ?? 0);
const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
const answer = {
  status: 0,
  description: 'Transaction processed',
  trace_id: 1,
  transaction_id: 'sbx_00000000000000000000',
  transaction_status: 'approved',
  payment_processor: 'sandbox',
  redirect_url: null,
  error_code: '0',
  error_details: '[TEST] Approved',
  card_token: '00000000000000000000000000000000',
  version: '1.2',
  timestamp: 0,
  signature: '0'.repeat(96),
};
app.post('/api/process', async (request) => ({
  ...answer,
  timestamp: Math.floor(Date.now() / 1000),
  order: (request.body as { order_id?: string }).order_id,
}));
await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`listening ${(app.server.address() as { port: number }).port}\n`);
