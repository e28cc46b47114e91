declare module "node-gyp-build" {
  /** Loads the addon from build/Release or prebuilds/<platform>-<arch> under `dir`. */
  function nodeGypBuild(dir: string): unknown;
  export default nodeGypBuild;
}
