{
  "targets": [
    {
      "target_name": "sgfp4_vulkan",
      "sources": [
        "native/src/addon.cpp",
        "native/src/addon_args.cpp",
        "native/src/buffer_pool.cpp",
        "native/src/decode_plan.cpp",
        "native/src/decode_worker.cpp",
        "native/src/host_copy.cpp",
        "native/src/sgfp4_parse.cpp",
        "native/src/sgfp4_parse_exact.cpp",
        "native/src/vk_decode.cpp",
        "native/src/vk_device.cpp",
        "native/src/vk_loader.cpp",
        "native/src/vk_staged.cpp"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!(node -p \"require('path').join(require('path').dirname(require.resolve('@sgfp4/format/package.json')),'generated')\")",
        "<(module_root_dir)/native/gen"
      ],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-O2", "-Wall", "-Wextra", "-Wno-missing-field-initializers"],
      "libraries": ["-ldl", "-pthread"],
      "ldflags": ["-static-libstdc++", "-static-libgcc"]
    }
  ]
}
