// Types of node-flags.mjs (plain JavaScript, so that npm start runs it without a compiler).
export declare const HEAP_FLAG: string;
export declare function gatewayNodeFlags(env?: NodeJS.ProcessEnv, exec_argv?: readonly string[]): string[];
