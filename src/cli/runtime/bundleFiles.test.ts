import { describe, expect, it } from 'vitest';
import { bundleCacheFile } from './bundleFiles.js';

describe('bundleCacheFile', () => {
  it('names the cache after the build id on the bundle’s last line', () => {
    const text = '(function () {})\n//# labs-bundle-id 0d47e3ae77525d4e\n';
    expect(bundleCacheFile(text)).toBe('labs.bundle.0d47e3ae77525d4e.v8cache');
  });

  it('a different bundle text names a different cache, and no id means no cache', () => {
    expect(bundleCacheFile('(function () {})\n//# labs-bundle-id 1111222233334444\n')).toBe(
      'labs.bundle.1111222233334444.v8cache',
    );
    expect(bundleCacheFile('(function () {})\n')).toBeNull();
    // The id must be the last line: an id-like comment inside the code does not count.
    expect(bundleCacheFile('//# labs-bundle-id 0d47e3ae77525d4e\n(function () {})\n')).toBeNull();
  });
});
