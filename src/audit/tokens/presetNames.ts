/**
 * The token-level dump layouts `labs audit --preset` accepts (tokenLayouts.ts reads them). A file of
 * its own so the command line can list them without loading the readers.
 */
export type TokenPresetName = 'nemo-rl' | 'prime-rl' | 'generic-tokens';
export const TOKEN_PRESETS: readonly TokenPresetName[] = ['nemo-rl', 'prime-rl', 'generic-tokens'];

/** Whether a `--preset` value names a token-level layout. */
export function isTokenPreset(name: string): name is TokenPresetName {
  return (TOKEN_PRESETS as readonly string[]).includes(name);
}
