/**
 * `labs`: parse, dispatch, print, exit. The only place (with src/cli/commands) that prints or
 * exits. Errors become one line on stderr (errorOutput.ts) and exit code 2 for usage errors
 * (anything wrong on the command line), 1 for run-time failures; `--debug` adds the stack.
 * Started by main.ts (from source, and in the bundle) or by the installed bin (runtime/bin.ts).
 */
import { VERSION } from '../experiments/version.js';
import { errorLine, exitCodeFor } from './errorOutput.js';
import { exitOnInterrupt } from './interrupt.js';
import { mark } from './runtime/startupMarks.js';
import { output } from './stdout.js';

async function main(argv: string[]): Promise<number> {
  mark('main');
  const debug = argv.includes('--debug');
  // `labs --version` alone needs no grammar: answer before loading commander (start-up, see
  // docs/bench-startup.md). Everything else, `--help` included, goes through parse.ts.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    output.write(`${VERSION}\n`);
    return 0;
  }
  try {
    const { parseCli } = await import('./parse.js');
    mark('parse imported');
    const parsed = parseCli(argv);
    mark('parsed');
    // Ctrl-C: one line saying what was (not) written, then exit 130 (locks removed on exit). A
    // single-seed `labs run` computes synchronously on this thread, through runBreakingOnInterrupt
    // (commands/run.ts), so that it is answered at once too.
    // audit --watch handles Ctrl-C itself: it stops following and writes the final record.
    const watching = parsed.command === 'audit' && parsed.auditExtra.watch;
    if (!watching) exitOnInterrupt();
    switch (parsed.command) {
      case 'help': {
        output.write(parsed.text.endsWith('\n') ? parsed.text : `${parsed.text}\n`);
        if (parsed.experiment) {
          // `labs run -e NAME --help`: that experiment's options, from the same declaration as `labs list`.
          const { loadExperiment } = await import('../experiments/registry.js');
          const { formatExperimentOptions } = await import('./commands/list.js');
          const lines = formatExperimentOptions(await loadExperiment(parsed.experiment));
          output.write(`\nOptions of experiment ${lines.join('\n')}\n`);
        }
        return 0;
      }
      case 'version':
        output.write(`${parsed.text}\n`);
        return 0;
      case 'list':
        return await (await import('./commands/list.js')).listCommand(parsed);
      case 'run':
        return await (await import('./commands/run.js')).runCommand(parsed);

      case 'findings':
        return await (await import('./commands/findings.js')).findingsCommand(parsed);
      case 'merge':
        return await (await import('./commands/merge.js')).mergeCommand(parsed);
      case 'conformance':
        return await (await import('./commands/conformance.js')).conformanceCommand(parsed);
      case 'audit':
        return await (await import('./commands/audit.js')).auditCommand(parsed);
      case 'report':
        return await (await import('./commands/report.js')).reportCommand(parsed);
      case 'compare':
        return await (await import('./commands/compare.js')).compareCommand(parsed);
    }
  } catch (e) {
    process.stderr.write(`${errorLine(e, debug)}\n`);
    const stack = (e as Error)?.stack;
    if (debug && stack) process.stderr.write(`${stack}\n`);
    return exitCodeFor(e);
  }
}

/**
 * Runs `labs` with `argv` (without `node` and the script) and exits with its code as soon as the
 * command is done: everything it printed was written synchronously, and a natural exit would first
 * wait for V8's optimising compiler to finish jobs for code that will never run again (a few ms
 * after every `labs run`).
 */
export function runCli(argv: string[]): void {
  main(argv).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`${errorLine(e)}\n`);
      process.exit(exitCodeFor(e));
    },
  );
}
