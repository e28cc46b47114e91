/** A progress bar on stderr for the long model commands. */
type Progress = (done: number, total: number, name: string) => void;

/** A progress bar on stderr, drawn only on a terminal and only once the work has run 1 s. */
export function progressBar(label: string): { update: Progress; done: () => void } {
  const start = Date.now();
  let drawn = false;
  let last = 0;
  const tty = process.stderr.isTTY === true;
  return {
    update(done, total, name) {
      const now = Date.now();
      if (!tty || now - start < 1000 || now - last < 100 || total <= 0) return;
      last = now;
      drawn = true;
      const frac = Math.min(1, done / total);
      const width = 30;
      const filled = Math.round(frac * width);
      const secs = (now - start) / 1000;
      const eta = frac > 0 ? Math.max(0, secs / frac - secs) : 0;
      const line = `${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${(frac * 100).toFixed(0).padStart(3)}% ${secs.toFixed(0)}s eta ${eta.toFixed(0)}s ${name}`;
      process.stderr.write(`\r${line.slice(0, (process.stderr.columns ?? 100) - 1).padEnd(Math.min(99, (process.stderr.columns ?? 100) - 1))}`);
    },
    done() {
      if (drawn) process.stderr.write("\n");
      drawn = false;
    },
  };
}
