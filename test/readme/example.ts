import { grpoAdvantage } from '../../src/index.js';

// 4 responses to one prompt, 3 tokens each (row-major [4,3]); the outcome reward sits on the last real token
const rewards = Float32Array.from([0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
const mask = Float32Array.from([1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1]);
const { advantages } = grpoAdvantage(
  { tokenLevelRewards: rewards, responseMask: mask, index: ['p', 'p', 'p', 'p'] },
  { rows: 4, cols: 3 },
);
console.log(advantages); // (r - mean) / (std + 1e-6) per row, torch.std as verl: ±0.866 on unmasked tokens
