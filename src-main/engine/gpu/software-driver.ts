/** Debian's chromium ships SwiftShader, a software Vulkan driver: the GPU of machines without one. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
