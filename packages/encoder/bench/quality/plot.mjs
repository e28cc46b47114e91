// bpw-SNR plot (SVG): one panel per input, the encoder's settings as a line (the default as a
// ring) and every baseline as points, series of one kind joined by a line.
const SERIES = [
  { label: "sgfp4 v2 --bpw", color: "#2ca02c", match: (r) => r.method === "sgfp4" && r.setting !== "default", line: true, r: 3 },
  { label: "sgfp4 v2 default", color: "#2ca02c", match: (r) => r.method === "sgfp4" && r.setting === "default", ring: true, r: 5 },
  { label: "ggml Q4_0", color: "#d62728", match: (r) => r.name === "ggml Q4_0", r: 4 },
  { label: "ggml Q4_1", color: "#ff7f0e", match: (r) => r.name === "ggml Q4_1", r: 4 },
  { label: "ggml Q4_K", color: "#9467bd", match: (r) => r.name === "ggml Q4_K", r: 4 },
  { label: "4-bit groups min-max (g128..g32)", color: "#8c564b", match: (r) => /^4-bit g\d+ min-max$/.test(r.name), line: true, r: 2.5 },
  { label: "4-bit groups searched", color: "#1f77b4", match: (r) => /^4-bit g\d+ searched$/.test(r.name), line: true, r: 2.5 },
  { label: "3-bit groups searched", color: "#17becf", match: (r) => /^3-bit g\d+ searched$/.test(r.name), line: true, r: 2.5 },
  { label: "2-bit groups searched", color: "#7f7f7f", match: (r) => /^2-bit g\d+ searched$/.test(r.name), line: true, r: 2.5 },
];

export function svg(result) {
  const inputs = result.inputs.filter((i) => !i.skipped).map((i) => i.name);
  const PW = 300, PH = 220, M = 44, COLS = 3;
  const W = COLS * (PW + M) + M;
  const H = Math.ceil(inputs.length / COLS) * (PH + M + 20) + 40 + 18 * Math.ceil(SERIES.length / 3) + 20;
  let out = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="10">\n<rect width="100%" height="100%" fill="white"/>\n`;
  out += `<text x="${M}" y="18" font-size="14">SNR (dB) vs bits per weight: SGFP4 v2 and baselines, ${result.meta.command}</text>\n`;
  inputs.forEach((input, i) => {
    const ox = M + (i % COLS) * (PW + M);
    const oy = 40 + Math.floor(i / COLS) * (PH + M + 20);
    const pts = result.rows.filter((r) => r.input === input && Number.isFinite(r.snrDb));
    const xs = [2, Math.max(5.5, Math.ceil(2 * Math.max(...pts.map((p) => p.bpw)) + 0.4) / 2)];
    const ys = [Math.floor(Math.min(...pts.map((p) => p.snrDb))) - 1, Math.ceil(Math.max(...pts.map((p) => p.snrDb))) + 1];
    const X = (b) => ox + ((b - xs[0]) / (xs[1] - xs[0])) * PW;
    const Y = (s) => oy + PH - ((s - ys[0]) / (ys[1] - ys[0])) * PH;
    out += `<g><rect x="${ox}" y="${oy}" width="${PW}" height="${PH}" fill="none" stroke="#888"/>\n<text x="${ox + 4}" y="${oy - 4}" font-size="12">${input}</text>\n`;
    for (let b = xs[0]; b <= xs[1]; b += 0.5) out += `<line x1="${X(b)}" x2="${X(b)}" y1="${oy}" y2="${oy + PH}" stroke="#eee"/><text x="${X(b) - 6}" y="${oy + PH + 12}">${b}</text>\n`;
    const step = Math.max(1, Math.round((ys[1] - ys[0]) / 6));
    for (let s = ys[0]; s <= ys[1]; s += step) out += `<line x1="${ox}" x2="${ox + PW}" y1="${Y(s)}" y2="${Y(s)}" stroke="#eee"/><text x="${ox - 22}" y="${Y(s) + 3}">${s}</text>\n`;
    for (const s of SERIES) {
      const sp = pts.filter(s.match).sort((a, b) => a.bpw - b.bpw);
      if (s.line && sp.length > 1) out += `<polyline fill="none" stroke="${s.color}" stroke-width="1.5" points="${sp.map((p) => `${X(p.bpw).toFixed(1)},${Y(p.snrDb).toFixed(1)}`).join(" ")}"/>\n`;
      for (const p of sp) {
        const paint = s.ring ? `fill="none" stroke="${s.color}" stroke-width="2"` : `fill="${s.color}"`;
        out += `<circle cx="${X(p.bpw).toFixed(1)}" cy="${Y(p.snrDb).toFixed(1)}" r="${s.r}" ${paint}><title>${p.name}: ${p.bpw.toFixed(3)} bpw, ${p.snrDb.toFixed(2)} dB</title></circle>\n`;
      }
    }
    out += `<text x="${ox + PW / 2 - 30}" y="${oy + PH + 26}">bits per weight</text></g>\n`;
  });
  SERIES.forEach((s, i) => {
    const lx = M + (i % 3) * 260;
    const ly = H - 18 * Math.ceil(SERIES.length / 3) + Math.floor(i / 3) * 18;
    const paint = s.ring ? `fill="none" stroke="${s.color}" stroke-width="2"` : `fill="${s.color}"`;
    out += `<circle cx="${lx + 5}" cy="${ly - 3}" r="5" ${paint}/><text x="${lx + 14}" y="${ly + 1}">${s.label}</text>\n`;
  });
  return `${out}</svg>\n`;
}
