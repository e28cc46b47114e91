import { cp, stat } from "node:fs/promises";
import { createReadStream, existsSync } from "node:fs";
import { dirname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin } from "vite";

const here = dirname(fileURLToPath(import.meta.url));
/** The golden vectors (VECTORS.md folder) the page runs with "Run the bundled golden vectors". */
const vectorsDir = resolve(process.env.SGFP4_VECTORS_DIR ?? join(here, "../../golden-vectors/vectors"));

/** Serve the vectors folder at ./vectors/ in dev, copy it into dist/vectors at build time. */
function goldenVectors(): Plugin {
  let outDir = "dist";
  return {
    name: "sgfp4-golden-vectors",
    configResolved(c) {
      outDir = resolve(c.root, c.build.outDir);
    },
    configureServer(server) {
      server.middlewares.use("/vectors", (req, res, next) => {
        const rel = decodeURIComponent((req.url ?? "/").split("?")[0]!);
        const file = normalize(join(vectorsDir, rel));
        if (!file.startsWith(vectorsDir + sep)) return next();
        stat(file).then(
          (s) => {
            if (!s.isFile()) return next();
            res.setHeader("Content-Type", file.endsWith(".json") ? "application/json" : "application/octet-stream");
            createReadStream(file).pipe(res);
          },
          () => next(),
        );
      });
    },
    async closeBundle() {
      if (existsSync(join(vectorsDir, "index.json"))) await cp(vectorsDir, join(outDir, "vectors"), { recursive: true });
      else this.warn(`no golden vectors at ${vectorsDir}: the bundled-vectors button will say so`);
    },
  };
}

export default defineConfig({
  base: "./",
  plugins: [goldenVectors()],
  worker: { format: "es" },
  build: { target: "es2022", sourcemap: true },
  server: { host: "127.0.0.1" },
  preview: { host: "127.0.0.1" },
});
