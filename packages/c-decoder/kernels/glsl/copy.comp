#version 450
// Bandwidth baseline for the benchmark: a plain 16-byte-per-thread copy.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 v[]; } src;
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uvec4 v[]; } dst;
layout(push_constant) uniform Params { uint count; uint groupsX; } pc;
void main() {
  uint base = (gl_WorkGroupID.y * pc.groupsX + gl_WorkGroupID.x) * 1024u + gl_LocalInvocationIndex;
  for (uint k = 0u; k < 4u; k++) {
    uint i = base + k * 256u;
    if (i < pc.count) dst.v[i] = src.v[i];
  }
}
