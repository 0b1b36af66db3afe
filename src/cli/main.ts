#!/usr/bin/env node
/**
 * `labs` run from source (`npx tsx src/cli/main.ts ...`), and the entry `npm run build` bundles
 * into dist/cli/labs.bundle.js: everything is in cli.ts. The installed bin is runtime/bin.ts.
 */
import { runCli } from './cli.js';

runCli(process.argv.slice(2));
