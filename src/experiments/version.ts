/** The lab's version, written into every RunRecord. Kept in sync with package.json by a test. */
export const VERSION = '0.1.0';
