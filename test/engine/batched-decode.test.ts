/** Batched decode across slots (batched-decode-cases.ts) on the test adapter. */
import { Engine } from '../../src-main/engine/engine';
import { describeBatchedDecode } from './batched-decode-cases';

describeBatchedDecode(() => Engine.open(), false);
