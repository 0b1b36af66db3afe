// Preloaded with `node -r` by bench/startup.bench.ts: at exit it writes the Node built-in modules the
// process loaded (process.moduleLoadList) to the file named by LABS_MODULE_LIST, one per line.
// CommonJS and node:fs only (loaded at every start anyway), so the probe adds no module of its own.
process.on('exit', () => {
  const names = process.moduleLoadList.filter((m) => m.startsWith('NativeModule '));
  require('node:fs').writeFileSync(process.env.LABS_MODULE_LIST, `${names.join('\n')}\n`);
});
