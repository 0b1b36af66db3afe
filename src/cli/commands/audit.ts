import { LabError } from '../../core/errors.js';
import type { ParsedCli } from '../parse.js';

// Placeholder until the audit lands (issue 4); replaced by the real command.
export async function auditCommand(_p: Extract<ParsedCli, { command: 'audit' }>): Promise<number> {
  throw new LabError('NOT_SUPPORTED', 'labs audit is not available in this build yet');
}
