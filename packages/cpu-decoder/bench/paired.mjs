#!/usr/bin/env node
// Paired A/B of decodeInto a createOutput() array: this build against another (BEFORE_DIR holds its
// index.js, e.g. a bundle made from an older commit, see BENCHMARKS.md run 4), with Float32Array.set
// as the baseline. Each of 15 rounds times ours, before and set back to back, so the per-round
// ratio before/ours is little affected by load changes on a shared box; the median is printed.
//   BEFORE_DIR=/abs/dir node bench/paired.mjs 16      (size in MiB; tensors [n/1024, 1024])
// Not a test: it prints numbers.
import { writeV2, writeV1 } from "@sgfp4/format";
import * as ours from "../dist/index.js";
const before = await import(process.env.BEFORE_DIR + "/index.js");
const mib=+process.argv[2]||16, COLS=1024, rows=mib*256, B=rows/64*16;
let seed=12345; const rnd=()=>((seed=(Math.imul(seed,1103515245)+12345)>>>0)/2**32);
const randomBytes=(n)=>Uint8Array.from({length:n},()=>(rnd()*256)|0);
const pay={64:[0,1].map(m=>randomBytes(m?1024:2048))}; for(const s of [4,8,16,32]) pay[s]=[randomBytes(s*s/2),randomBytes(s*s/4)];
const half=()=>0x3000+((rnd()*0x800)|0); const biasV2=()=>(0xa000+((rnd()*0x1000)|0))&0xfff0;
const leaf=(size)=>{const mode=rnd()<0.5?0:1; return {mode,scaleBits:half(),biasBits:biasV2(),payload:pay[size][mode]};};
const MIXED_TREE=[["leaf","leaf","leaf",[["leaf","leaf","leaf","leaf"],"leaf","leaf","leaf"]],"leaf",[["leaf","leaf","leaf","leaf"],"leaf","leaf","leaf"],"leaf"];
function ms(tree,size=64,out=[]){ if(tree==="leaf") out.push(size); else for(const t of tree) ms(t,size/2,out); return out;}
const MS=ms(MIXED_TREE);
const v2=writeV2({shape:[rows,COLS],records:Array.from({length:B},(_,b)=>{const layout=[0,1,2,3,4,5][b%6]; if(layout===4) return {layout,tree:MIXED_TREE,leaves:MS.map(leaf)}; const size={0:64,1:32,2:16,3:8,5:4}[layout]; return {layout,leaves:Array.from({length:(64/size)**2},()=>leaf(size))};})});
// Encoder-like MIXED records: random quadtrees (each node below the root split with probability
// 0.6), ~70 leaves a record, mostly 4x4 and 8x8, as the encoder writes at tight thresholds.
function randomTree(size, depth) {
  if (size === 4) return "leaf";
  if (depth > 0 && rnd() >= 0.6) return "leaf";
  return [0, 1, 2, 3].map(() => randomTree(size / 2, depth + 1));
}
const mixedHeavy=writeV2({shape:[rows,COLS],records:Array.from({length:B},()=>{const tree=randomTree(64,0); return {layout:4,tree,leaves:ms(tree).map(leaf)};})});
const v1=writeV1({shape:[rows,COLS],blocks:Array.from({length:B},()=>({mode:0,scaleBits:half(),biasBits:0xb000,payload:pay[64][0]}))});
const src=new Float32Array(rows*COLS).fill(1.5), warm=new Float32Array(rows*COLS);
for (const [name, bytes, profile] of [["v1 FP4", v1, "v1"], ["v2 mix", v2, "v2"], ["v2 random MIXED", mixedHeavy, "v2"]]) {
  const o={profile,shape:[rows,COLS]}; const a=ours.createOutput(o.shape), b=before.createOutput(o.shape);
  const fs={ours:()=>ours.decodeInto(bytes,o,a), before:()=>before.decodeInto(bytes,o,b), set:()=>warm.set(src)};
  for (const f of Object.values(fs)) for (let t0=performance.now(); performance.now()-t0<300;) f();
  const n=mib>=64?3:10, ratios=[], best={ours:1e9,before:1e9,set:1e9};
  for (let r=0;r<15;r++){ const tr={}; for (const [k,f] of Object.entries(fs)) { const t0=performance.now(); for(let i=0;i<n;i++) f(); tr[k]=(performance.now()-t0)/n; best[k]=Math.min(best[k],tr[k]); } ratios.push(tr.before/tr.ours); }
  ratios.sort((x,y)=>x-y);
  console.log(`${mib} MiB ${name}: set ${best.set.toFixed(3)} | ours ${best.ours.toFixed(3)} (${(best.set/best.ours).toFixed(2)}) | before ${best.before.toFixed(3)} (${(best.set/best.before).toFixed(2)}) | paired speed-up median ${ratios[7].toFixed(2)} [${ratios[0].toFixed(2)}-${ratios[14].toFixed(2)}]`);
}
