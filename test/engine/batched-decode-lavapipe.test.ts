/**
 * Batched decode across slots (batched-decode-cases.ts) on Mesa lavapipe, where a batched step's
 * rows go through the batched mat-vec (MatmulKernels.batchMatvec), ffn_down making the GLU as it
 * loads x, rather than the prefill's mat-mat.
 */
import { LAVAPIPE_ICD } from '../../src-main/engine/gpu/software-driver';
import { describeBatchedDecode } from './batched-decode-cases';

// Each test file runs in its own process (pool: 'forks'): this one's Vulkan loader sees only lavapipe.
process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
const { Engine } = await import('../../src-main/engine/engine');

describeBatchedDecode(() => Engine.open(), true);
