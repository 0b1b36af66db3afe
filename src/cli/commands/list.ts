/**
 * `labs list`: every experiment with its options, generated from each experiment's options
 * declaration (experiments/options.ts): key, default, unit, help and the accepted values read from
 * the schema `--set` validates. `labs run -e NAME --help` prints the same block for one experiment.
 */

import { describeAccepted } from '../../experiments/optionRange.js';
import { optionList } from '../../experiments/options.js';
import { experimentNames, loadExperiment } from '../../experiments/registry.js';
import type { Experiment } from '../../experiments/types.js';
import type { ParsedCli } from '../parse.js';
import { output } from '../stdout.js';

/** One experiment's options as `labs list` lines: `--set key=default  help (unit) [accepts]`. */
export function formatExperimentOptions(e: Experiment): string[] {
  const lines = [`${e.name.padEnd(12)} ${e.summary}`];
  for (const o of optionList(e.options)) {
    const accepts = describeAccepted(o.schema);
    const unit = o.unit ? ` (${o.unit})` : '';
    const when = o.defaultWhen
      ? ` [default ${JSON.stringify(o.defaultWhen.value)} when ${o.defaultWhen.when.option}=${o.defaultWhen.when.equals}]`
      : '';
    lines.push(
      `    --set ${`${o.key}=${JSON.stringify(o.default)}`.padEnd(28)} ${o.help}${unit}${accepts ? ` [${accepts}]` : ''}${when}`,
    );
  }
  return lines;
}

export async function listCommand(p: Extract<ParsedCli, { command: 'list' }>): Promise<number> {
  const names = experimentNames();
  const experiments = await Promise.all(names.map((n) => loadExperiment(n)));
  if (p.json) {
    const data = experiments.map((e) => ({
      name: e.name,
      summary: e.summary,
      options: Object.fromEntries(
        optionList(e.options).map((o) => [
          o.key,
          {
            default: o.default,
            ...(o.defaultWhen ? { default_when: o.defaultWhen } : {}),
            help: o.help,
            unit: o.unit,
            accepts: describeAccepted(o.schema),
          },
        ]),
      ),
    }));
    output.write(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  }
  if (experiments.length === 0) {
    output.write('no experiments registered yet\n');
    return 0;
  }
  const lines: string[] = [];
  for (const e of experiments) lines.push(...formatExperimentOptions(e), '');
  lines.push(
    'run one with: labs run --experiment NAME [--seed N | --seeds A..B] [--set key=value]... [--json]',
  );
  output.write(`${lines.join('\n')}\n`);
  return 0;
}
