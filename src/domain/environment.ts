// Where this instance runs: sandbox (test money, the sandbox connector, its clock and pages) or
// live. A domain fact rather than configuration: connectors declare the environments they may
// run in without reading the configuration (config.ts re-exports it).
export type Environment = 'sandbox' | 'live';
