// Types of build-freshness.mjs (plain JavaScript, so that npm's prepare step runs it without a compiler).
export declare function newestSourceMs(paths: readonly string[]): number;
export declare function buildIsCurrent(output: string, sources: readonly string[]): boolean;
