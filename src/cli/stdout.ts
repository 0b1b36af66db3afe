/**
 * The CLI's standard output, `output.write(text)`: it writes straight to file descriptor 1 with `fs.writeSync`:
 * the first use of `process.stdout` builds a stream (about twenty of Node's modules for a file, the
 * net modules as well for a pipe), a few ms of every command that prints one summary, which is
 * every command. Output order is unchanged: every write is synchronous, as Node's own stdout is for
 * files and pipes on Linux.
 *
 * `labs ... | head` closes the pipe early: that EPIPE ends the process quietly with code 0 (as git
 * and coreutils do); any other write error is one line on stderr and code 1. A descriptor that
 * would block (EAGAIN: a non-blocking pipe left full by the reader) hands the rest to
 * `process.stdout`, which waits for the reader.
 */
import { writeSync } from 'node:fs';

let streamed = false;

/**
 * Everything the CLI prints goes through `output.write` (an object, so that tests can spy on it as
 * they would on `process.stdout.write`).
 */
export const output = {
  /** Writes `text` to standard output (see the file comment for errors). */
  write(text: string): void {
    writeOut(text);
  },
};

function writeOut(text: string): void {
  if (streamed) {
    process.stdout.write(text);
    return;
  }
  const bytes = Buffer.from(text, 'utf8');
  let offset = 0;
  try {
    while (offset < bytes.length) offset += writeSync(1, bytes, offset);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') process.exit(0);
    if (code !== 'EAGAIN') {
      process.stderr.write(`labs: error [IO_ERROR]: cannot write to stdout: ${(e as Error).message}\n`);
      process.exit(1);
    }
    streamed = true;
    handleStreamErrors();
    process.stdout.write(bytes.subarray(offset));
  }
}

/** The same rules for the stream, once it is in use. */
function handleStreamErrors(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    process.stderr.write(`labs: error [IO_ERROR]: cannot write to stdout: ${e.message}\n`);
    process.exit(1);
  });
}
