// Types of bench/quality/report.mjs for the tests (the benchmark itself is plain JavaScript).
export interface QualityRow { input: string; method: string; name: string; setting: string; bpw: number; snrDb: number; skipped?: string; invalid?: number; mismatched?: number; task?: unknown }
export interface QualityResult {
  meta: { command: string; date: string; machine: string; node: string; encoderVersion: string; commit: string; encoderOptions: Record<string, unknown> };
  inputs: { name: string; description?: string; skipped?: string }[];
  rows: QualityRow[];
  vad: { description: string; recordings: string[] } | null;
}
export function parts(result: QualityResult): Record<string, string>;
export function markdown(result: QualityResult): string;
export function splice(doc: string, result: QualityResult): string;
