/**
 * A thin, lazily loaded DuckDB session for the audit readers. `@duckdb/node-api` is imported only
 * when an audit actually runs (a native module of ~60 MB), so `labs --help` and every other command
 * stay fast. Every DuckDB failure is turned into a LabError here; nothing else in the lab talks to
 * DuckDB directly.
 */
import { LabError } from '../core/errors.js';

/** A column vector of one streamed chunk, read by row index. */
export interface ChunkColumn {
  getItem(row: number): unknown;
}

/** One streamed chunk: `rowCount` rows, columns in SELECT order. */
export interface Chunk {
  rowCount: number;
  column(index: number): ChunkColumn;
}

export interface DuckSession {
  /** Runs a statement and returns every row as a plain object (JS values: BIGINT -> bigint). */
  all(sql: string): Promise<Record<string, unknown>[]>;
  /** Runs a statement for its side effect (CREATE TABLE ...). */
  exec(sql: string): Promise<void>;
  /** Streams the result chunk by chunk (about 2048 rows each) without materialising it in JS. */
  stream(sql: string, onChunk: (chunk: Chunk) => void): Promise<void>;
  /**
   * Streams the result as plain row objects, one chunk (about 2048 rows) at a time, converted as
   * `all` converts them; JavaScript holds only the current chunk's rows.
   */
  streamRows(sql: string, onRows: (rows: Record<string, unknown>[]) => void): Promise<void>;
  close(): void;
}

export interface DuckSessionOptions {
  /** DuckDB worker threads; default: DuckDB's own (all cores). */
  threads?: number;
  /** DuckDB memory limit, e.g. '1GB'; beyond it DuckDB spills to a temp directory. */
  memoryLimit?: string;
}

/** Wraps a DuckDB error as IO_ERROR (or `code`), keeping DuckDB's message, which names the file. */
export function duckError(e: unknown, what: string, code: 'IO_ERROR' | 'PARSE_ERROR' = 'IO_ERROR'): LabError {
  if (e instanceof LabError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new LabError(code, `${what}: ${message.split('\n')[0]?.trim() ?? message}`, { cause: e });
}

/**
 * DuckDB's 'Out of Memory Error' as OUT_OF_MEMORY naming the memory limit (`--memory-limit`, or
 * DuckDB's default of 80% of RAM); null for any other error. Not a parse error: the dump may be fine.
 */
export function outOfMemoryError(e: unknown, memoryLimit: string | undefined): LabError | null {
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof LabError || !/Out of Memory Error/i.test(message)) return null;
  const limit =
    memoryLimit === undefined
      ? "DuckDB's default memory limit (80% of RAM)"
      : `the memory limit ${memoryLimit}`;
  return new LabError(
    'OUT_OF_MEMORY',
    `DuckDB ran out of memory under ${limit} (${message.split('\n')[0]?.trim()}); give a larger --memory-limit`,
    { cause: e, details: { field: '--memory-limit', memoryLimit: memoryLimit ?? null } },
  );
}

/** Quotes a string as a SQL literal ('it''s'). */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** Quotes an identifier ("my col"), so remapped column names with spaces or quotes are safe. */
export function sqlIdent(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

/** Opens an in-memory DuckDB database (lazy import of the native module). */
export async function openDuckSession(options: DuckSessionOptions = {}): Promise<DuckSession> {
  let mod: typeof import('@duckdb/node-api');
  try {
    mod = await import('@duckdb/node-api');
  } catch (e) {
    throw new LabError('MISSING_DEPENDENCY', `cannot load @duckdb/node-api: ${(e as Error).message}`, {
      cause: e,
    });
  }
  const config: Record<string, string> = {};
  if (options.threads !== undefined) config.threads = String(options.threads);
  if (options.memoryLimit !== undefined) config.memory_limit = options.memoryLimit;
  const instance = await mod.DuckDBInstance.create(':memory:', config);
  const connection = await instance.connect();
  const limit = options.memoryLimit;
  // Every statement: DuckDB's out-of-memory becomes OUT_OF_MEMORY, whatever step of the audit met it.
  const guarded = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (e) {
      throw outOfMemoryError(e, limit) ?? e;
    }
  };
  return {
    all: (sql) =>
      guarded(async () => {
        const reader = await connection.runAndReadAll(sql);
        return reader.getRowObjectsJS() as Record<string, unknown>[];
      }),
    exec: (sql) =>
      guarded(async () => {
        await connection.run(sql);
      }),
    stream: (sql, onChunk) =>
      guarded(async () => {
        const result = await connection.stream(sql);
        for (;;) {
          const chunk = await result.fetchChunk();
          if (!chunk || chunk.rowCount === 0) break;
          onChunk({ rowCount: chunk.rowCount, column: (i) => chunk.getColumnVector(i) });
        }
      }),
    streamRows: (sql, onRows) =>
      guarded(async () => {
        const result = await connection.stream(sql);
        for await (const rows of result.yieldRowObjectJs()) onRows(rows as Record<string, unknown>[]);
      }),
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
