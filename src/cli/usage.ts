// The `paygate` command's usage text: printed by `paygate help`, and on stderr by the entry
// (src/cli.ts) and by the gateway, route and user commands (src/cli/) when a command or option is
// missing or unknown. One copy, so every place prints the same text.

export const USAGE = `Usage:
  paygate start                         run the gateway (configuration from the environment;
                                        npm start runs it)
  paygate help                          this text
  paygate merchant create [--merchant-id ID] [--secret SECRET] [--application-key KEY]
                          [--frontend NAME] [--currency CODE] [--frame-origin ORIGIN]...
                          [--display-name NAME]
                                        create a merchant; prints JSON. In sandbox mode it gets
                                        one sandbox gateway; in live mode none (add one below).
                                        --frame-origin (repeatable): an origin such as
                                        https://shop.example allowed to show the application's
                                        init-pay-in cashier in an iframe (docs/cashier.md);
                                        --display-name: the shop name the cashier shows
  paygate user create --email EMAIL --password PASSWORD --role operator|merchant
                      [--merchant-id ID]
                                        a back-office user (docs/backoffice.md); a merchant user
                                        belongs to --merchant-id. Password: 12+ characters.
                                        Prints JSON with user_id, email, role, merchant_id.
  paygate gateway create --merchant-id ID --connector NAME [--currencies USD,EUR,...]
                         [--setting KEY=VALUE]... [--no-mit] [--hold-payouts]
                                        add a gateway to a merchant; prints JSON with its id and
                                        webhook_url. Settings per connector: docs/connectors.md.
                                        Secret settings are sealed and never printed again.
  paygate gateway list [--merchant-id ID]
  paygate gateway show --gateway ID     a gateway, without its secrets
  paygate gateway disable --gateway ID  no new payments go to it (enable undoes it)
  paygate gateway enable --gateway ID
  paygate gateway settings --gateway ID --setting KEY=VALUE...
                                        replace some settings (new credentials)
  paygate route add --merchant-id ID --gateway ID --priority N [--currency USD,EUR]
                    [--min-amount MINOR] [--max-amount MINOR] [--card-brand VISA,...]
                    [--bin-country GB,...] [--payout-method paypal,bank_account,...]
                                        a routing rule: matching payments go to the gateway,
                                        rules tried by priority (lower first); prints JSON.
                                        --payout-method (card, bank_account, paypal, ewallet):
                                        the rule routes payouts of those methods only
  paygate route list --merchant-id ID
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
`;
