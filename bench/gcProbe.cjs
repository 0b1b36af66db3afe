// `node -r ./bench/gcProbe.cjs dist/cli/main.js run ...`: on exit, prints to stderr how many garbage
// collections the process ran and their total pause (v8.GCProfiler, Node >= 18.15), without a V8 flag:
// `--trace-gc` would make V8 refuse the CLI's code cache, and so change what is measured.
const v8 = require('node:v8');

const profiler = new v8.GCProfiler();
profiler.start();
process.on('exit', () => {
  const { statistics } = profiler.stop();
  const byType = {};
  let total = 0;
  for (const s of statistics) {
    total += s.cost;
    byType[s.gcType] = (byType[s.gcType] ?? 0) + s.cost;
  }
  const parts = Object.entries(byType).map(([type, us]) => `${type} ${(us / 1000).toFixed(1)} ms`);
  process.stderr.write(
    `gc: ${statistics.length} collections, ${(total / 1000).toFixed(1)} ms (${parts.join(', ')})\n`,
  );
});
