import { LabError } from '../../core/errors.js';
import type { ParsedCli } from '../parse.js';

// Placeholder until the HTML report lands (issue 7); replaced by the real command.
export async function reportCommand(_p: Extract<ParsedCli, { command: 'report' }>): Promise<number> {
  throw new LabError('NOT_SUPPORTED', 'labs report is not available in this build yet');
}
