// The sandbox clock's offset, kept in the database so that every instance sharing it moves together.

export interface SandboxClockStore {
  getOffset(): Promise<number>;
  setOffset(offset_ms: number): Promise<void>;
}
