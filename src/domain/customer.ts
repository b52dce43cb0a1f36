// The customer a cashier session knows: the optional fields of spec §4.3-4.6 that a merchant may
// send and the one-time registration form collects. Here, in the domain, because the operations
// that keep them and the pages that ask for them both read these names.
/** Customer fields a session may carry (spec §4.3-4.6 optional fields) and the registration form collects. */
export const CUSTOMER_FIELDS = ['first_name', 'last_name', 'dob', 'email', 'phone', 'address', 'city', 'state', 'zip'] as const;
export type CustomerField = (typeof CUSTOMER_FIELDS)[number];
/** Asked in the one-time registration form when neither the merchant nor an earlier registration gave them. */
export const REQUIRED_CUSTOMER_FIELDS: readonly CustomerField[] = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'dob',
  'address',
  'city',
  'zip',
];
export type CustomerData = Partial<Record<CustomerField | 'requester_ip', string>>;
