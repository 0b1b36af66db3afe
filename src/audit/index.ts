/**
 * `reasoning-rl-labs/audit`: the diagnostics of `labs audit` on verl / TRL / generic rollout dumps.
 * A subpath of its own, apart from the pure kernels of the package entry (`.`), because the audit
 * reads files (`node:fs/promises`) and loads DuckDB (docs/architecture.md §2, the exports map).
 */
export { AUDIT_DEFAULTS, type AuditOptions, runAudit } from './audit.js';
export { AUDIT_PRESETS, type AuditPresetName, CANONICAL_COLUMNS } from './presets.js';
