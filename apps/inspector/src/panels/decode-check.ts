/** Decode check panel: each decoder's result, whether CPU and WebGPU agree bit for bit, the manifest's hashes. */
import { decodedSha256, sha256Hex } from "@sgfp4/format";
import { $, esc } from "../dom";
import { firstDifference, floatBitsHex } from "../conformance";
import type { Opened, Page } from "../state";

export function compareDecodes({ state }: Page): void {
  const a = state.decodes.CPU;
  const b = state.decodes.WebGPU;
  if (a?.status !== "ok" || b?.status !== "ok") {
    const reason =
      b?.status === "unavailable"
        ? `no WebGPU comparison: ${b.message}`
        : a?.status === "failed" && b?.status === "failed"
          ? a.code === b.code
            ? `both decoders refused the stream with ${a.code}`
            : `the decoders refused with different codes: CPU ${a.code}, WebGPU ${b.code}`
          : "one decoder failed; nothing to compare";
    state.agreement = { equal: a?.status === "failed" && b?.status === "failed" && a.code === b.code, reason };
    return;
  }
  const d = firstDifference(a.out!, b.out!);
  if (d < 0) state.agreement = { equal: true };
  else {
    const cols = state.opened!.shape[1];
    state.agreement = { equal: false, index: d, row: Math.floor(d / cols), col: d % cols, cpuBits: floatBitsHex(a.out!, d), gpuBits: floatBitsHex(b.out!, d) };
  }
}

export function renderDecoders({ state, decoders }: Page): void {
  const { decodes, agreement } = state;
  $("decoders").querySelector("tbody")!.innerHTML = decoders.list
    .map((b) => {
      const d = decodes[b.name];
      if (!d) return `<tr data-backend="${b.name}"><td>${b.name}</td><td class="skip">waiting</td><td></td><td></td></tr>`;
      const cls = d.status === "ok" ? "pass" : d.status === "failed" ? "fail" : "skip";
      const result = d.status === "ok" ? `decoded ${d.out!.length} values` : d.status === "failed" ? `error ${d.code}` : d.status;
      const detail = d.status === "ok" ? (b === decoders.cpu && decoders.cpu.label ? decoders.cpu.label : (decoders.detail.get(b.name) ?? "")) : (d.message ?? "");
      return `<tr data-backend="${b.name}"><td>${b.name}</td><td class="${cls}">${esc(result)}</td><td>${d.ms !== undefined ? d.ms.toFixed(1) + " ms" : ""}</td><td class="small">${esc(detail)}</td></tr>`;
    })
    .join("");
  const p = $("agreement");
  if (!agreement) {
    p.textContent = state.status === "decoding" ? "decoding..." : "";
    p.className = "";
  } else if (agreement.reason) {
    p.textContent = agreement.reason;
    p.className = agreement.equal ? "pass" : "skip";
  } else if (agreement.equal) {
    p.textContent = `CPU and WebGPU agree bit for bit on all ${decodes.CPU!.out!.length} values.`;
    p.className = "pass";
  } else {
    p.textContent = `CPU and WebGPU differ: first at element ${agreement.index} (row ${agreement.row}, col ${agreement.col}): CPU ${agreement.cpuBits}, WebGPU ${agreement.gpuBits}.`;
    p.className = "fail";
  }
}

export function renderAttestation({ state }: Page, o: Opened): void {
  const el = $("attestation");
  const e = o.manifestEntry;
  if (!e) {
    el.textContent = "";
    return;
  }
  const lines = [`manifest container sha256: ${sha256Hex(o.bytes) === e.sha256.container ? "matches" : "DIFFERS"}`];
  const out = state.decodes.CPU?.out ?? state.decodes.WebGPU?.out;
  if (out) lines.push(`manifest decoded sha256: ${decodedSha256(out) === e.sha256.decoded ? "matches" : "DIFFERS"}`);
  el.textContent = lines.join("; ");
}
