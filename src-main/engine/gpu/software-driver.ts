import { existsSync } from 'node:fs';

/** Debian's chromium ships SwiftShader, a software Vulkan driver: the GPU of machines without one. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
/**
 * Mesa's lavapipe, the other software Vulkan driver (with shader-f16). Dawn needs Mesa ≥ 25:
 * on Debian 12, mesa-vulkan-drivers from bookworm-backports (its own Mesa 22 is refused).
 */
export const LAVAPIPE_ICD = '/usr/share/vulkan/icd.d/lvp_icd.json';
/** What to install when LAVAPIPE_ICD is missing. */
export const LAVAPIPE_INSTALL =
  'add bookworm-backports to apt sources, then apt-get install -t bookworm-backports mesa-vulkan-drivers (see .ci/run)';

/**
 * The software Vulkan driver to fall back on when no adapter answers: lavapipe first (faster,
 * with shader-f16), else SwiftShader; undefined when neither is installed.
 */
export function installedSoftwareIcd(): string | undefined {
  return [LAVAPIPE_ICD, SWIFTSHADER_ICD].find((icd) => existsSync(icd));
}

/** The user named the Vulkan drivers to use: Gufo never picks another behind their back. */
export function vulkanDriversChosen(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.VK_ICD_FILENAMES || env.VK_DRIVER_FILES);
}
