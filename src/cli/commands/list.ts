import { experimentNames, loadExperiment } from '../../experiments/registry.js';
import { describeAccepted } from '../optionRange.js';
import type { ParsedCli } from '../parse.js';

export async function listCommand(p: Extract<ParsedCli, { command: 'list' }>): Promise<number> {
  const names = experimentNames();
  const experiments = await Promise.all(names.map((n) => loadExperiment(n)));
  if (p.json) {
    const data = experiments.map((e) => ({
      name: e.name,
      summary: e.summary,
      options: Object.fromEntries(
        Object.entries(e.options).map(([k, o]) => [
          k,
          { default: o.default, help: o.help, accepts: describeAccepted(o.schema) },
        ]),
      ),
    }));
    process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  }
  if (experiments.length === 0) {
    process.stdout.write('no experiments registered yet\n');
    return 0;
  }
  const lines: string[] = [];
  for (const e of experiments) {
    lines.push(`${e.name.padEnd(12)} ${e.summary}`);
    for (const [k, o] of Object.entries(e.options)) {
      const accepts = describeAccepted(o.schema);
      lines.push(
        `    --set ${`${k}=${JSON.stringify(o.default)}`.padEnd(28)} ${o.help}${accepts ? ` [${accepts}]` : ''}`,
      );
    }
    lines.push('');
  }
  lines.push(
    'run one with: labs run --experiment NAME [--seed N | --seeds A..B] [--set key=value]... [--json]',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
