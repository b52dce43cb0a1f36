// The `paygate` command's usage text, printed by `paygate help` and by the entry (src/cli.ts) when
// no command is given (one copy, so every place prints the same text), and what an unknown
// command is answered: the word named, the commands it could have been, and where the rest is.

export const USAGE = `Usage:
  paygate start                         run the gateway (configuration from the environment;
                                        npm start runs it)
  paygate help                          this text
  Commands that open the store say which (SQLite file or PostgreSQL host and database) and the
  mode on stderr; stdout holds only what a script reads.

  paygate merchant create [--merchant-id ID] [--secret SECRET] [--application-key KEY]
                          [--frontend NAME] [--currency CODE] [--frame-origin ORIGIN]...
                          [--display-name NAME]
                                        create a merchant; prints JSON. In sandbox mode it gets
                                        one sandbox gateway; in live mode none (add one below).
                                        --frame-origin (repeatable): an origin such as
                                        https://shop.example allowed to show the application's
                                        init-pay-in cashier in an iframe (docs/cashier.md);
                                        --display-name: the shop name the cashier shows
  paygate merchant list [--after ID] [--limit N] [--json]
                                        merchants by id (a table; --json: one JSON object a line)
  paygate user create --email EMAIL --password PASSWORD --role operator|merchant
                      [--merchant-id ID]
                                        a back-office user (docs/backoffice.md); a merchant user
                                        belongs to --merchant-id. Password: 12+ characters.
                                        Prints JSON with user_id, email, role, merchant_id.
  paygate user list [--merchant-id ID] [--limit N] [--json]
                                        back-office users (never their passwords)
  paygate gateway create --merchant-id ID --connector NAME [--label TEXT]
                         [--currencies USD,EUR,...] [--setting KEY=VALUE]... [--no-mit]
                         [--hold-payouts]
                                        add a gateway to a merchant; prints JSON with its id,
                                        label (default "<connector> <first 8 of id>") and
                                        webhook_url (on the running gateway's recorded public
                                        URL). Settings per connector: docs/connectors.md.
                                        Secret settings are sealed and never printed again.
  paygate gateway list [--merchant-id ID] [--json]
                                        gateways by label (a table; --json: JSON lines)
  paygate gateway show --gateway GW     a gateway, without its secrets. GW: its label (when
                                        one gateway has it; --merchant-id narrows) or its id
  paygate gateway disable --gateway GW  no new payments go to it (enable undoes it)
  paygate gateway enable --gateway GW
  paygate gateway rename --gateway GW --label TEXT
                                        a new label, 1 to 64 characters
  paygate gateway settings --gateway GW --setting KEY=VALUE...
                                        replace some settings (new credentials)
  paygate route add --merchant-id ID --gateway GW --priority N [--currency USD,EUR]
                    [--min-amount MINOR] [--max-amount MINOR] [--card-brand VISA,...]
                    [--bin-country GB,...] [--payout-method paypal,bank_account,...]
                                        a routing rule: matching payments go to the gateway,
                                        rules tried by priority (lower first); prints JSON.
                                        --payout-method (card, bank_account, paypal, ewallet):
                                        the rule routes payouts of those methods only
  paygate route list --merchant-id ID [--json]
                                        the rules by priority, gateways by label
  paygate route delete --merchant-id ID --rule RULE_ID
  paygate bins load --file PATH         replace the BIN table (CSV lines "prefix,country")
                                        that bin-country conditions read
  paygate sign --secret SECRET [--file BODY.json] [--now]
                                        sign a request body (stdin without --file) as the API
                                        expects (decisions.md §1): prints it with its signature;
                                        --now sets timestamp to the current unix time in seconds.
                                        Prints the string hashed (without the secret) on stderr.
  paygate trigger NAME --merchant-id ID [--notification-url URL] [--url GATEWAY_URL] [--json]
                                        sandbox: a real flow of the merchant's that ends in the
                                        notification NAME names, sent to its notification_url
                                        (default: its latest one); prints the trace_id and every
                                        notification body sent. Calls the running gateway
                                        (PUBLIC_URL or HOST:PORT) with its admin token
                                        (docs/triggers.md)
  paygate trigger --list                the triggers, one line each
  paygate check-endpoint --merchant-id ID [--slow-ms MS] [--json] URL
                                        send the merchant's notification endpoint URL signed test
                                        notifications built to find the usual bugs (duplicates,
                                        order, forged or unsigned bodies, unknown fields) and
                                        print a graded report with fixes (docs/notifications.md).
                                        Exit 0: no check failed; 1: one did.
  paygate master-key rotate [--batch-size N] [--pause-ms MS] [--json]
                                        re-seal every secret, credential and vaulted card under
                                        the current master key (PAYGATE_MASTER_KEY, the old one
                                        as PAYGATE_MASTER_KEY_PREVIOUS; with the embedded store's
                                        key file it makes the new key itself and keeps the old
                                        one as master.key.previous). In batches, resumable: run
                                        it again after a crash. Exit 0: no value left under the
                                        old key; 3: some remain (run it again); 75: the embedded
                                        store's gateway runs (stop it first). Prints key ids only
  paygate master-key status [--json]    which key seals, values under each key, the progress
  paygate master-key retire [--json]    checks no value is left under the old key, then deletes
                                        master.key.previous (key file) or says to remove
                                        PAYGATE_MASTER_KEY_PREVIOUS (docs/production.md)
`;

/** Every command, first word and the words after it, for the answer to an unknown one. */
const COMMANDS: Readonly<Record<string, readonly string[]>> = {
  start: [],
  help: [],
  merchant: ['create', 'list'],
  user: ['create', 'list'],
  gateway: ['create', 'list', 'show', 'disable', 'enable', 'rename', 'settings'],
  route: ['add', 'list', 'delete'],
  bins: ['load'],
  sign: [],
  trigger: [],
  'check-endpoint': [],
  'master-key': ['rotate', 'status', 'retire'],
};

/** Edits between two short words (Levenshtein), to suggest the command meant. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The answer to a command that does not exist: "unknown command: WORDS", the closest command
 * when one is near, the commands at that level, and `paygate help`; exit code 64 (EX_USAGE).
 * `words`: the first word alone, or the first and the unknown second (undefined when missing).
 */
export function unknownCommand(words: readonly (string | undefined)[]): number {
  const [first = '', second] = words;
  const known_first = Object.hasOwn(COMMANDS, first);
  const choices = known_first ? COMMANDS[first]!.map((w) => `${first} ${w}`) : Object.keys(COMMANDS);
  const typed = known_first ? `${first}${second === undefined ? '' : ` ${second}`}` : first;
  const near = choices.filter((c) => distance(c, typed) <= 2).sort((a, b) => distance(a, typed) - distance(b, typed))[0];
  const what = known_first && second === undefined ? `${first} needs a command` : `unknown command: ${typed.slice(0, 64)}`;
  process.stderr.write(
    `paygate: ${what}${near !== undefined ? ` (did you mean ${near}?)` : ''}
` +
      `  commands: ${choices.join(', ')}
  paygate help prints every command with its options
`,
  );
  return 64;
}
