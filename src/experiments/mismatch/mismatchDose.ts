/**
 * The mismatch experiment's engine sources and dose settings, declared apart from the experiment
 * (mismatch.ts) and its tables (mismatchReport.ts) so that neither imports the other.
 */

/** engine_precision values: the five; `fp8` means vLLM's w8a8 fp8 (e4m3) scheme. */
export const ENGINE_PRECISIONS = ['fp64', 'fp32', 'bf16', 'fp16', 'fp8'] as const;
export type EnginePrecision = (typeof ENGINE_PRECISIONS)[number];

/** A dose setting: one source changed from the exact engine. */
export interface DoseSetting {
  source: 'exact' | 'precision' | 'top_p' | 'lag';
  dose: string;
  precision: EnginePrecision;
  topP: number;
  lag: number;
}
