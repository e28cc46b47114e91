#!/usr/bin/env node
import { main } from "./program.js";

// exitCode rather than exit(), so stdout is flushed when piped
main(process.argv).then((code) => {
  process.exitCode = code;
});
