// Child of peakRss.test.ts: prints its own peak (VmHWM) beside getrusage's maxRSS, in MB.
import { ownPeakRssMb } from './peakRss.js';

process.stdout.write(
  `${JSON.stringify({ own: ownPeakRssMb(), maxRss: process.resourceUsage().maxRSS / 1024 })}\n`,
);
