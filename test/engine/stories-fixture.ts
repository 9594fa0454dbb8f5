/**
 * stories260K.gguf with the prompt "Once upon a time": BOS plus llama.cpp's tokens, and llama.cpp's
 * greedy continuation (node-llama-cpp 3.21.1, CPU). exactness.test.ts checks the engine against
 * llama.cpp live; these constants let other tests run without loading llama.cpp.
 */
export const STORIES_PROMPT = [1, 403, 407, 261, 378];

export const STORIES_GREEDY = [
  432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265,
  282, 295, 433, 426, 385, 328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426, 338, 391, 266, 267, 337, 335,
  312, 432, 398, 312, 286, 267, 414, 270, 333, 415, 426, 13, 438, 310, 439, 419, 357, 336,
];
