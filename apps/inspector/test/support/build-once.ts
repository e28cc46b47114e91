/** Build the page with Vite before the e2e tests, so they always test the current source. */
import { build } from "vite";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const appRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export default async function setup(): Promise<void> {
  await build({ root: appRoot, configFile: resolve(appRoot, "vite.config.ts"), logLevel: "warn" });
}
